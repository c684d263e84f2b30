package validatingadmissionpolicystatus

import (
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// checker type-checks a policy's expressions against the kinds it
// matches. An error means the check could not be done and is worth
// retrying; warnings are what it found.
type checker interface {
	Check(*admissionregistrationv1.ValidatingAdmissionPolicy) ([]admissionregistrationv1.ExpressionWarning, error)
}

// schemaChecker is upstream's TypeChecker over the schemas the API server
// publishes.
type schemaChecker struct {
	schemas resolver.SchemaResolver
	mapper  meta.RESTMapper
}

// newDiscoveryChecker reads the schemas from the API server's OpenAPI v3
// documents. Upstream first looks built-in kinds up in the definitions
// compiled into kube-controller-manager; Orca's controllers know the API
// server only through its API, and what it serves is the truth anyway.
func newDiscoveryChecker(disc discovery.DiscoveryInterface) *schemaChecker {
	return &schemaChecker{
		schemas: &resolver.ClientDiscoveryResolver{Discovery: disc},
		// The TypeChecker resets the mapper once per policy on a miss,
		// so a CRD established after the mapper first filled is found.
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
	}
}

// Check runs the TypeChecker. The TypeChecker skips a kind whose schema it
// could not resolve, which is right for a kind without a schema but would,
// on a failed request, record "no warnings" for a generation that is then
// never checked again; such a failure is returned instead.
func (c *schemaChecker) Check(p *admissionregistrationv1.ValidatingAdmissionPolicy) ([]admissionregistrationv1.ExpressionWarning, error) {
	schemas := &failureRecorder{SchemaResolver: c.schemas}
	tc := &validating.TypeChecker{SchemaResolver: schemas, RestMapper: c.mapper}
	warnings := tc.Check(p)
	if schemas.err != nil {
		return nil, schemas.err
	}
	return warnings, nil
}

// failureRecorder remembers the first resolution failure other than a
// missing schema. It serves one Check, which resolves one kind at a time.
type failureRecorder struct {
	resolver.SchemaResolver
	err error
}

func (r *failureRecorder) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	s, err := r.SchemaResolver.ResolveSchema(gvk)
	if err != nil && !errors.Is(err, resolver.ErrSchemaNotFound) && r.err == nil {
		r.err = fmt.Errorf("schema of %v: %w", gvk, err)
	}
	return s, err
}
