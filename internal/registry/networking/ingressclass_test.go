package networking

import (
	"reflect"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func ingressClass(controller string, params *networkingv1.IngressClassParametersReference) *networkingv1.IngressClass {
	return &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "test123"},
		Spec:       networkingv1.IngressClassSpec{Controller: controller, Parameters: params},
	}
}

func params(group *string, kind, name string, scope, namespace *string) *networkingv1.IngressClassParametersReference {
	return &networkingv1.IngressClassParametersReference{APIGroup: group, Kind: kind, Name: name, Scope: scope, Namespace: namespace}
}

func TestValidateIngressClass(t *testing.T) {
	cluster, namespace := ptr.To("Cluster"), ptr.To("Namespace")
	tests := []struct {
		name       string
		controller string
		params     *networkingv1.IngressClassParametersReference
		want       []wantErr
	}{
		{"valid controller", "foo.co/bar", nil, nil},
		{"empty controller", "", nil, []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.controller"}}},
		{"controller without a domain", "bar", nil, []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.controller"}}},
		{"controller at max length", "foo.co/" + strings.Repeat("a", 243), nil, nil},
		{"controller too long", "foo.co/" + strings.Repeat("a", 244), nil, []wantErr{
			{Type: field.ErrorTypeTooLong, Field: "spec.controller", Detail: "may not be more than 250 bytes"},
		}},
		{"cluster params", "foo.co/bar", params(ptr.To("example.com"), "foo", "bar", cluster, nil), nil},
		{"no kind", "foo.co/bar", params(ptr.To("example.com"), "", "bar", cluster, nil), []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.parameters.kind"},
		}},
		{"no name", "foo.co/bar", params(ptr.To("example.com"), "foo", "", cluster, nil), []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.parameters.name"},
		}},
		{"bad kind", "foo.co/bar", params(nil, "foo/", "bar", cluster, nil), []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.parameters.kind", Detail: "may not contain '/'"},
		}},
		{"bad group", "foo.co/bar", params(ptr.To("Example_Com"), "foo", "bar", cluster, nil), []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.parameters.apiGroup", Detail: dns1123SubdomainMsg},
		}},
		{"bad scope", "foo.co/bar", params(nil, "foo", "bar", ptr.To("bad-scope"), nil), []wantErr{
			{Type: field.ErrorTypeNotSupported, Field: "spec.parameters.scope", Detail: `supported values: "Cluster", "Namespace"`},
		}},
		{"namespace params", "foo.co/bar", params(nil, "foo", "bar", namespace, ptr.To("foo-ns")), nil},
		{"bad namespace", "foo.co/bar", params(nil, "foo", "bar", namespace, ptr.To("foo_ns")), []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.parameters.namespace", Detail: "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"},
		}},
		{"no scope", "foo.co/bar", params(nil, "foo", "bar", nil, ptr.To("foo_ns")), []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.parameters.scope"},
		}},
		{"namespace scope without namespace", "foo.co/bar", params(nil, "foo", "bar", namespace, nil), []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.parameters.namespace", Detail: "`parameters.scope` is set to 'Namespace'"},
		}},
		{"cluster scope with namespace", "foo.co/bar", params(nil, "foo", "bar", cluster, ptr.To("foo-ns")), []wantErr{
			{Type: field.ErrorTypeForbidden, Field: "spec.parameters.namespace", Detail: "`parameters.scope` is set to 'Cluster'"},
		}},
		{"cluster scope with empty namespace", "foo.co/bar", params(nil, "foo", "bar", cluster, ptr.To("")), []wantErr{
			{Type: field.ErrorTypeForbidden, Field: "spec.parameters.namespace", Detail: "`parameters.scope` is set to 'Cluster'"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateIngressClass(ingressClass(tc.controller, tc.params)), tc.want)
		})
	}
}

func TestValidateIngressClassUpdate(t *testing.T) {
	old := ingressClass("foo.co/different", nil)
	checkErrs(t, validateIngressClassUpdate(ingressClass("foo.co/bar", nil), old), []wantErr{
		{Type: field.ErrorTypeInvalid, Field: "spec.controller", Detail: "field is immutable"},
	})
	newParams := ingressClass("foo.co/different", params(ptr.To("v1"), "ConfigMap", "foo", ptr.To("Namespace"), ptr.To("bar")))
	checkErrs(t, validateIngressClassUpdate(newParams, old), nil)
	// The new object is validated as a whole, after the immutable field.
	checkErrs(t, validateIngressClassUpdate(ingressClass("", nil), old), []wantErr{
		{Type: field.ErrorTypeInvalid, Field: "spec.controller", Detail: "field is immutable"},
		{Type: field.ErrorTypeRequired, Field: "spec.controller"},
	})
}

func TestDefaultIngressClass(t *testing.T) {
	ic := ingressClass("foo.co/bar", params(nil, "foo", "bar", nil, nil))
	defaultIngressClass(ic)
	if want := params(nil, "foo", "bar", ptr.To("Cluster"), nil); !reflect.DeepEqual(ic.Spec.Parameters, want) {
		t.Errorf("parameters = %+v, want %+v", ic.Spec.Parameters, want)
	}
	ns := ingressClass("foo.co/bar", params(nil, "foo", "bar", ptr.To("Namespace"), ptr.To("ns")))
	defaultIngressClass(ns)
	if got := *ns.Spec.Parameters.Scope; got != "Namespace" {
		t.Errorf("scope = %q, want Namespace kept", got)
	}
	none := ingressClass("foo.co/bar", nil)
	defaultIngressClass(none)
	if none.Spec.Parameters != nil {
		t.Errorf("parameters = %+v, want none", none.Spec.Parameters)
	}
}
