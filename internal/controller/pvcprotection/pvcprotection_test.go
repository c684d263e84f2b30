package pvcprotection

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// fixture is a controller whose informer caches hold cached, and whose
// API server holds those and apiOnly (objects the caches have not seen).
func fixture(t *testing.T, cached, apiOnly []runtime.Object) (*Controller, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset(append(slices.Clone(cached), apiOnly...)...)
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range cached {
		var err error
		switch o := o.(type) {
		case *v1.PersistentVolumeClaim:
			err = factory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(o)
		case *v1.Pod:
			err = factory.Core().V1().Pods().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return c, client
}

// actions are the verbs and resources the controller sent, as
// "update persistentvolumeclaims" or "update persistentvolumeclaims/status".
func actions(client *fake.Clientset) []string {
	var out []string
	for _, a := range client.Actions() {
		r := a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			r += "/" + sub
		}
		out = append(out, a.GetVerb()+" "+r)
	}
	return out
}

func TestSync(t *testing.T) {
	web := pod("web", withEphemeral("scratch"), deleting(0))
	for _, tc := range []struct {
		name    string
		cached  []runtime.Object
		apiOnly []runtime.Object
		actions []string
		want    []string // finalizers written by the update
	}{
		{
			name:    "a pod in the cache keeps the claim without a live list",
			cached:  []runtime.Object{claim("data", true, Finalizer), pod("app", withClaim("data"))},
			actions: nil,
		},
		{
			name:    "a pod the cache has not seen keeps the claim",
			cached:  []runtime.Object{claim("data", true, Finalizer)},
			apiOnly: []runtime.Object{pod("app", withClaim("data"))},
			actions: []string{"list pods"},
		},
		{
			name:    "a finished pod still keeps the claim",
			cached:  []runtime.Object{claim("data", true, Finalizer), pod("job", withClaim("data"), inPhase(v1.PodSucceeded))},
			actions: nil,
		},
		{
			name:    "with no pod using it the finalizer goes, others stay",
			cached:  []runtime.Object{claim("data", true, "example.com/x", Finalizer), pod("app", withClaim("other")), pod("new", withClaim("data"), unscheduled)},
			actions: []string{"list pods", "update persistentvolumeclaims"},
			want:    []string{"example.com/x"},
		},
		{
			name:    "a shut-down pod lets its ephemeral claim go",
			cached:  []runtime.Object{ownedBy(claim("web-scratch", true, Finalizer), web), web},
			actions: []string{"list pods", "update persistentvolumeclaims"},
			want:    []string{},
		},
		{
			name:    "a live claim without the finalizer gets it",
			cached:  []runtime.Object{claim("data", false, "example.com/x")},
			actions: []string{"update persistentvolumeclaims"},
			want:    []string{"example.com/x", Finalizer},
		},
		{
			name:    "a live protected claim is left alone",
			cached:  []runtime.Object{claim("data", false, Finalizer)},
			actions: nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, client := fixture(t, tc.cached, tc.apiOnly)
			key := "ns/" + tc.cached[0].(*v1.PersistentVolumeClaim).Name
			if err := c.sync(context.Background(), key); err != nil {
				t.Fatal(err)
			}
			if got := actions(client); !slices.Equal(got, tc.actions) {
				t.Fatalf("actions %q, want %q", got, tc.actions)
			}
			if tc.want == nil {
				return
			}
			u := client.Actions()[len(client.Actions())-1].(clienttesting.UpdateAction).GetObject().(*v1.PersistentVolumeClaim)
			if !slices.Equal(u.Finalizers, tc.want) {
				t.Errorf("finalizers %q, want %q", u.Finalizers, tc.want)
			}
			if u.ResourceVersion != "7" {
				t.Errorf("update at resourceVersion %q, want the cached 7", u.ResourceVersion)
			}
		})
	}
}

// bound is a live, Bound claim whose Unused condition, if any, has status.
func bound(name string, unused v1.ConditionStatus, finalizers ...string) *v1.PersistentVolumeClaim {
	pvc := claim(name, false, finalizers...)
	pvc.Status.Phase = v1.ClaimBound
	if unused != "" {
		pvc.Status.Conditions = []v1.PersistentVolumeClaimCondition{{Type: v1.PersistentVolumeClaimUnused, Status: unused, LastTransitionTime: deletedAt}}
	}
	return pvc
}

