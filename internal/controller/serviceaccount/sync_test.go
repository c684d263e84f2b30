package serviceaccount

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestSync runs the controller's sync over caches filled by hand and a
// fake API whose create can be made to fail: what it creates and what it
// reports.
func TestSync(t *testing.T) {
	active := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	terminating := active.DeepCopy()
	terminating.Status.Phase = corev1.NamespaceTerminating
	other := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder", Namespace: "apps"}}
	def := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultName, Namespace: "apps"}}
	gr := schema.GroupResource{Resource: "serviceaccounts"}
	terminatingErr := apierrors.NewForbidden(gr, DefaultName, errors.New("namespace apps is being terminated"))
	terminatingErr.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
	for _, tc := range []struct {
		name      string
		ns        *corev1.Namespace
		sas       []*corev1.ServiceAccount
		createErr error
		creates   int
		wantErr   bool
	}{
		{name: "a namespace the cache does not hold", creates: 0},
		{name: "an active namespace without one", ns: active, creates: 1},
		{name: "another account is not the default", ns: active, sas: []*corev1.ServiceAccount{other}, creates: 1},
		{name: "the default exists", ns: active, sas: []*corev1.ServiceAccount{other, def}, creates: 0},
		{name: "a terminating namespace gets none", ns: terminating, creates: 0},
		{name: "created meanwhile by someone else", ns: active, createErr: apierrors.NewAlreadyExists(gr, DefaultName), creates: 1},
		{name: "the namespace began terminating", ns: active, createErr: terminatingErr, creates: 1},
		{name: "another refusal is retried", ns: active, createErr: apierrors.NewForbidden(gr, DefaultName, errors.New("quota")), creates: 1, wantErr: true},
		{name: "a server error is retried", ns: active, createErr: apierrors.NewInternalError(errors.New("etcd")), creates: 1, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			creates := 0
			client.PrependReactor("create", "serviceaccounts", func(k8stesting.Action) (bool, runtime.Object, error) {
				creates++
				return tc.createErr != nil, nil, tc.createErr
			})
			factory := informers.NewSharedInformerFactory(client, 0)
			c, err := New(client, factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if tc.ns != nil {
				_ = factory.Core().V1().Namespaces().Informer().GetStore().Add(tc.ns)
			}
			for _, sa := range tc.sas {
				_ = factory.Core().V1().ServiceAccounts().Informer().GetStore().Add(sa)
			}
			err = c.sync(context.Background(), "apps")
			if (err != nil) != tc.wantErr {
				t.Errorf("sync: %v, want an error: %v", err, tc.wantErr)
			}
			if creates != tc.creates {
				t.Errorf("%d creates, want %d", creates, tc.creates)
			}
			if tc.creates == 1 && tc.createErr == nil {
				if _, err := client.CoreV1().ServiceAccounts("apps").Get(context.Background(), DefaultName, metav1.GetOptions{}); err != nil {
					t.Errorf("the default account was not created: %v", err)
				}
			}
		})
	}
}
