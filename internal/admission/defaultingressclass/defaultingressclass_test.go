package defaultingressclass

import (
	"context"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/admissiontest"
)

func class(name string, isDefault bool, created time.Time) *networkingv1.IngressClass {
	c := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)}}
	if isDefault {
		c.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
	}
	return c
}

func TestDefault(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		classes []*networkingv1.IngressClass
		want    string
	}{
		{"none", nil, ""},
		{"none marked default", []*networkingv1.IngressClass{class("a", false, t0)}, ""},
		{"the one marked", []*networkingv1.IngressClass{class("a", false, t0), class("orca", true, t0)}, "orca"},
		{"the newest of several", []*networkingv1.IngressClass{class("old", true, t0), class("new", true, t0.Add(time.Hour))}, "new"},
		{"by name among equals", []*networkingv1.IngressClass{class("b", true, t0), class("a", true, t0)}, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Default(tc.classes)
			if (got == nil) != (tc.want == "") || got != nil && got.Name != tc.want {
				t.Errorf("Default = %v, want %q", got, tc.want)
			}
		})
	}
}

func TestAdmit(t *testing.T) {
	objects := admissiontest.New().Add(ingressClassesGVR, class("orca", true, time.Now()))
	p := New(objects)
	other := "other"
	for _, tc := range []struct {
		name string
		op   admission.Operation
		ing  *networkingv1.Ingress
		want string
	}{
		{"a new ingress without a class gets the default", admission.Create, &networkingv1.Ingress{}, "orca"},
		{"a class named stays", admission.Create, &networkingv1.Ingress{Spec: networkingv1.IngressSpec{IngressClassName: &other}}, "other"},
		{"the deprecated annotation stays alone", admission.Create, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kubernetes.io/ingress.class": "nginx"}}}, ""},
		{"updates are left alone", admission.Update, &networkingv1.Ingress{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: tc.op, Resource: ingressesGVR, Namespace: "default", Object: tc.ing}
			if err := p.Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			got := ""
			if tc.ing.Spec.IngressClassName != nil {
				got = *tc.ing.Spec.IngressClassName
			}
			if got != tc.want {
				t.Errorf("class %q, want %q", got, tc.want)
			}
		})
	}
}
