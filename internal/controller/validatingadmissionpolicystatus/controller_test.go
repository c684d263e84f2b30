package validatingadmissionpolicystatus

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// countingChecker counts the checks it passes on.
type countingChecker struct {
	checker
	calls int
	err   error
}

func (c *countingChecker) Check(p *admissionregistrationv1.ValidatingAdmissionPolicy) ([]admissionregistrationv1.ExpressionWarning, error) {
	c.calls++
	if c.err != nil {
		return nil, c.err
	}
	return c.checker.Check(p)
}

func newTestController(t *testing.T, ctx context.Context, policies ...*admissionregistrationv1.ValidatingAdmissionPolicy) (*Controller, *fake.Clientset, *countingChecker) {
	t.Helper()
	client := fake.NewClientset()
	for _, p := range policies {
		if _, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	chk := &countingChecker{checker: testChecker()}
	c, err := newController(client, factory, chk, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		t.Fatal("cache did not sync")
	}
	client.ClearActions()
	return c, client, chk
}

// writes are the client's calls other than reads.
func writes(client *fake.Clientset) []clienttesting.Action {
	var out []clienttesting.Action
	for _, a := range client.Actions() {
		switch a.GetVerb() {
		case "get", "list", "watch":
		default:
			out = append(out, a)
		}
	}
	return out
}

func TestSyncWritesTypeCheckingOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	typo := testPolicy("typo", 2, "object.spec.replicass > 1")
	typo.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "X", LastTransitionTime: metav1.Unix(1, 0)}}
	good := testPolicy("good", 1, "object.spec.replicas > 1")
	current := testPolicy("current", 3, "object.spec.replicass > 1")
	current.Status = admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: 3, TypeChecking: &admissionregistrationv1.TypeChecking{}}
	c, client, chk := newTestController(t, ctx, typo, good, current)

	for _, tc := range []struct {
		name string
		want admissionregistrationv1.ValidatingAdmissionPolicyStatus
	}{
		{"typo", admissionregistrationv1.ValidatingAdmissionPolicyStatus{
			ObservedGeneration: 2,
			TypeChecking: &admissionregistrationv1.TypeChecking{ExpressionWarnings: []admissionregistrationv1.ExpressionWarning{{
				FieldRef: "spec.validations[0].expression",
				Warning:  "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^\n",
			}}},
			Conditions: typo.Status.Conditions,
		}},
		{"good", admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: 1, TypeChecking: &admissionregistrationv1.TypeChecking{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client.ClearActions()
			if err := c.sync(ctx, tc.name); err != nil {
				t.Fatal(err)
			}
			w := writes(client)
			if len(w) != 1 {
				t.Fatalf("writes = %v, want one apply of the status", w)
			}
			if p, ok := w[0].(clienttesting.PatchAction); !ok || p.GetPatchType() != types.ApplyPatchType || p.GetSubresource() != "status" || p.GetName() != tc.name {
				t.Fatalf("write = %#v, want an apply of %s/status", w[0], tc.name)
			}
			if fm := fieldManager(w[0]); fm != FieldManager {
				t.Errorf("field manager %q, want %q", fm, FieldManager)
			}
			got, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, tc.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}

	// Neither an up-to-date policy nor a missing one is checked or
	// written; nor is one whose written status the cache has seen.
	if err := waitFor(ctx, func() bool {
		p, err := c.policies.Get("typo")
		return err == nil && p.Status.ObservedGeneration == 2
	}); err != nil {
		t.Fatal(err)
	}
	client.ClearActions()
	chk.calls = 0
	for _, name := range []string{"current", "gone", "typo"} {
		if err := c.sync(ctx, name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if w := writes(client); len(w) != 0 || chk.calls != 0 {
		t.Errorf("up-to-date policies: writes %v, %d checks; want none", w, chk.calls)
	}
}

// A new generation is checked again and its status replaces the old one.
func TestSyncFollowsGeneration(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := testPolicy("p", 1, "object.spec.replicass > 1")
	c, client, _ := newTestController(t, ctx, p)
	if err := c.sync(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	// The fake keeps no generation: bump it as the API server does on a
	// spec change.
	cur, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "p", metav1.GetOptions{})
	if err != nil || len(cur.Status.TypeChecking.ExpressionWarnings) != 1 {
		t.Fatalf("first check: %+v, %v", cur.Status, err)
	}
	cur.Generation = 2
	cur.Spec.Validations[0].Expression = "object.spec.replicas > 1"
	if _, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, func() bool {
		p, err := c.policies.Get("p")
		return err == nil && p.Generation == 2
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.sync(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	got, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Apply drops the typeChecking whose warnings it removed; what
	// counts is that no warning is left and the generation is observed.
	if got.Status.ObservedGeneration != 2 || (got.Status.TypeChecking != nil && len(got.Status.TypeChecking.ExpressionWarnings) != 0) {
		t.Errorf("status after the fix = %+v, want generation 2 observed without warnings", got.Status)
	}
}

func TestSyncFailures(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, client, chk := newTestController(t, ctx, testPolicy("p", 1, "object.spec.replicas > 1"))

	// A check that could not be done writes nothing and is retried.
	chk.err = errors.New("openapi unavailable")
	if err := c.sync(ctx, "p"); err == nil || !strings.Contains(err.Error(), "openapi unavailable") {
		t.Fatalf("sync = %v, want the checker's error", err)
	}
	if w := writes(client); len(w) != 0 {
		t.Fatalf("failed check wrote %v", w)
	}
	chk.err = nil

	// A refused write is retried.
	client.PrependReactor("patch", "validatingadmissionpolicies", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd down")
	})
	if err := c.sync(ctx, "p"); err == nil || !strings.Contains(err.Error(), "etcd down") {
		t.Fatalf("sync = %v, want the write's error", err)
	}
}

// The running controller picks policies up from the informer.
func TestRunChecksNewPolicies(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, client, _ := newTestController(t, ctx, testPolicy("before", 1, "object.spec.replicass > 1"))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, 2) }()
	if _, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, testPolicy("after", 1, "object.spec.replicas > 1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	status := func(name string) admissionregistrationv1.ValidatingAdmissionPolicyStatus {
		p, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return admissionregistrationv1.ValidatingAdmissionPolicyStatus{}
		}
		return p.Status
	}
	if err := waitFor(ctx, func() bool {
		b, a := status("before"), status("after")
		return b.TypeChecking != nil && len(b.TypeChecking.ExpressionWarnings) == 1 && a.TypeChecking != nil && len(a.TypeChecking.ExpressionWarnings) == 0
	}); err != nil {
		t.Fatalf("before %+v, after %+v: %v", status("before"), status("after"), err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}

func fieldManager(a clienttesting.Action) string {
	if p, ok := a.(clienttesting.PatchActionImpl); ok {
		return p.PatchOptions.FieldManager
	}
	return ""
}

func waitFor(ctx context.Context, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}
