package etcdmember

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/orca-project/orca/internal/testutil"
)

func node(name string, ann map[string]string, finalizer, deleting bool) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann}}
	if finalizer {
		n.Finalizers = []string{Finalizer}
	}
	if deleting {
		now := metav1.Now()
		n.DeletionTimestamp = &now
	}
	return n
}

func TestDecide(t *testing.T) {
	three := []string{"a", "b", "c"}
	marked := map[string]string{NameAnnotation: "b"}
	remove := map[string]string{NameAnnotation: "b", RemoveAnnotation: "true"}
	for _, tc := range []struct {
		name    string
		n       *v1.Node
		self    string
		members []string
		want    Action
	}{
		{"its own unmarked node is marked", node("n-a", nil, false, false), "a", three, Action{Mark: true}},
		{"its own node named for an older member is marked again", node("n-a", map[string]string{NameAnnotation: "old"}, true, false), "a", three, Action{Mark: true}},
		{"its own marked node is left", node("n-a", map[string]string{NameAnnotation: "a"}, true, false), "a", three, Action{}},
		{"another server's node is left", node("n-b", marked, true, false), "a", three, Action{}},
		{"a node without a member is left", node("worker", nil, false, true), "a", three, Action{}},
		{"a deleted server's node: member removed, node let go", node("n-b", marked, true, true), "a", three, Action{Remove: "b", Release: true}},
		{"a deleted node whose member is gone is let go", node("n-b", marked, true, true), "a", []string{"a", "c"}, Action{Release: true}},
		{"its own deleted node is left to the others", node("n-a", map[string]string{NameAnnotation: "a"}, true, true), "a", three, Action{}},
		{"the last server's deleted node is let go", node("n-a", map[string]string{NameAnnotation: "a"}, true, true), "a", []string{"a"}, Action{Release: true}},
		{"a deleted node already let go", node("n-b", marked, false, true), "a", three, Action{}},
		{"annotated for removal: member removed and recorded", node("n-b", remove, true, false), "a", three, Action{Remove: "b", Record: true}},
		{"annotated for removal, removed already: recorded", node("n-b", remove, true, false), "a", []string{"a", "c"}, Action{Record: true}},
		{"annotated and recorded: nothing more", node("n-b", map[string]string{NameAnnotation: "b", RemoveAnnotation: "true", RemovedAnnotation: "b"}, true, false), "a", []string{"a", "c"}, Action{}},
		{"its own member is removed by the others", node("n-a", map[string]string{NameAnnotation: "a", RemoveAnnotation: "true"}, true, false), "a", three, Action{}},
		{"the last member is not removed", node("n-b", remove, true, false), "a", []string{"b"}, Action{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.n, tc.self, "n-"+tc.self, tc.members); got != tc.want {
				t.Errorf("Decide = %+v, want %+v", got, tc.want)
			}
		})
	}
}

type fakeMembers struct{ names []string }

func (f *fakeMembers) Names(context.Context) ([]string, error) { return slices.Clone(f.names), nil }
func (f *fakeMembers) Remove(_ context.Context, name string) error {
	f.names = slices.DeleteFunc(f.names, func(n string) bool { return n == name })
	return nil
}

// TestController: a server marks its own node; when another server's
// node is deleted, its member goes and the node is let go.
func TestController(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewSimpleClientset(
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n-a"}},
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n-b", Annotations: map[string]string{NameAnnotation: "b"}, Finalizers: []string{Finalizer}}},
	)
	members := &fakeMembers{names: []string{"a", "b", "c"}}
	c, err := New(Config{Client: client, Members: members, Self: "a", OwnNode: "n-a", Address: "10.0.0.1", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Run(ctx) }()
	testutil.Eventually(t, 10*time.Second, "the own node marked with the member and the finalizer", func() bool {
		n, err := client.CoreV1().Nodes().Get(ctx, "n-a", metav1.GetOptions{})
		return err == nil && n.Annotations[NameAnnotation] == "a" && n.Annotations[AddressAnnotation] == "10.0.0.1" && slices.Contains(n.Finalizers, Finalizer)
	})
	// The fake clientset does not keep finalized objects: a deletion is
	// an update that sets the deletion timestamp.
	b, _ := client.CoreV1().Nodes().Get(ctx, "n-b", metav1.GetOptions{})
	now := metav1.Now()
	b.DeletionTimestamp = &now
	if _, err := client.CoreV1().Nodes().Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the deleted node let go", func() bool {
		n, err := client.CoreV1().Nodes().Get(ctx, "n-b", metav1.GetOptions{})
		return err == nil && len(n.Finalizers) == 0
	})
	if names, _ := members.Names(ctx); !slices.Equal(names, []string{"a", "c"}) {
		t.Errorf("members after the node's deletion: %v", names)
	}
}