func TestSyncUnusedCondition(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		cached     []runtime.Object
		apiOnly    []runtime.Object
		actions    []string
		unused     v1.ConditionStatus // written to status; "": none
		finalizers []string           // written by the update; nil: none
	}{
		{
			name:    "a pending pod in the cache makes a claim used",
			cached:  []runtime.Object{bound("data", "", Finalizer), pod("app", withClaim("data"), unscheduled, inPhase(v1.PodPending))},
			actions: []string{"update persistentvolumeclaims/status"},
			unused:  v1.ConditionFalse,
		},
		{
			name:    "a pod the cache has not seen makes it used again",
			cached:  []runtime.Object{bound("data", v1.ConditionTrue, Finalizer)},
			apiOnly: []runtime.Object{pod("app", withClaim("data"), running)},
			actions: []string{"list pods", "update persistentvolumeclaims/status"},
			unused:  v1.ConditionFalse,
		},
		{
			name:    "only a finished pod: unused",
			cached:  []runtime.Object{bound("data", v1.ConditionFalse, Finalizer), pod("job", withClaim("data"), inPhase(v1.PodSucceeded))},
			actions: []string{"list pods", "update persistentvolumeclaims/status"},
			unused:  v1.ConditionTrue,
		},
		{
			name:    "still used: nothing written",
			cached:  []runtime.Object{bound("data", v1.ConditionFalse, Finalizer), pod("app", withClaim("data"), running)},
			actions: nil,
		},
		{
			name:    "still unused: only the live list",
			cached:  []runtime.Object{bound("data", v1.ConditionTrue, Finalizer)},
			actions: []string{"list pods"},
		},
		{
			name:       "an old claim gets the condition, then the finalizer",
			cached:     []runtime.Object{bound("data", "")},
			actions:    []string{"list pods", "update persistentvolumeclaims/status", "update persistentvolumeclaims"},
			unused:     v1.ConditionTrue,
			finalizers: []string{Finalizer},
		},
		{
			name:    "a pending claim is not tracked",
			cached:  []runtime.Object{claim("data", false, Finalizer), pod("app", withClaim("data"))},
			actions: nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, client := fixture(t, tc.cached, tc.apiOnly)
			c.now = func() time.Time { return now }
			if err := c.sync(context.Background(), "ns/data"); err != nil {
				t.Fatal(err)
			}
			if got := actions(client); !slices.Equal(got, tc.actions) {
				t.Fatalf("actions %q, want %q", got, tc.actions)
			}
			for _, a := range client.Actions() {
				u, ok := a.(clienttesting.UpdateAction)
				if !ok {
					continue
				}
				pvc := u.GetObject().(*v1.PersistentVolumeClaim)
				if u.GetSubresource() == "status" {
					cond := pvc.Status.Conditions[len(pvc.Status.Conditions)-1]
					if cond.Type != v1.PersistentVolumeClaimUnused || cond.Status != tc.unused || !cond.LastTransitionTime.Time.Equal(now) {
						t.Errorf("condition %+v, want Unused=%s at %v", cond, tc.unused, now)
					}
					continue
				}
				if !slices.Equal(pvc.Finalizers, tc.finalizers) {
					t.Errorf("finalizers %q, want %q", pvc.Finalizers, tc.finalizers)
				}
				// Written over the status update, not the cached claim.
				if n := len(pvc.Status.Conditions); n == 0 || pvc.Status.Conditions[n-1].Type != v1.PersistentVolumeClaimUnused {
					t.Errorf("finalizer update from a claim without the new condition: %+v", pvc.Status.Conditions)
				}
			}
		})
	}
}

// A claim changed since the cache saw it is not overwritten: the
// conflict comes back so that the key is retried.
func TestSyncRetriesOnConflict(t *testing.T) {
	c, client := fixture(t, []runtime.Object{claim("data", true, Finalizer)}, nil)
	client.PrependReactor("update", "persistentvolumeclaims", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(v1.Resource("persistentvolumeclaims"), "data", nil)
	})
	if err := c.sync(context.Background(), "ns/data"); !apierrors.IsConflict(err) {
		t.Fatalf("sync = %v, want the conflict", err)
	}
}

func TestPodEventsRequeueClaims(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, cur any
		want     int
	}{
		// The Unused condition may change with any pod event.
		{"a running pod's update", pod("p", withClaim("data"), running), pod("p", withClaim("data"), running), 1},
		{"a new pod", nil, pod("p", withClaim("data"), withEphemeral("scratch"), withConfigMap("cm")), 2},
		{"a deleted pod's tombstone", nil, tombstone(pod("p", withClaim("data"), running)), 1},
		{"a pod without claims", nil, pod("p", withConfigMap("cm")), 0},
		// The update hides the deletion of the old pod, which held a
		// claim the new one does not name.
		{"a pod replaced under the same name", pod("p", withClaim("old"), running), pod("p", withClaim("new"), running, func(p *v1.Pod) { p.UID = "other" }), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := fixture(t, nil, nil)
			c.podChanged(tc.old, tc.cur)
			if got := c.queue.Len(); got != tc.want {
				t.Errorf("%d claims queued, want %d", got, tc.want)
			}
		})
	}
}

func TestClaimEventsQueueOnlyClaimsToWorkOn(t *testing.T) {
	tracked := func(pvc *v1.PersistentVolumeClaim) *v1.PersistentVolumeClaim {
		pvc.Status.Conditions = []v1.PersistentVolumeClaimCondition{{Type: v1.PersistentVolumeClaimUnused, Status: v1.ConditionFalse}}
		return pvc
	}
	c, _ := fixture(t, nil, nil)
	c.claimChanged(tracked(claim("protected", false, Finalizer)))
	c.claimChanged(tracked(claim("gone-already", true, "example.com/x")))
	if c.queue.Len() != 0 {
		t.Fatalf("queued claims with nothing to do")
	}
	c.claimChanged(tracked(claim("old", false)))
	c.claimChanged(tracked(claim("deleting", true, Finalizer)))
	c.claimChanged(claim("no-condition-yet", false, Finalizer))
	if c.queue.Len() != 3 {
		t.Fatalf("%d claims queued, want 3", c.queue.Len())
	}
}

// Run wires the informers to sync: a claim being deleted that no pod
// uses loses the finalizer once the controller runs.
func TestRun(t *testing.T) {
	client := fake.NewClientset(claim("data", true, "example.com/x", Finalizer), pod("app", withClaim("other")))
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, 1) }()
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		pvc, err := client.CoreV1().PersistentVolumeClaims("ns").Get(ctx, "data", metav1.GetOptions{})
		return err == nil && slices.Equal(pvc.Finalizers, []string{"example.com/x"}), nil
	})
	if err != nil {
		t.Fatalf("finalizer not removed: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	factory.Shutdown()
}
