package customresource

import (
	"fmt"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	names := apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"}
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"color":    {Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"red"`)}},
				"replicas": {Type: "integer", Minimum: ptr.To(0.0)},
			}},
			"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}}},
		},
	}}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped, Names: names,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schema,
					Subresources: &apiextensionsv1.CustomResourceSubresources{
						Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
						Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
					},
					SelectableFields: []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}},
				},
				{Name: "v1beta1", Served: true, Deprecated: true, Schema: schema},
				{Name: "v1alpha1", Served: false, Schema: schema},
			},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: names},
	}
}

func TestResources(t *testing.T) {
	rs, err := Resources(widgetCRD(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("%d resources, want the two served versions", len(rs))
	}
	v1, beta := rs[0], rs[1]
	if v1.Version != "v1" || !v1.Namespaced || !v1.Status || v1.Scale == nil || v1.StorageVersion != "v1" || v1.Deprecated != "" {
		t.Errorf("v1: %+v", v1)
	}
	if beta.Deprecated != "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget" {
		t.Errorf("v1beta1 warning %q", beta.Deprecated)
	}

	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns"},
		"spec":     map[string]any{"replicas": int64(2), "bogus": true},
	}}
	unknown, err := v1.Coerce(obj)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(unknown) != "[spec.bogus]" {
		t.Errorf("unknown fields %v, want [spec.bogus]", unknown)
	}
	v1.Default(obj)
	if c, _, _ := unstructured.NestedString(obj.Object, "spec", "color"); c != "red" {
		t.Errorf("color %q, want the default red", c)
	}
	if errs := v1.Validate(obj); len(errs) != 0 {
		t.Errorf("valid object refused: %v", errs)
	}
	_ = unstructured.SetNestedField(obj.Object, int64(-1), "spec", "replicas")
	// The schema and the scale subresource both refuse it, as upstream.
	if errs := v1.Validate(obj); len(errs) != 2 || !strings.Contains(errs.ToAggregate().Error(), "should be greater than or equal to 0") ||
		!strings.Contains(errs.ToAggregate().Error(), ".spec.replicas: Invalid value: -1: should be a non-negative integer") {
		t.Errorf("negative replicas: %v", errs)
	}

	v1.Scale.Set(obj, 5)
	if spec, status, _ := v1.Scale.Get(obj); spec != 5 || status != 0 {
		t.Errorf("scale %d/%d, want 5/0", spec, status)
	}
	if f := v1.Fields(obj); f["spec.color"] != "red" {
		t.Errorf("selectable fields %v", f)
	}

	// Without a webhook a version change is only the apiVersion's.
	out, err := beta.Convert(obj, "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	if out.GetObjectKind().GroupVersionKind().Version != "v1beta1" || obj.GetAPIVersion() != "example.com/v1" {
		t.Errorf("converted %v, original %v", out.GetObjectKind().GroupVersionKind(), obj.GetAPIVersion())
	}

	cells := v1.Table.Row(obj, obj.GetCreationTimestamp().Time)
	if len(cells) != len(v1.Table.Columns) || cells[0] != "w" {
		t.Errorf("row %v for columns %v", cells, v1.Table.Columns)
	}
}
