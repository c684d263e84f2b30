package certificates

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/auth/certificates"
	"github.com/orca-project/orca/internal/registry"
)

// Upstream's limits on PodCertificateRequests.
const (
	maxStubPKCS10RequestSize    = 10 * 1024
	maxCertificateChainSize     = 100 * 1024
	defaultMaxExpirationSeconds = 24 * 60 * 60
)

// Podcertificaterequests is the podcertificaterequests resource: a
// kubelet's request, for a pod's podCertificate volume, that a signer
// issues through /status.
var Podcertificaterequests = &registry.Resource{
	Group: certificatesv1.GroupName, Version: "v1", Name: "podcertificaterequests",
	Singular: "podcertificaterequest", Kind: "PodCertificateRequest",
	Namespaced: true,
	Status:     true,
	// As upstream's ResetObjectMetaForStatus: a signer writes the
	// outcome, nothing else.
	StatusResetsMetadata: []string{"labels", "annotations", "finalizers", "ownerReferences"},
	New:                  func() runtime.Object { return &certificatesv1.PodCertificateRequest{} },
	NewList:              func() runtime.Object { return &certificatesv1.PodCertificateRequestList{} },
	Default:              registry.Typed(defaultPCR),
	Validate:             registry.TypedValidate(validatePCR),
	ValidateUpdate:       registry.TypedValidateUpdate(validatePCRUpdate),
	ValidateStatusUpdate: registry.TypedValidateUpdate(func(pcr, old *certificatesv1.PodCertificateRequest) field.ErrorList {
		return ValidatePCRStatusUpdate(pcr, old, time.Now())
	}),
	Fields: registry.TypedFields(func(pcr *certificatesv1.PodCertificateRequest) fields.Set {
		return fields.Set{
			"spec.signerName": pcr.Spec.SignerName,
			"spec.podName":    pcr.Spec.PodName,
			"spec.nodeName":   string(pcr.Spec.NodeName),
		}
	}),
}

func defaultPCR(pcr *certificatesv1.PodCertificateRequest) {
	if pcr.Spec.MaxExpirationSeconds == nil {
		pcr.Spec.MaxExpirationSeconds = ptr.To[int32](defaultMaxExpirationSeconds)
	}
}

var (
	stubPath         = field.NewPath("spec", "stubPKCS10Request")
	certChainPath    = field.NewPath("status", "certificateChain")
	notBeforePath    = field.NewPath("status", "notBefore")
	notAfterPath     = field.NewPath("status", "notAfter")
	beginRefreshPath = field.NewPath("status", "beginRefreshAt")
)

// validatePCR checks a new request: names and UIDs of the pod, service
// account and node, the signer, the lifetime bounds, and a PKCS#10 stub
// whose signature proves the kubelet holds the key.
func validatePCR(pcr *certificatesv1.PodCertificateRequest) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	errs = append(errs, certificates.ValidateSignerName(spec.Child("signerName"), pcr.Spec.SignerName)...)
	if pcr.Spec.UnverifiedUserAnnotations != nil {
		errs = append(errs, certificates.ValidateUserAnnotations(pcr.Spec.UnverifiedUserAnnotations, spec.Child("unverifiedUserAnnotations"))...)
	}
	for _, msg := range apivalidation.NameIsDNSSubdomain(pcr.Spec.PodName, false) {
		errs = append(errs, field.Invalid(spec.Child("podName"), pcr.Spec.PodName, msg))
	}
	errs = append(errs, validateUID(spec.Child("podUID"), string(pcr.Spec.PodUID))...)
	for _, msg := range apivalidation.NameIsDNSSubdomain(pcr.Spec.ServiceAccountName, false) {
		errs = append(errs, field.Invalid(spec.Child("serviceAccountName"), pcr.Spec.ServiceAccountName, msg))
	}
	errs = append(errs, validateUID(spec.Child("serviceAccountUID"), string(pcr.Spec.ServiceAccountUID))...)
	for _, msg := range apivalidation.NameIsDNSSubdomain(string(pcr.Spec.NodeName), false) {
		errs = append(errs, field.Invalid(spec.Child("nodeName"), pcr.Spec.NodeName, msg))
	}
	errs = append(errs, validateUID(spec.Child("nodeUID"), string(pcr.Spec.NodeUID))...)

	if pcr.Spec.MaxExpirationSeconds == nil {
		return append(errs, field.Required(spec.Child("maxExpirationSeconds"), "must be set"))
	}
	errs = append(errs, certificates.ValidateMaxExpirationSeconds(spec.Child("maxExpirationSeconds"), pcr.Spec.SignerName, *pcr.Spec.MaxExpirationSeconds)...)

	if len(pcr.Spec.StubPKCS10Request) > maxStubPKCS10RequestSize {
		return append(errs, field.TooLong(stubPath, "", maxStubPKCS10RequestSize))
	}
	req, err := x509.ParseCertificateRequest(pcr.Spec.StubPKCS10Request)
	if err != nil {
		return append(errs, field.Invalid(stubPath, field.OmitValueType{}, "must be a valid DER-encoded PKCS#10 certificate request"))
	}
	if err := req.CheckSignature(); err != nil {
		return append(errs, field.Invalid(stubPath, field.OmitValueType{}, "could not verify the request's signature"))
	}
	return append(errs, validateKeyType(stubPath, req.PublicKey)...)
}

