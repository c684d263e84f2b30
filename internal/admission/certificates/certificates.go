// Package certificates holds upstream's admission plugins for
// certificates.k8s.io: CertificateApproval and CertificateSigning (the
// approve and sign verbs on signers/NAME, checked when a request is
// approved or signed), CertificateSubjectRestriction (no system:masters
// certificates from the kube-apiserver-client signer),
// ClusterTrustBundleAttest (the attest verb for bundles of a signer), the
// sign check on PodCertificateRequest status that upstream makes in its
// status strategy, and NodeRestriction's rules for the
// PodCertificateRequests a node creates.
package certificates

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/auth/certificates"
)

var (
	csrResource = certificatesv1.Resource("certificatesigningrequests")
	ctbResource = certificatesv1.Resource("clustertrustbundles")
	pcrResource = certificatesv1.Resource("podcertificaterequests")
)

// signerCheck is what the signer-name plugins share: the authorizer that
// answers whether a user holds a verb on signers/NAME.
type signerCheck struct {
	authz authorizer.UnconditionalAuthorizer
}

func (c signerCheck) allowed(ctx context.Context, a *admission.Attributes, verb, signerName string) bool {
	if c.authz == nil {
		return true
	}
	u := &user.DefaultInfo{Name: a.UserName, Groups: a.Groups}
	return certificates.IsAuthorizedForSignerName(ctx, c.authz, u, verb, signerName)
}

func is(a *admission.Attributes, gr schema.GroupResource, sub string) bool {
	return a.Resource.GroupResource() == gr && a.Subresource == sub
}

// Approval is upstream's CertificateApproval plugin.
type Approval struct{ signerCheck }

// NewApproval checks approvals with authz.
func NewApproval(authz authorizer.UnconditionalAuthorizer) *Approval {
	return &Approval{signerCheck{authz}}
}

func (*Approval) Name() string { return "CertificateApproval" }

// Validate refuses a write to /approval by a user without the approve
// verb for the request's signer. The stored signer counts: the write
// cannot change it anyway.
func (p *Approval) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Update || !is(a, csrResource, "approval") {
		return nil
	}
	csr, ok := a.OldObject.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.OldObject))
	}
	if !p.allowed(ctx, a, "approve", csr.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to approve requests with signerName %q", csr.Spec.SignerName))
	}
	return nil
}

// Signing is upstream's CertificateSigning plugin.
type Signing struct{ signerCheck }

// NewSigning checks certificates written with authz.
func NewSigning(authz authorizer.UnconditionalAuthorizer) *Signing {
	return &Signing{signerCheck{authz}}
}

func (*Signing) Name() string { return "CertificateSigning" }

// Validate refuses a write to /status that changes the certificate by a
// user without the sign verb for the request's signer.
func (p *Signing) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Update || !is(a, csrResource, "status") {
		return nil
	}
	old, ok := a.OldObject.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.OldObject))
	}
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.Object))
	}
	if string(old.Status.Certificate) == string(csr.Status.Certificate) {
		return nil
	}
	if !p.allowed(ctx, a, "sign", old.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to sign requests with signerName %q", old.Spec.SignerName))
	}
	return nil
}

// SubjectRestriction is upstream's CertificateSubjectRestriction plugin.
type SubjectRestriction struct{}

func (SubjectRestriction) Name() string { return "CertificateSubjectRestriction" }

// Validate refuses requests to the kube-apiserver-client signer for the
// system:masters group: such a certificate would bypass authorization,
// and could not be revoked.
func (SubjectRestriction) Validate(_ context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Create || !is(a, csrResource, "") {
		return nil
	}
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.Object))
	}
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return nil
	}
	req, err := certificates.ParseCSR(csr.Spec.Request)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to parse CSR: %v", err))
	}
	for _, o := range req.Subject.Organization {
		if o == user.SystemPrivilegedGroup {
			return admission.NewForbidden(a, fmt.Errorf("use of %s signer with system:masters group is not allowed", certificatesv1.KubeAPIServerClientSignerName))
		}
	}
	return nil
}
