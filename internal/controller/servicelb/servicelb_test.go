package servicelb

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func lb(name string, created time.Time) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, Ports: []v1.ServicePort{{Port: 80, Protocol: v1.ProtocolTCP}}}}
}

// TestControllerPool: services get pool addresses in creation order; the
// one left without gets an address when a deleted service frees one, and a
// service that stops being a LoadBalancer has its status cleared.
func TestControllerPool(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Now().Add(-time.Hour)
	client := fake.NewSimpleClientset(lb("a", t0), lb("b", t0.Add(time.Second)), lb("c", t0.Add(2*time.Second)))
	f := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, f, "10.50.0.1-10.50.0.2", nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	go func() { _ = c.Run(ctx, 1) }()

	want := func(what string, expect map[string]string) {
		t.Helper()
		var last string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			last = ""
			ok := true
			for name, ip := range expect {
				s, err := client.CoreV1().Services("ns").Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				got := ""
				if in := s.Status.LoadBalancer.Ingress; len(in) == 1 && in[0].IPMode != nil && *in[0].IPMode == v1.LoadBalancerIPModeVIP {
					got = in[0].IP
				} else if len(in) > 1 {
					got = fmt.Sprint(in)
				}
				last += fmt.Sprintf("%s=%q ", name, got)
				ok = ok && got == ip
			}
			if ok {
				return
			}
		}
		t.Fatalf("%s: got %s, want %v", what, last, expect)
	}
	want("initial", map[string]string{"a": "10.50.0.1", "b": "10.50.0.2", "c": ""})

	if err := client.CoreV1().Services("ns").Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want("after a is deleted", map[string]string{"b": "10.50.0.2", "c": "10.50.0.1"})

	b, _ := client.CoreV1().Services("ns").Get(ctx, "b", metav1.GetOptions{})
	b.Spec.Type = v1.ServiceTypeClusterIP
	if _, err := client.CoreV1().Services("ns").Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("after b becomes ClusterIP", map[string]string{"b": "", "c": "10.50.0.1"})
}
