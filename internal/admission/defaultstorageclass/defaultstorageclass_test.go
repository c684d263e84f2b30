package defaultstorageclass

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/admissiontest"
)

func class(name, annotation, value string, created time.Time) *storagev1.StorageClass {
	c := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)}, Provisioner: "example.com/p"}
	if annotation != "" {
		c.Annotations = map[string]string{annotation: value}
	}
	return c
}

func TestDefault(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		classes []*storagev1.StorageClass
		want    string
	}{
		{"none", nil, ""},
		{"none marked default", []*storagev1.StorageClass{class("a", "", "", t0)}, ""},
		{"marked false", []*storagev1.StorageClass{class("a", IsDefaultAnnotation, "false", t0)}, ""},
		{"marked True is not true", []*storagev1.StorageClass{class("a", IsDefaultAnnotation, "True", t0)}, ""},
		{"the one marked", []*storagev1.StorageClass{class("a", "", "", t0), class("fast", IsDefaultAnnotation, "true", t0)}, "fast"},
		{"the beta annotation counts", []*storagev1.StorageClass{class("a", "", "", t0), class("old", BetaIsDefaultAnnotation, "true", t0)}, "old"},
		{"the newest of several", []*storagev1.StorageClass{
			class("new", IsDefaultAnnotation, "true", t0.Add(time.Hour)),
			class("old", IsDefaultAnnotation, "true", t0),
			class("beta", BetaIsDefaultAnnotation, "true", t0.Add(time.Minute)),
		}, "new"},
		{"by name among equals", []*storagev1.StorageClass{class("b", IsDefaultAnnotation, "true", t0), class("a", BetaIsDefaultAnnotation, "true", t0)}, "a"},
		{"a newer class not marked does not count", []*storagev1.StorageClass{class("d", IsDefaultAnnotation, "true", t0), class("n", "", "", t0.Add(time.Hour))}, "d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := make([]string, len(tc.classes))
			for i, c := range tc.classes {
				before[i] = c.Name
			}
			got := Default(tc.classes)
			if (got == nil) != (tc.want == "") || got != nil && got.Name != tc.want {
				t.Errorf("Default = %v, want %q", got, tc.want)
			}
			for i, c := range tc.classes {
				if c.Name != before[i] {
					t.Fatalf("Default reordered its argument")
				}
			}
		})
	}
}

func TestAdmit(t *testing.T) {
	t0 := time.Now()
	objects := admissiontest.New().
		Add(storageClassesGVR, class("standard", IsDefaultAnnotation, "true", t0)).
		Add(storageClassesGVR, class("slow", "", "", t0.Add(time.Hour)))
	p := New(objects)
	none := admissiontest.New().Add(storageClassesGVR, class("slow", "", "", t0))
	ptr := func(s string) *string { return &s }
	for _, tc := range []struct {
		name        string
		objects     admission.Objects
		op          admission.Operation
		resource    schema.GroupVersionResource
		subresource string
		pvc         *corev1.PersistentVolumeClaim
		want        *string
	}{
		{"a new claim without a class gets the default", objects, admission.Create, claimsGVR, "", &corev1.PersistentVolumeClaim{}, ptr("standard")},
		{"an explicit empty class stays empty", objects, admission.Create, claimsGVR, "", &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr("")}}, ptr("")},
		{"a class named stays", objects, admission.Create, claimsGVR, "", &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr("slow")}}, ptr("slow")},
		{"the beta annotation is a class", objects, admission.Create, claimsGVR, "", &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.BetaStorageClassAnnotation: ""}}}, nil},
		{"no default class, no class", none, admission.Create, claimsGVR, "", &corev1.PersistentVolumeClaim{}, nil},
		{"updates are left alone", objects, admission.Update, claimsGVR, "", &corev1.PersistentVolumeClaim{}, nil},
		{"subresources are left alone", objects, admission.Create, claimsGVR, "status", &corev1.PersistentVolumeClaim{}, nil},
		{"other resources are left alone", objects, admission.Create, corev1.SchemeGroupVersion.WithResource("persistentvolumes"), "", &corev1.PersistentVolumeClaim{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: tc.op, Resource: tc.resource, Subresource: tc.subresource, Namespace: "default", Object: tc.pvc}
			if err := New(tc.objects).Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			got := tc.pvc.Spec.StorageClassName
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Errorf("class %v, want %v", deref(got), deref(tc.want))
			}
		})
	}
	if p.Name() != "DefaultStorageClass" {
		t.Errorf("Name() = %q", p.Name())
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return "'" + *s + "'"
}

// failingObjects fails every List.
type failingObjects struct{ admission.Objects }

func (failingObjects) List(context.Context, schema.GroupVersionResource, string) ([]runtime.Object, error) {
	return nil, errors.New("storage unavailable")
}

func TestAdmitRefusesWhenClassesCannotBeRead(t *testing.T) {
	a := &admission.Attributes{Operation: admission.Create, Resource: claimsGVR, Namespace: "default", Name: "data", Object: &corev1.PersistentVolumeClaim{}}
	err := New(failingObjects{}).Admit(context.Background(), a)
	if !apierrors.IsForbidden(err) {
		t.Fatalf("Admit = %v, want Forbidden", err)
	}
}
