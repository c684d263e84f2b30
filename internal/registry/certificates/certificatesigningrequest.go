package certificates

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/orca-project/orca/internal/auth/certificates"
	"github.com/orca-project/orca/internal/registry"
)

// Certificatesigningrequests is the certificatesigningrequests resource.
// Its spec is fixed at creation; approval conditions are written only
// through /approval and the certificate only through /status, so that
// approving and signing can be granted apart.
var Certificatesigningrequests = &registry.Resource{
	Group: certificatesv1.GroupName, Version: "v1", Name: "certificatesigningrequests",
	Singular: "certificatesigningrequest", Kind: "CertificateSigningRequest",
	ShortNames:             []string{"csr"},
	Status:                 true,
	New:                    func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} },
	NewList:                func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} },
	Default:                registry.Typed(defaultCSR),
	PrepareForCreate:       registry.Typed(prepareCSRForCreate),
	PrepareForCreateBy:     prepareCSRForCreateBy,
	PrepareForUpdate:       registry.Typed2(prepareCSRForUpdate),
	PrepareForStatusUpdate: registry.Typed2(prepareCSRForStatusUpdate),
	ValidateName:           func(string, bool) []string { return nil },
	Validate:               registry.TypedValidate(validateCSR),
	ValidateUpdate:         registry.TypedValidateUpdate(validateCSRUpdate),
	ValidateStatusUpdate:   registry.TypedValidateUpdate(validateCSRStatusUpdate),
	Subresources: map[string]*registry.Subresource{
		"approval": {
			PrepareForUpdate: registry.Typed2(prepareCSRForApprovalUpdate),
			ValidateUpdate:   registry.TypedValidateUpdate(validateCSRApprovalUpdate),
			Resets:           [][]string{{"spec"}, {"status", "certificate"}},
		},
	},
	Table:  csrTable,
	Fields: csrFields,
}

var csrFields = registry.TypedFields(func(csr *certificatesv1.CertificateSigningRequest) fields.Set {
	return fields.Set{"spec.signerName": csr.Spec.SignerName}
})

// defaultCSR is upstream's v1 defaulting: a condition without a status
// is True.
func defaultCSR(csr *certificatesv1.CertificateSigningRequest) {
	for i := range csr.Status.Conditions {
		if csr.Status.Conditions[i].Status == "" {
			csr.Status.Conditions[i].Status = corev1.ConditionTrue
		}
	}
}

// prepareCSRForCreate makes it explicit that nobody creates a request
// already approved or signed.
func prepareCSRForCreate(csr *certificatesv1.CertificateSigningRequest) {
	csr.Status = certificatesv1.CertificateSigningRequestStatus{}
}

// prepareCSRForCreateBy records the requestor, whatever the client sent:
// approvers and signers rely on it to know who asks.
func prepareCSRForCreateBy(obj runtime.Object, u user.Info) {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
	if u == nil {
		return
	}
	csr.Spec.Username = u.GetName()
	csr.Spec.UID = u.GetUID()
	csr.Spec.Groups = u.GetGroups()
	if extra := u.GetExtra(); len(extra) > 0 {
		csr.Spec.Extra = map[string]certificatesv1.ExtraValue{}
		for k, v := range extra {
			csr.Spec.Extra[k] = v
		}
	}
}

// prepareCSRForUpdate: through the object only metadata changes.
func prepareCSRForUpdate(csr, old *certificatesv1.CertificateSigningRequest) {
	csr.Spec = old.Spec
	csr.Status = old.Status
}

// prepareCSRForStatusUpdate keeps the spec and the approval conditions
// as they are; adding or removing one is then refused by validation.
func prepareCSRForStatusUpdate(csr, old *certificatesv1.CertificateSigningRequest) {
	defaultCSR(csr)
	csr.Spec = old.Spec
	preserveConditions(csr, old, certificatesv1.CertificateApproved)
	preserveConditions(csr, old, certificatesv1.CertificateDenied)
	populateConditionTimestamps(csr, old)
}

