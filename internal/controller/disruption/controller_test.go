package disruption

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	utilptr "k8s.io/utils/ptr"
)

// TestSync builds a fixture, syncs one budget and checks the status the
// controller wrote and the events it recorded.
func TestSync(t *testing.T) {
	sel := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "dep"}, Spec: appsv1.DeploymentSpec{Replicas: utilptr.To[int32](4)}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "ns", UID: "rs",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "dep", Controller: utilptr.To(true)}}}}
	webPod := func(name string, opts ...podOpt) *v1.Pod {
		p := pod(name, append([]podOpt{func(p *v1.Pod) {
			p.Labels = sel
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs", Controller: utilptr.To(true)}}
		}}, opts...)...)
		return p
	}
	budget := func(spec policyv1.PodDisruptionBudgetSpec) *policyv1.PodDisruptionBudget {
		spec.Selector = &metav1.LabelSelector{MatchLabels: sel}
		return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 1}, Spec: spec}
	}
	evictedAt := metav1.NewTime(now.Add(-30 * time.Second))
	tests := []struct {
		name       string
		pdb        *policyv1.PodDisruptionBudget
		objs       []runtime.Object
		want       policyv1.PodDisruptionBudgetStatus
		wantReason string
		wantEvent  string
	}{{
		name:       "maxUnavailable counts the Deployment's replicas",
		pdb:        budget(policyv1.PodDisruptionBudgetSpec{MaxUnavailable: utilptr.To(intstr.FromInt32(1))}),
		objs:       []runtime.Object{dep, rs, webPod("a", ready), webPod("b", ready), webPod("c", ready), webPod("d")},
		want:       policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, ExpectedPods: 4, DesiredHealthy: 3, CurrentHealthy: 3, DisruptionsAllowed: 0},
		wantReason: policyv1.InsufficientPodsReason,
	}, {
		name: "integer minAvailable counts the pods, evicted ones aside",
		pdb: func() *policyv1.PodDisruptionBudget {
			p := budget(policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(intstr.FromInt32(1))})
			p.Status.DisruptedPods = map[string]metav1.Time{"a": evictedAt}
			return p
		}(),
		objs: []runtime.Object{webPod("a", ready), webPod("b", ready), webPod("c", ready)},
		want: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, ExpectedPods: 3, DesiredHealthy: 1, CurrentHealthy: 2, DisruptionsAllowed: 1,
			DisruptedPods: map[string]metav1.Time{"a": evictedAt}},
		wantReason: policyv1.SufficientPodsReason,
	}, {
		name:       "no pods",
		pdb:        budget(policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(intstr.FromInt32(1))}),
		want:       policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DesiredHealthy: 1},
		wantReason: policyv1.InsufficientPodsReason, wantEvent: "Normal NoPods No matching pods found",
	}, {
		name:       "owner missing: fail safe",
		pdb:        budget(policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(intstr.FromString("50%"))}),
		objs:       []runtime.Object{webPod("a", ready)},
		want:       policyv1.PodDisruptionBudgetStatus{},
		wantReason: policyv1.SyncFailedReason,
		wantEvent:  `Warning CalculateExpectedPodCountFailed Failed to calculate the number of expected pods: found no controllers for pod "a"`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			client := fake.NewClientset(append(tc.objs, tc.pdb)...)
			factory := informers.NewSharedInformerFactory(client, 0)
			served := func(context.Context, schema.GroupVersionResource) (bool, error) { return true, nil }
			c, err := New(client, factory, fakeScales{}, &fakeMapper{}, served, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			rec := record.NewFakeRecorder(10)
			c.recorder = rec
			c.now = func() time.Time { return now }
			factory.Start(ctx.Done())
			factory.WaitForCacheSync(ctx.Done())
			if err := c.sync(ctx, "ns/web"); err != nil {
				t.Fatal(err)
			}
			var wrote *policyv1.PodDisruptionBudget
			for _, a := range client.Actions() {
				if u, ok := a.(k8stesting.UpdateAction); ok && a.GetSubresource() == "status" {
					wrote = u.GetObject().(*policyv1.PodDisruptionBudget)
				}
			}
			if wrote == nil {
				t.Fatalf("no status written; actions %v", client.Actions())
			}
			got := wrote.Status
			cond := apimeta.FindStatusCondition(got.Conditions, policyv1.DisruptionAllowedCondition)
			if cond == nil || cond.Reason != tc.wantReason {
				t.Errorf("condition %+v, want reason %s", cond, tc.wantReason)
			}
			got.Conditions = nil
			if got.ObservedGeneration != tc.want.ObservedGeneration || got.ExpectedPods != tc.want.ExpectedPods || got.DesiredHealthy != tc.want.DesiredHealthy ||
				got.CurrentHealthy != tc.want.CurrentHealthy || got.DisruptionsAllowed != tc.want.DisruptionsAllowed || len(got.DisruptedPods) != len(tc.want.DisruptedPods) {
				t.Errorf("status %+v\nwant   %+v", got, tc.want)
			}
			var events []string
			for len(rec.Events) > 0 {
				events = append(events, <-rec.Events)
			}
			if tc.wantEvent != "" && !strings.Contains(strings.Join(events, "\n"), tc.wantEvent) {
				t.Errorf("events %q, want %q", events, tc.wantEvent)
			}
			if tc.wantEvent == "" && len(events) != 0 {
				t.Errorf("unexpected events %q", events)
			}
		})
	}
}
