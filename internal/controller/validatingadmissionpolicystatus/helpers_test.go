package validatingadmissionpolicystatus

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// fakeSchemas resolves the kinds it holds; fail, when set, is what it
// answers for every other kind instead of "not found".
type fakeSchemas struct {
	kinds map[schema.GroupVersionKind]*spec.Schema
	fail  error
}

func (f *fakeSchemas) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	if s, ok := f.kinds[gvk]; ok {
		return s, nil
	}
	if f.fail != nil {
		return nil, f.fail
	}
	return nil, fmt.Errorf("no schema of %v: %w", gvk, resolver.ErrSchemaNotFound)
}

var deploymentGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")

func object(props map[string]spec.Schema) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: props}}
}

func typed(t string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{t}}}
}

// deploymentSchema is as much of apps/v1 Deployment as the tests refer to.
func deploymentSchema() *spec.Schema {
	s := object(map[string]spec.Schema{
		"apiVersion": typed("string"),
		"kind":       typed("string"),
		"metadata":   object(map[string]spec.Schema{"name": typed("string")}),
		"spec":       object(map[string]spec.Schema{"replicas": typed("integer"), "paused": typed("boolean")}),
	})
	return &s
}

// testMapper knows deployments and configmaps; only deployments have a
// schema in testChecker.
func testMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{appsv1.SchemeGroupVersion, {Version: "v1"}})
	m.Add(deploymentGVK, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	return m
}

func testChecker() *schemaChecker {
	return &schemaChecker{
		schemas: &fakeSchemas{kinds: map[schema.GroupVersionKind]*spec.Schema{deploymentGVK: deploymentSchema()}},
		mapper:  testMapper(),
	}
}

// testPolicy matches apps/v1 deployments with one validation per
// expression.
func testPolicy(name string, generation int64, expressions ...string) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return testPolicyOn(name, generation, "apps", "deployments", expressions...)
}

func testPolicyOn(name string, generation int64, group, resource string, expressions ...string) *admissionregistrationv1.ValidatingAdmissionPolicy {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: generation},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{resource}},
				},
			}}},
		},
	}
	for _, e := range expressions {
		p.Spec.Validations = append(p.Spec.Validations, admissionregistrationv1.Validation{Expression: e})
	}
	return p
}