// prepareCSRForApprovalUpdate takes only the conditions from the write.
func prepareCSRForApprovalUpdate(csr, old *certificatesv1.CertificateSigningRequest) {
	defaultCSR(csr)
	populateConditionTimestamps(csr, old)
	conditions := csr.Status.Conditions
	csr.Spec = old.Spec
	csr.Status = *old.Status.DeepCopy()
	csr.Status.Conditions = conditions
}

// preserveConditions puts back the old instances of a condition type when
// the write keeps their number.
func preserveConditions(csr, old *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) {
	oldIdx, newIdx := conditionIndices(old, t), conditionIndices(csr, t)
	if len(oldIdx) != len(newIdx) {
		return
	}
	for i, o := range oldIdx {
		csr.Status.Conditions[newIdx[i]] = old.Status.Conditions[o]
	}
}

func conditionIndices(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []int {
	var out []int
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, i)
		}
	}
	return out
}

// nowFunc is replaced by tests.
var nowFunc = metav1.Now

// populateConditionTimestamps sets missing update times to now, and
// missing transition times to the old condition's when its type and
// status are unchanged.
func populateConditionTimestamps(csr, old *certificatesv1.CertificateSigningRequest) {
	now := nowFunc()
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, oc := range old.Status.Conditions {
			if oc.Type == c.Type && oc.Status == c.Status && !oc.LastTransitionTime.IsZero() {
				c.LastTransitionTime = oc.LastTransitionTime
				break
			}
		}
	}
}

var allValidUsages = sets.New(
	certificatesv1.UsageSigning, certificatesv1.UsageDigitalSignature, certificatesv1.UsageContentCommitment,
	certificatesv1.UsageKeyEncipherment, certificatesv1.UsageKeyAgreement, certificatesv1.UsageDataEncipherment,
	certificatesv1.UsageCertSign, certificatesv1.UsageCRLSign, certificatesv1.UsageEncipherOnly,
	certificatesv1.UsageDecipherOnly, certificatesv1.UsageAny, certificatesv1.UsageServerAuth,
	certificatesv1.UsageClientAuth, certificatesv1.UsageCodeSigning, certificatesv1.UsageEmailProtection,
	certificatesv1.UsageSMIME, certificatesv1.UsageIPsecEndSystem, certificatesv1.UsageIPsecTunnel,
	certificatesv1.UsageIPsecUser, certificatesv1.UsageTimestamping, certificatesv1.UsageOCSPSigning,
	certificatesv1.UsageMicrosoftSGC, certificatesv1.UsageNetscapeSGC,
)

// Approved, Denied and Failed conditions may only be True.
var trueOnlyConditions = sets.New(certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed)

// validateCSR is upstream's validation of a request in the v1 API: a
// PKCS#10 request whose signature holds, known and distinct usages, a
// signer name (the legacy one no longer), a duration of at least ten
// minutes, well-formed conditions and certificate.
func validateCSR(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if err := checkRequest(csr.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(spec.Child("request"), csr.Spec.Request, err.Error()))
	}
	if len(csr.Spec.Usages) == 0 {
		errs = append(errs, field.Required(spec.Child("usages"), ""))
	}
	seen := sets.New[certificatesv1.KeyUsage]()
	for i, u := range csr.Spec.Usages {
		if !allValidUsages.Has(u) {
			errs = append(errs, field.NotSupported(spec.Child("usages").Index(i), u, sets.List(allValidUsages)))
		}
	}
	for i, u := range csr.Spec.Usages {
		if seen.Has(u) {
			errs = append(errs, field.Duplicate(spec.Child("usages").Index(i), u))
		}
		seen.Insert(u)
	}
	if csr.Spec.SignerName == certificates.LegacyUnknownSignerName {
		errs = append(errs, field.Invalid(spec.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, certificates.ValidateSignerName(spec.Child("signerName"), csr.Spec.SignerName)...)
	}
	if e := csr.Spec.ExpirationSeconds; e != nil && *e < 600 {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), *e, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateCSRConditions(field.NewPath("status", "conditions"), csr.Status.Conditions)...)
	if err := checkCertificate(csr.Status.Certificate); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
	}
	return errs
}

