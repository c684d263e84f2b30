package replicaset

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// lagging is a controller whose informer caches are filled by hand, so a
// test decides what the controller has seen of its own writes.
type lagging struct {
	c       *Controller
	factory informers.SharedInformerFactory
	creates atomic.Int32
	deletes atomic.Int32
}

func newLagging(t *testing.T) *lagging {
	t.Helper()
	client := fake.NewClientset()
	l := &lagging{}
	client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		p := a.(clienttesting.CreateAction).GetObject().(*v1.Pod)
		n := l.creates.Add(1)
		p.Name = fmt.Sprintf("%s%d", p.GenerateName, n)
		p.UID = types.UID(p.Name)
		return false, nil, nil
	})
	client.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		l.deletes.Add(1)
		return false, nil, nil
	})
	l.factory = informers.NewSharedInformerFactory(client, 0)
	c, err := NewReplicaSet(client, l.factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	l.c = c
	return l
}

// observe puts the pods the API server holds into the cache and tells the
// controller about them, as the informer would.
func (l *lagging) observe(t *testing.T) {
	t.Helper()
	list, err := l.c.client.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	store := l.factory.Core().V1().Pods().Informer().GetStore()
	for i := range list.Items {
		p := &list.Items[i]
		if _, exists, _ := store.Get(p); !exists {
			_ = store.Add(p)
			l.c.addPod(p)
		}
	}
	for _, obj := range store.List() {
		p := obj.(*v1.Pod)
		if _, err := l.c.client.CoreV1().Pods("ns").Get(context.Background(), p.Name, metav1.GetOptions{}); err != nil {
			_ = store.Delete(p)
			l.c.deletePod(p)
		}
	}
}

func TestExpectationsPreventDoubleCreation(t *testing.T) {
	l := newLagging(t)
	rs := testRS(5, 0)
	rs.UID = "rs-uid"
	if _, err := l.c.client.AppsV1().ReplicaSets("ns").Create(context.Background(), rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = l.factory.Apps().V1().ReplicaSets().Informer().GetStore().Add(rs)
	ctx := context.Background()

	if err := l.c.sync(ctx, "ns/web"); err != nil {
		t.Fatal(err)
	}
	if n := l.creates.Load(); n != 5 {
		t.Fatalf("first sync created %d pods, want 5", n)
	}
	// The cache has not seen the pods yet: syncing again must not create
	// another five.
	for range 3 {
		if err := l.c.sync(ctx, "ns/web"); err != nil {
			t.Fatal(err)
		}
	}
	if n := l.creates.Load(); n != 5 {
		t.Fatalf("syncs with a lagging cache created %d pods in all, want 5", n)
	}
	l.observe(t)
	if err := l.c.sync(ctx, "ns/web"); err != nil {
		t.Fatal(err)
	}
	if n := l.creates.Load(); n != 5 {
		t.Fatalf("%d pods created once the cache caught up, want 5", n)
	}

	// Scale down to 2: three deletions, and no more while the cache still
	// shows the deleted pods.
	rs.Spec.Replicas = ptr.To[int32](2)
	_ = l.factory.Apps().V1().ReplicaSets().Informer().GetStore().Update(rs)
	for range 3 {
		if err := l.c.sync(ctx, "ns/web"); err != nil {
			t.Fatal(err)
		}
	}
	if n := l.deletes.Load(); n != 3 {
		t.Fatalf("%d deletions for a scale from 5 to 2, want 3", n)
	}
	l.observe(t)
	if err := l.c.sync(ctx, "ns/web"); err != nil {
		t.Fatal(err)
	}
	if n, d := l.creates.Load(), l.deletes.Load(); n != 5 || d != 3 {
		t.Fatalf("after the cache caught up: %d created, %d deleted", n, d)
	}
}