func validateUID(fldPath *field.Path, uid string) field.ErrorList {
	switch {
	case uid == "":
		return field.ErrorList{field.Invalid(fldPath, uid, "must not be empty")}
	case len(uid) > 128:
		return field.ErrorList{field.TooLong(fldPath, uid, 128)}
	}
	return nil
}

// validateKeyType accepts the key types kubelets generate: RSA 3072 and
// 4096, ECDSA P-256, P-384 and P-521, and Ed25519.
func validateKeyType(fldPath *field.Path, key any) field.ErrorList {
	switch k := key.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() && k.Curve != elliptic.P384() && k.Curve != elliptic.P521() {
			return field.ErrorList{field.Invalid(fldPath, "curve "+k.Curve.Params().Name, "elliptic public keys must use curve P256, P384 or P521")}
		}
	case *rsa.PublicKey:
		if bits := k.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(fldPath, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{}, "unknown public key type; supported types are Ed25519, ECDSA, and RSA")}
	}
	return nil
}

// validatePCRUpdate: the spec never changes; the status is written only
// through /status (the server keeps it).
func validatePCRUpdate(pcr, old *certificatesv1.PodCertificateRequest) field.ErrorList {
	return apivalidation.ValidateImmutableField(pcr.Spec, old.Spec, field.NewPath("spec"))
}

