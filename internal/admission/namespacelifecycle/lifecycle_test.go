package namespacelifecycle

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/admissiontest"
)

func TestAdmit(t *testing.T) {
	objs := admissiontest.New().
		Add(namespacesGVR, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "live"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}).
		Add(namespacesGVR, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dying"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}})
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	lsar := schemaGVR("authorization.k8s.io", "v1", "localsubjectaccessreviews")
	cases := []struct {
		name    string
		attrs   admission.Attributes
		wantMsg string
	}{
		{"create in active namespace", admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "live", Name: "p", Object: pod}, ""},
		{"create in terminating namespace", admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "dying", Name: "p", Object: pod},
			`pods "p" is forbidden: unable to create new content in namespace dying because it is being terminated`},
		{"update in terminating namespace", admission.Attributes{Operation: admission.Update, Resource: pods, Namespace: "dying", Name: "p", Object: pod, OldObject: pod}, ""},
		{"delete in terminating namespace", admission.Attributes{Operation: admission.Delete, Resource: pods, Namespace: "dying", Name: "p", OldObject: pod}, ""},
		{"missing namespace left to the server", admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "gone", Name: "p", Object: pod}, ""},
		{"access review in terminating namespace", admission.Attributes{Operation: admission.Create, Resource: lsar, Namespace: "dying"}, ""},
		{"namespace itself", admission.Attributes{Operation: admission.Create, Resource: namespacesGVR, Name: "dying"}, ""},
	}
	p := New(objs)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Admit(context.Background(), &tc.attrs)
			if tc.wantMsg == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.Error() != tc.wantMsg {
				t.Fatalf("got %v, want 403 %q", err, tc.wantMsg)
			}
		})
	}
}

func TestTerminatingCause(t *testing.T) {
	objs := admissiontest.New().Add(namespacesGVR, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dying"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}})
	err := New(objs).Admit(context.Background(), &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "dying", Name: "c"})
	se, ok := err.(*apierrors.StatusError)
	if !ok || len(se.ErrStatus.Details.Causes) != 1 || se.ErrStatus.Details.Causes[0].Type != corev1.NamespaceTerminatingCause {
		t.Fatalf("want a NamespaceTerminating cause, got %#v", err)
	}
}

func schemaGVR(g, v, r string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: g, Version: v, Resource: r}
}
