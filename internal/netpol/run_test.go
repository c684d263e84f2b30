package netpol

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/knftables"

	"github.com/orca-project/orca/internal/testutil"
)

// TestEnforcer: a policy in the cluster isolates the node's pods in the
// table; a pod the kubelet admits is in the table when Admit returns,
// before its address reaches the API; a deleted policy frees the pods.
func TestEnforcer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pod := func(name, ip, node string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name, Labels: map[string]string{"app": "db"}},
			Spec: v1.PodSpec{NodeName: node}, Status: v1.PodStatus{PodIP: ip, Phase: v1.PodRunning}}
	}
	client := fake.NewSimpleClientset(
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}},
		pod("db-0", "10.42.0.5", "n1"), pod("db-1", "10.42.1.5", "n2"),
		policy("deny", nil, ingressOnly, nil),
	)
	nft := knftables.NewFake(Family, Table)
	e, err := New(Options{Client: client, NodeName: "n1", NFT: nft, MinSyncPeriod: 10 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.Run(ctx) }()
	isolated := func(ip string) bool {
		els, err := nft.ListElements(ctx, "map", ingressPodsMap)
		if err != nil {
			return false
		}
		for _, el := range els {
			if strings.Join(el.Key, "") == ip {
				return true
			}
		}
		return false
	}
	testutil.Eventually(t, 10*time.Second, "the local pod isolated", func() bool { return isolated("10.42.0.5") })
	if isolated("10.42.1.5") {
		t.Error("a pod of another node is in this node's table")
	}

	// A new pod of this node, before the API knows its address.
	actx, acancel := context.WithTimeout(ctx, 10*time.Second)
	defer acancel()
	if err := e.Admit(actx, pod("db-2", "", "n1"), "10.42.0.9"); err != nil {
		t.Fatal(err)
	}
	if !isolated("10.42.0.9") {
		t.Error("Admit returned before the pod was isolated")
	}

	if err := client.NetworkingV1().NetworkPolicies("prod").Delete(ctx, "deny", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the pods freed with the policy gone", func() bool { return !isolated("10.42.0.5") && !isolated("10.42.0.9") })
}
