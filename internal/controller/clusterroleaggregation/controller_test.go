package clusterroleaggregation

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

func newTestController(t *testing.T, ctx context.Context, objs ...*rbacv1.ClusterRole) (*Controller, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset()
	for _, o := range objs {
		if _, err := client.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		t.Fatal("cache did not sync")
	}
	client.ClearActions()
	return c, client
}

func TestSyncWritesUnionOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	view := map[string]string{"aggregate-to-view": "true"}
	target := aggregating("view", map[string]string{"keep": "me"}, matching("aggregate-to-view", "true"))
	target.Rules = []rbacv1.PolicyRule{get("stale")}
	c, client := newTestController(t, ctx, target,
		role("b", view, get("services")),
		role("a", view, get("pods"), get("services")),
		role("plain", nil, get("nodes")),
	)

	if err := c.sync(ctx, "view"); err != nil {
		t.Fatal(err)
	}
	var patches []clienttesting.PatchAction
	for _, a := range client.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok {
			patches = append(patches, p)
		} else if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			t.Errorf("unexpected %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
	if len(patches) != 1 || patches[0].GetPatchType() != types.ApplyPatchType || patches[0].GetName() != "view" {
		t.Fatalf("writes = %v, want one apply of view", client.Actions())
	}
	got, err := client.RbacV1().ClusterRoles().Get(ctx, "view", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]rbacv1.PolicyRule{get("pods"), get("services")}, got.Rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if got.Labels["keep"] != "me" || got.AggregationRule == nil {
		t.Errorf("apply touched more than the rules: %+v", got)
	}

	// Once the cache has the written role, there is nothing left to do.
	if err := waitFor(ctx, func() bool {
		r, err := c.roles.Get("view")
		return err == nil && len(r.Rules) == 2
	}); err != nil {
		t.Fatal(err)
	}
	client.ClearActions()
	if err := c.sync(ctx, "view"); err != nil {
		t.Fatal(err)
	}
	if n := len(client.Actions()); n != 0 {
		t.Errorf("second sync made %d calls: %v", n, client.Actions())
	}
	// Neither a role without an aggregation rule nor a missing one is
	// written.
	for _, name := range []string{"plain", "gone"} {
		if err := c.sync(ctx, name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := len(client.Actions()); n != 0 {
		t.Errorf("syncing non-aggregated roles made calls: %v", client.Actions())
	}
}

// The running controller follows changes of the roles it aggregates.
func TestRunFollowsChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	view := map[string]string{"aggregate-to-view": "true"}
	c, client := newTestController(t, ctx,
		aggregating("view", map[string]string{"aggregate-to-edit": "true"}, matching("aggregate-to-view", "true")),
		aggregating("edit", nil, matching("aggregate-to-edit", "true")),
		role("viewer", view, get("pods")),
	)
	go func() { _ = c.Run(ctx, 2) }()
	// The informer's initial adds queue every aggregated role.
	rulesOf := func(name string) []rbacv1.PolicyRule {
		r, err := client.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return r.Rules
	}
	// edit aggregates view, which aggregates viewer: the chain settles.
	if err := waitFor(ctx, func() bool { return cmp.Equal(rulesOf("edit"), []rbacv1.PolicyRule{get("pods")}) }); err != nil {
		t.Fatalf("edit = %v: %v", rulesOf("edit"), err)
	}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, role("more", view, get("secrets")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{get("secrets"), get("pods")} // "more" sorts before "viewer"
	if err := waitFor(ctx, func() bool { return cmp.Equal(rulesOf("edit"), want) }); err != nil {
		t.Fatalf("edit = %v after a role was added: %v", rulesOf("edit"), err)
	}
	if err := client.RbacV1().ClusterRoles().Delete(ctx, "viewer", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, func() bool { return cmp.Equal(rulesOf("view"), []rbacv1.PolicyRule{get("secrets")}) }); err != nil {
		t.Fatalf("view = %v after a role was deleted: %v", rulesOf("view"), err)
	}
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
