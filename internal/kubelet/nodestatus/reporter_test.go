package nodestatus

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestReporterRegistersNodeAndRenewsLease(t *testing.T) {
	client := fake.NewClientset()
	r := &Reporter{
		Client: client,
		Spec: Spec{Name: "n1", MaxPods: 110, KubeletPort: 10250,
			Labels:    map[string]string{"kubernetes.io/hostname": "n1", "gpu": "true"},
			Taints:    []v1.Taint{{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}},
			Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "192.0.2.7"}}},
		Observe:         func(context.Context) Machine { return healthy() },
		StatusFrequency: 20 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()

	var node *v1.Node
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		n, err := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
		if err == nil && len(n.Status.Conditions) > 0 {
			node = n
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if node == nil {
		t.Fatal("node not registered with a status")
	}
	if node.Labels["gpu"] != "true" || len(node.Spec.Taints) != 1 || node.Status.DaemonEndpoints.KubeletEndpoint.Port != 10250 ||
		node.Status.Addresses[0].Address != "192.0.2.7" {
		t.Errorf("node %+v", node)
	}
	var renew1 time.Time
	for time.Now().Before(deadline) {
		l, err := client.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, "n1", metav1.GetOptions{})
		if err == nil && l.Spec.RenewTime != nil {
			if renew1.IsZero() {
				renew1 = l.Spec.RenewTime.Time
				if *l.Spec.HolderIdentity != "n1" || *l.Spec.LeaseDurationSeconds != 40 || l.OwnerReferences[0].Kind != "Node" {
					t.Errorf("lease %+v", l.Spec)
				}
			} else if l.Spec.RenewTime.After(renew1) {
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if renew1.IsZero() || time.Now().After(deadline) {
		t.Fatal("lease not created and renewed")
	}

	// A node deleted under a running agent comes back.
	if err := client.CoreV1().Nodes().Delete(ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for time.Now().Before(deadline) {
		if _, err := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{}); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("node not registered again after deletion")
}