func checkRequest(pemBytes []byte) error {
	req, err := certificates.ParseCSR(pemBytes)
	if err != nil {
		return err
	}
	return req.CheckSignature()
}

// checkCertificate accepts one or more CERTIFICATE blocks without
// headers; text around them is allowed (RFC 7468, 5.2).
func checkCertificate(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

func validateCSRConditions(fldPath *field.Path, conditions []certificatesv1.CertificateSigningRequestCondition) field.ErrorList {
	var errs field.ErrorList
	seen := map[certificatesv1.RequestConditionType]bool{}
	approved, denied := false, false
	for i, c := range conditions {
		p := fldPath.Index(i)
		if c.Type == "" {
			errs = append(errs, field.Required(p.Child("type"), ""))
		}
		allowed := []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
		if trueOnlyConditions.Has(c.Type) {
			allowed = []string{string(corev1.ConditionTrue)}
		}
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(p.Child("status"), ""))
		case !sets.New(allowed...).Has(string(c.Status)):
			errs = append(errs, field.NotSupported(p.Child("status"), c.Status, allowed))
		}
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
			if denied {
				errs = append(errs, field.Invalid(p.Child("type"), c.Type, "Approved and Denied conditions are mutually exclusive"))
			}
		case certificatesv1.CertificateDenied:
			denied = true
			if approved {
				errs = append(errs, field.Invalid(p.Child("type"), c.Type, "Approved and Denied conditions are mutually exclusive"))
			}
		}
		if seen[c.Type] {
			errs = append(errs, field.Duplicate(p.Child("type"), c.Type))
		}
		seen[c.Type] = true
	}
	return errs
}

// csrUpdateRights say what a write path may change beyond metadata.
type csrUpdateRights struct {
	approval    bool // add Approved or Denied conditions
	certificate bool // set status.certificate
}

func validateCSRUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	return validateCSRChange(csr, old, csrUpdateRights{})
}

func validateCSRStatusUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	return validateCSRChange(csr, old, csrUpdateRights{certificate: true})
}

func validateCSRApprovalUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	return validateCSRChange(csr, old, csrUpdateRights{approval: true})
}

// validateCSRChange is upstream's update validation: Approved, Denied and
// Failed conditions are never removed, approval conditions change only
// through /approval, and a certificate is set once, through /status.
func validateCSRChange(csr, old *certificatesv1.CertificateSigningRequest, rights csrUpdateRights) field.ErrorList {
	var errs field.ErrorList
	conditions := field.NewPath("status", "conditions")
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if len(conditionsOf(csr, t)) < len(conditionsOf(old, t)) {
			errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if !rights.approval {
		for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
			oldC, newC := conditionsOf(old, t), conditionsOf(csr, t)
			switch {
			case len(newC) < len(oldC):
				// Refused above.
			case len(newC) > len(oldC):
				errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not add a condition of type %q", t)))
			case !apiequality.Semantic.DeepEqual(oldC, newC):
				errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not modify a condition of type %q\n%v", t, cmp.Diff(oldC, newC))))
			}
		}
	}
	if !bytes.Equal(csr.Status.Certificate, old.Status.Certificate) {
		certificate := field.NewPath("status", "certificate")
		switch {
		case !rights.certificate:
			errs = append(errs, field.Forbidden(certificate, "updates may not set certificate content"))
		case len(old.Status.Certificate) > 0:
			errs = append(errs, field.Forbidden(certificate, "updates may not modify existing certificate content"))
		}
	}
	return errs
}

func conditionsOf(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}
