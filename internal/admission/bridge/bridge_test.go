package bridge

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/orca-project/orca/internal/admission"
)

func configMapAttributes() *admission.Attributes {
	return &admission.Attributes{
		Operation: admission.Create,
		Resource:  corev1.SchemeGroupVersion.WithResource("configmaps"),
		Kind:      corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		Namespace: "ns", Name: "cm",
		Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"}},
		User:   &user.DefaultInfo{Name: "alice", Groups: []string{"devs"}},
		Default: func(obj runtime.Object) {
			cm := obj.(*corev1.ConfigMap)
			if cm.Data == nil {
				cm.Data = map[string]string{"defaulted": "yes"}
			}
		},
	}
}

// A plugin's changed copy converted back into the request's object
// replaces it in place and marks the request patched; converting the
// request's object into a new one does not.
func TestConvertBackMarksPatched(t *testing.T) {
	a := configMapAttributes()
	conv := Interfaces(a).GetObjectConvertor()
	out := &corev1.ConfigMap{}
	if err := conv.Convert(a.Object, out, nil); err != nil {
		t.Fatal(err)
	}
	if a.Patched {
		t.Error("copying the request's object out marked it patched")
	}
	out.Labels = map[string]string{"mutated": "yes"}
	if err := conv.Convert(out, a.Object, nil); err != nil {
		t.Fatal(err)
	}
	if !a.Patched {
		t.Error("converting a changed copy back did not mark the request patched")
	}
	if got := a.Object.(*corev1.ConfigMap).Labels["mutated"]; got != "yes" {
		t.Errorf("request's object not replaced: labels %v", a.Object.(*corev1.ConfigMap).Labels)
	}
}

// A policy's patch result arrives unstructured: converting it to the
// request's version gives the kind's Go type back, while a custom
// resource stays unstructured.
func TestConvertToVersion(t *testing.T) {
	conv := Interfaces(configMapAttributes()).GetObjectConvertor()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm"}, "data": map[string]any{"k": "v"},
	}}
	typed, err := conv.ConvertToVersion(u, corev1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	cm, ok := typed.(*corev1.ConfigMap)
	if !ok || cm.Data["k"] != "v" || cm.Kind != "ConfigMap" {
		t.Errorf("got %#v", typed)
	}
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget"}}
	out, err := conv.ConvertToVersion(cr, schema.GroupVersion{Group: "example.com", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.(*unstructured.Unstructured); !ok {
		t.Errorf("custom resource became a %T", out)
	}
}

// Defaults apply to objects of the request's Go type only.
func TestDefaulterKeepsToItsType(t *testing.T) {
	a := configMapAttributes()
	d := Interfaces(a).GetObjectDefaulter()
	cm := &corev1.ConfigMap{}
	d.Default(cm)
	if cm.Data["defaulted"] != "yes" {
		t.Error("a ConfigMap was not defaulted")
	}
	d.Default(&unstructured.Unstructured{Object: map[string]any{}}) // must not panic
}

// The upstream attributes carry the request and its whole user, and
// warnings reach the request's recorder.
func TestAdapt(t *testing.T) {
	a := configMapAttributes()
	var warned []string
	ctx := admission.WithWarnings(context.Background(), func(s string) { warned = append(warned, s) })
	ctx, attrs := Adapt(ctx, a)
	if attrs.GetName() != "cm" || attrs.GetNamespace() != "ns" || attrs.GetUserInfo().GetName() != "alice" || string(attrs.GetOperation()) != "CREATE" {
		t.Errorf("attributes %+v", attrs)
	}
	if opts, ok := attrs.GetOperationOptions().(*metav1.CreateOptions); !ok || opts.Kind != "CreateOptions" {
		t.Errorf("options %#v", attrs.GetOperationOptions())
	}
	if a.Object.GetObjectKind().GroupVersionKind().Kind != "ConfigMap" {
		t.Error("the object was not given its kind")
	}
	recorder{ctx}.AddWarning("", "careful")
	if len(warned) != 1 || warned[0] != "careful" {
		t.Errorf("warnings %v", warned)
	}
}
