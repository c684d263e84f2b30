package pvcresize

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/admissiontest"
)

func claim(size string, phase corev1.PersistentVolumeClaimPhase, class *string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: phase},
	}
}

func withBetaClass(c *corev1.PersistentVolumeClaim, name string) *corev1.PersistentVolumeClaim {
	c.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: name}
	return c
}

func class(name string, allow *bool) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "orca.io/local-path", AllowVolumeExpansion: allow}
}

func TestRefusal(t *testing.T) {
	fast, slow := ptr.To("fast"), ptr.To("slow")
	expandable := class("fast", ptr.To(true))
	for _, tc := range []struct {
		name     string
		pvc, old *corev1.PersistentVolumeClaim
		class    *storagev1.StorageClass
		want     error
	}{
		{"same size", claim("1Gi", corev1.ClaimBound, fast), claim("1Gi", corev1.ClaimBound, fast), nil, nil},
		{"same size written differently", claim("1024Mi", corev1.ClaimPending, nil), claim("1Gi", corev1.ClaimPending, nil), nil, nil},
		{"shrinking is validation's business", claim("1Gi", corev1.ClaimPending, nil), claim("2Gi", corev1.ClaimPending, nil), nil, nil},
		{"growing a pending claim", claim("2Gi", corev1.ClaimPending, fast), claim("1Gi", corev1.ClaimPending, fast), expandable, ErrNotBound},
		{"growing a lost claim", claim("2Gi", corev1.ClaimLost, fast), claim("1Gi", corev1.ClaimLost, fast), expandable, ErrNotBound},
		{"bound, class allows expansion", claim("2Gi", corev1.ClaimBound, fast), claim("1Gi", corev1.ClaimBound, fast), expandable, nil},
		{"bound, class says no", claim("2Gi", corev1.ClaimBound, fast), claim("1Gi", corev1.ClaimBound, fast), class("fast", ptr.To(false)), ErrNotResizable},
		{"bound, class says nothing", claim("2Gi", corev1.ClaimBound, fast), claim("1Gi", corev1.ClaimBound, fast), class("fast", nil), ErrNotResizable},
		{"bound, class missing", claim("2Gi", corev1.ClaimBound, fast), claim("1Gi", corev1.ClaimBound, fast), nil, ErrNotResizable},
		{"bound without a class (statically provisioned)", claim("2Gi", corev1.ClaimBound, nil), claim("1Gi", corev1.ClaimBound, nil), nil, ErrNotResizable},
		{"bound to an empty class", claim("2Gi", corev1.ClaimBound, ptr.To("")), claim("1Gi", corev1.ClaimBound, ptr.To("")), nil, ErrNotResizable},
		{"class changed with the size", claim("2Gi", corev1.ClaimBound, fast), claim("1Gi", corev1.ClaimBound, slow), expandable, ErrNotResizable},
		{"a class of another name", claim("2Gi", corev1.ClaimBound, fast), claim("1Gi", corev1.ClaimBound, fast), class("slow", ptr.To(true)), ErrNotResizable},
		{"class by the beta annotation",
			withBetaClass(claim("2Gi", corev1.ClaimBound, nil), "fast"), withBetaClass(claim("1Gi", corev1.ClaimBound, nil), "fast"), expandable, nil},
		{"the beta annotation wins over the field",
			withBetaClass(claim("2Gi", corev1.ClaimBound, slow), "fast"), withBetaClass(claim("1Gi", corev1.ClaimBound, slow), "fast"), expandable, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Refusal(tc.pvc, tc.old, tc.class); !errors.Is(got, tc.want) {
				t.Errorf("Refusal = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	objects := admissiontest.New().
		Add(classesGVR, class("fast", ptr.To(true))).
		Add(classesGVR, class("fixed", ptr.To(false)))
	p := New(objects)
	fast, fixed := ptr.To("fast"), ptr.To("fixed")
	for _, tc := range []struct {
		name        string
		op          admission.Operation
		subresource string
		pvc, old    *corev1.PersistentVolumeClaim
		want        string // the refusal's message, "" when admitted
	}{
		{"grow an expandable bound claim", admission.Update, "", claim("2Gi", corev1.ClaimBound, fast), claim("1Gi", corev1.ClaimBound, fast), ""},
		{"grow a claim of a fixed class", admission.Update, "", claim("2Gi", corev1.ClaimBound, fixed), claim("1Gi", corev1.ClaimBound, fixed),
			`persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`},
		{"grow a claim of a missing class", admission.Update, "", claim("2Gi", corev1.ClaimBound, ptr.To("gone")), claim("1Gi", corev1.ClaimBound, ptr.To("gone")),
			`persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`},
		{"grow a pending claim", admission.Update, "", claim("2Gi", corev1.ClaimPending, fast), claim("1Gi", corev1.ClaimPending, fast),
			`persistentvolumeclaims "data" is forbidden: Only bound persistent volume claims can be expanded`},
		{"status writes are not checked", admission.Update, "status", claim("2Gi", corev1.ClaimBound, fixed), claim("1Gi", corev1.ClaimBound, fixed), ""},
		{"creates are not checked", admission.Create, "", claim("2Gi", corev1.ClaimPending, fixed), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: tc.op, Resource: claimsGVR, Subresource: tc.subresource, Namespace: "ns", Name: "data", Object: tc.pvc}
			if tc.old != nil {
				a.OldObject = tc.old
			}
			err := p.Validate(context.Background(), a)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.Error() != tc.want {
				t.Fatalf("err = %v, want 403 %q", err, tc.want)
			}
		})
	}
}
