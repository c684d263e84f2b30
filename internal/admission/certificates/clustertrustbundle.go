package certificates

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/orca-project/orca/internal/admission"
)

// Attest is upstream's ClusterTrustBundleAttest plugin.
type Attest struct{ signerCheck }

// NewAttest checks bundle writes with authz.
func NewAttest(authz authorizer.UnconditionalAuthorizer) *Attest {
	return &Attest{signerCheck{authz}}
}

func (*Attest) Name() string { return "ClusterTrustBundleAttest" }

// Validate refuses a bundle that names a signer unless the writer holds
// the attest verb for it: pods trust such bundles as the signer's. The
// new object's signer is the one to check, since validation refuses to
// change it. Writes that only touch owner references and finalizers pass,
// so that the garbage collector and storage migration need no rights.
func (p *Attest) Validate(ctx context.Context, a *admission.Attributes) error {
	if (a.Operation != admission.Create && a.Operation != admission.Update) || a.Resource.GroupResource() != ctbResource {
		return nil
	}
	b, ok := a.Object.(*certificatesv1.ClusterTrustBundle)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type ClusterTrustBundle, got: %T", a.Object))
	}
	if b.Spec.SignerName == "" {
		return nil
	}
	if old, ok := a.OldObject.(*certificatesv1.ClusterTrustBundle); ok && a.Operation == admission.Update && onlyGCFields(b, old) {
		return nil
	}
	if !p.allowed(ctx, a, "attest", b.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to attest for signerName %q", b.Spec.SignerName))
	}
	return nil
}

// onlyGCFields reports whether b differs from old at most in owner
// references and finalizers (and the bookkeeping every write changes).
func onlyGCFields(b, old *certificatesv1.ClusterTrustBundle) bool {
	o := old.DeepCopy()
	o.OwnerReferences, o.Finalizers = b.OwnerReferences, b.Finalizers
	o.ManagedFields, o.ResourceVersion, o.Generation = b.ManagedFields, b.ResourceVersion, b.Generation
	return apiequality.Semantic.DeepEqual(o, b)
}