// ValidatePCRStatusUpdate is upstream's check of a signer's answer, at
// now: one terminal condition (Issued, Denied or Failed), after which
// nothing changes; a denial or failure carries nothing else; an issued
// chain starts with a certificate for the requested key whose times match
// the status, lasting between an hour and maxExpirationSeconds, with a
// refresh time at least ten minutes inside its validity.
func ValidatePCRStatusUpdate(pcr, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	var errs field.ErrorList
	conditions := field.NewPath("status", "conditions")
	known := []string{certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed}
	terminal := 0
	for i, c := range pcr.Status.Conditions {
		p := conditions.Index(i)
		switch c.Type {
		case known[0], known[1], known[2]:
			terminal++
			if terminal > 1 {
				errs = append(errs, field.Invalid(p.Child("type"), c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
			}
			if c.Status != metav1.ConditionTrue {
				errs = append(errs, field.NotSupported(p.Child("status"), c.Status, []metav1.ConditionStatus{metav1.ConditionTrue}))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), c.Type, known))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(pcr.Status.Conditions, conditions)...)
	if len(errs) > 0 {
		return errs
	}

	if pcrHas(old, known...) {
		return immutable(pcr.Status, old.Status, field.NewPath("status"), "immutable after PodCertificateRequest is issued, denied, or failed")
	}
	if pcrHas(pcr, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed) {
		want := certificatesv1.PodCertificateRequestStatus{Conditions: pcr.Status.Conditions}
		return immutable(pcr.Status, want, field.NewPath("status"), "non-condition status fields must be empty when denying or failing the PodCertificateRequest")
	}
	if !pcrHas(pcr, certificatesv1.PodCertificateRequestConditionTypeIssued) {
		return immutable(pcr.Status, old.Status, field.NewPath("status"), `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)
	}
	return validateIssued(pcr, old, now)
}

func validateIssued(pcr, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	var errs field.ErrorList
	st := pcr.Status
	if len(st.CertificateChain) > maxCertificateChainSize {
		return append(errs, field.TooLong(certChainPath, "", maxCertificateChainSize))
	}
	leafBlock, rest := pem.Decode([]byte(st.CertificateChain))
	if leafBlock == nil {
		return append(errs, field.Invalid(certChainPath, st.CertificateChain, "issued certificate chain must contain at least one certificate"))
	}
	if leafBlock.Type != "CERTIFICATE" {
		return append(errs, field.Invalid(certChainPath, st.CertificateChain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks"))
	}
	leaf, err := x509.ParseCertificate(leafBlock.Bytes)
	if err != nil {
		return append(errs, field.Invalid(certChainPath, st.CertificateChain, "leaf certificate does not parse as valid X.509"))
	}
	for _, name := range leaf.DNSNames {
		switch {
		case name == "":
			errs = append(errs, field.Invalid(certChainPath, name, "leaf certificate should not contain empty DNSName"))
		case strings.Contains(name, ".."):
			errs = append(errs, field.Invalid(certChainPath, name, "leaf certificate's DNSName should not contain '..'"))
		case strings.HasPrefix(name, ".") || strings.HasSuffix(name, "."):
			errs = append(errs, field.Invalid(certChainPath, name, "leaf certificate's DNSName should not start or end with '.'"))
		}
	}
	for _, addr := range leaf.EmailAddresses {
		if _, err := mail.ParseAddress(addr); err != nil {
			errs = append(errs, field.Invalid(certChainPath, addr, "leaf certificate should not contain invalid EmailAddress"))
		}
	}
	req, err := x509.ParseCertificateRequest(old.Spec.StubPKCS10Request)
	if err != nil {
		return append(errs, field.Invalid(stubPath, field.OmitValueType{}, "must be a valid DER-encoded PKCS#10 certificate request"))
	}
	if k, ok := req.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); !ok || !k.Equal(leaf.PublicKey) {
		return append(errs, field.Invalid(certChainPath, st.CertificateChain, "leaf certificate was not issued to the requested public key"))
	}
	if st.NotBefore == nil {
		errs = append(errs, field.Required(notBeforePath, "must be present and consistent with the issued certificate"))
	}
	if st.NotAfter == nil {
		errs = append(errs, field.Required(notAfterPath, "must be present and consistent with the issued certificate"))
	}
	if st.BeginRefreshAt == nil {
		errs = append(errs, field.Required(beginRefreshPath, "must be present and in the range [notbefore+10min, notafter-10min]"))
	}
	if len(errs) > 0 {
		return errs
	}
	switch lifetime := leaf.NotAfter.Sub(leaf.NotBefore); {
	case !st.NotBefore.Time.Equal(leaf.NotBefore):
		errs = append(errs, field.Invalid(notBeforePath, st.NotBefore.Time, "must be set to the NotBefore time encoded in the leaf certificate"))
	case !near(st.NotBefore.Time, now, 5*time.Minute):
		errs = append(errs, field.Invalid(notBeforePath, st.NotBefore.Time, "must be set to within 5 minutes of kube-apiserver's current time"))
	case !st.NotAfter.Time.Equal(leaf.NotAfter):
		errs = append(errs, field.Invalid(notAfterPath, st.NotAfter.Time, "must be set to the NotAfter time encoded in the leaf certificate"))
	case lifetime < time.Hour:
		errs = append(errs, field.Invalid(certChainPath, lifetime, "leaf certificate lifetime must be >= 1 hour"))
	case lifetime > time.Duration(*pcr.Spec.MaxExpirationSeconds)*time.Second:
		errs = append(errs, field.Invalid(certChainPath, lifetime, fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%v)", *pcr.Spec.MaxExpirationSeconds)))
	case st.BeginRefreshAt.Time.Before(st.NotBefore.Time.Add(10 * time.Minute)):
		errs = append(errs, field.Invalid(beginRefreshPath, st.BeginRefreshAt.Time, "must be at least 10 minutes after status.notBefore"))
	case st.BeginRefreshAt.Time.After(st.NotAfter.Time.Add(-10 * time.Minute)):
		errs = append(errs, field.Invalid(beginRefreshPath, st.BeginRefreshAt.Time, "must be at least 10 minutes before status.notAfter"))
	}
	if len(errs) > 0 {
		return errs
	}
	// Intermediates cannot be verified without the root, but they must at
	// least be certificates.
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil
		}
		if b.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(certChainPath, st.CertificateChain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")}
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return field.ErrorList{field.Invalid(certChainPath, st.CertificateChain, "intermediate certificate does not parse as valid X.509")}
		}
	}
}

func pcrHas(pcr *certificatesv1.PodCertificateRequest, types ...string) bool {
	for _, c := range pcr.Status.Conditions {
		for _, t := range types {
			if c.Type == t && c.Status == metav1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

func immutable(a, b any, fldPath *field.Path, detail string) field.ErrorList {
	if apiequality.Semantic.DeepEqual(a, b) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{}, detail)}
}

func near(a, b time.Time, skew time.Duration) bool {
	return a.After(b.Add(-skew)) && a.Before(b.Add(skew))
}
