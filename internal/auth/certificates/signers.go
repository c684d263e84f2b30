package certificates

import (
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Upstream's messages, which end up in a Failed condition.
var (
	errOrganizationNotSystemNodes = errors.New("subject organization is not system:nodes")
	errCommonNameNotSystemNode    = errors.New("subject common name does not begin with system:node:")
	errDNSOrIPSANRequired         = errors.New("DNS or IP subjectAltName is required")
	errDNSSANNotAllowed           = errors.New("DNS subjectAltNames are not allowed")
	errEmailSANNotAllowed         = errors.New("Email subjectAltNames are not allowed")
	errIPSANNotAllowed            = errors.New("IP subjectAltNames are not allowed")
	errURISANNotAllowed           = errors.New("URI subjectAltNames are not allowed")
)

// Each kubelet signer accepts its usages with or without key
// encipherment, which only RSA keys use.
var (
	kubeletServingUsages      = usageSet(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth)
	kubeletServingUsagesNoRSA = usageSet(certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth)
	kubeletClientUsages       = usageSet(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth)
	kubeletClientUsagesNoRSA  = usageSet(certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)
)

func usageSet(usages ...certificatesv1.KeyUsage) sets.Set[string] {
	s := sets.New[string]()
	for _, u := range usages {
		s.Insert(string(u))
	}
	return s
}

// ValidateKubeletServingCSR is the kubernetes.io/kubelet-serving signer's
// check: a node's identity (O=system:nodes, CN=system:node:NAME), DNS or
// IP names only, and serving usages.
func ValidateKubeletServingCSR(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return errOrganizationNotSystemNodes
	}
	if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		return errDNSOrIPSANRequired
	}
	if len(req.EmailAddresses) > 0 {
		return errEmailSANNotAllowed
	}
	if len(req.URIs) > 0 {
		return errURISANNotAllowed
	}
	if u := usageSet(usages...); !kubeletServingUsages.Equal(u) && !kubeletServingUsagesNoRSA.Equal(u) {
		return fmt.Errorf("usages did not match %v", sets.List(kubeletServingUsages))
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errCommonNameNotSystemNode
	}
	return nil
}

// ValidateKubeletClientCSR is the kubernetes.io/kube-apiserver-client-kubelet
// signer's check: a node's identity, no subject alternative names, and
// client usages.
func ValidateKubeletClientCSR(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return errOrganizationNotSystemNodes
	}
	switch {
	case len(req.DNSNames) > 0:
		return errDNSSANNotAllowed
	case len(req.EmailAddresses) > 0:
		return errEmailSANNotAllowed
	case len(req.IPAddresses) > 0:
		return errIPSANNotAllowed
	case len(req.URIs) > 0:
		return errURISANNotAllowed
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errCommonNameNotSystemNode
	}
	if u := usageSet(usages...); !kubeletClientUsages.Equal(u) && !kubeletClientUsagesNoRSA.Equal(u) {
		return fmt.Errorf("usages did not match %v", sets.List(kubeletClientUsages))
	}
	return nil
}

// ValidateAPIServerClientUsages is the kubernetes.io/kube-apiserver-client
// signer's check: client auth, and nothing beyond digital signature and
// key encipherment. The subject is the approver's to judge.
func ValidateAPIServerClientUsages(usages []certificatesv1.KeyUsage) error {
	hasClientAuth := false
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment:
		case certificatesv1.UsageClientAuth:
			hasClientAuth = true
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !hasClientAuth {
		return fmt.Errorf("missing required usage for client certificate: %s", certificatesv1.UsageClientAuth)
	}
	return nil
}

// CheckForSigner applies the check of a built-in signer to a request. ok
// is false for a signer name that is not built in; err says why a
// built-in signer refuses the request.
func CheckForSigner(signerName string, req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) (ok bool, err error) {
	switch signerName {
	case certificatesv1.KubeletServingSignerName:
		return true, ValidateKubeletServingCSR(req, usages)
	case certificatesv1.KubeAPIServerClientKubeletSignerName:
		return true, ValidateKubeletClientCSR(req, usages)
	case certificatesv1.KubeAPIServerClientSignerName:
		return true, ValidateAPIServerClientUsages(usages)
	case LegacyUnknownSignerName:
		// No restriction, for compatibility with what v1beta1 allowed.
		return true, nil
	}
	return false, nil
}

// Condition returns the first condition of the type, or nil.
func Condition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequestCondition {
	for i := range csr.Status.Conditions {
		if csr.Status.Conditions[i].Type == t {
			return &csr.Status.Conditions[i]
		}
	}
	return nil
}

// HasTrueCondition reports whether the request has a True condition of
// the type.
func HasTrueCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && (c.Status == "" || c.Status == "True") {
			return true
		}
	}
	return false
}

// IsApproved reports whether a request is approved and not denied.
func IsApproved(csr *certificatesv1.CertificateSigningRequest) bool {
	return HasTrueCondition(csr, certificatesv1.CertificateApproved) && !HasTrueCondition(csr, certificatesv1.CertificateDenied)
}
