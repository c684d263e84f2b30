package nodeipam

import (
	"context"
	"log/slog"
	"maps"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// TestRunAssignsAroundHeldRanges: ranges Nodes already hold are taken
// before the first new one is handed out.
func TestRunAssignsAroundHeldRanges(t *testing.T) {
	node := func(name, cidr string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{PodCIDR: cidr}}
	}
	cases := []struct {
		name  string
		nodes []runtime.Object
		want  map[string]string
	}{
		{"fresh nodes in block order", []runtime.Object{node("a", "")}, map[string]string{"a": "10.42.0.0/24"}},
		{"held first block skipped", []runtime.Object{node("old", "10.42.0.0/24"), node("new", "")},
			map[string]string{"old": "10.42.0.0/24", "new": "10.42.1.0/24"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(tc.nodes...)
			factory := informers.NewSharedInformerFactory(client, 0)
			c, err := New(client, factory, "10.42.0.0/16", 24, nil, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			factory.Start(ctx.Done())
			go func() { _ = c.Run(ctx, 1) }()
			deadline := time.Now().Add(5 * time.Second)
			for {
				got := map[string]string{}
				list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range list.Items {
					got[n.Name] = n.Spec.PodCIDR
				}
				if maps.Equal(got, tc.want) {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("pod CIDRs %v, want %v", got, tc.want)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
