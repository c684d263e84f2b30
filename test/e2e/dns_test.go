package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterDNSFromAPod: a pod with dnsPolicy ClusterFirst has the
// kube-dns service as its resolver and resolves the kubernetes service and
// a service of its own namespace with busybox nslookup, through the
// service proxy's rules for 10.43.0.10:53.
func TestClusterDNSFromAPod(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	svc, err := client.CoreV1().Services(ns).Create(context.Background(), &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       v1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []v1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := simplePod(ns, "client", "exec sleep 3600")
	p.Spec.DNSPolicy = v1.DNSClusterFirst
	createPod(t, p)
	waitPod(t, ns, "client", time.Minute, "Running", running)

	conf := kubectlOK(t, "", "exec", "-n", ns, "client", "--", "cat", "/etc/resolv.conf")
	for _, want := range []string{"nameserver 10.43.0.10", "search " + ns + ".svc.cluster.local svc.cluster.local cluster.local", "options ndots:5"} {
		if !strings.Contains(conf, want) {
			t.Errorf("resolv.conf lacks %q:\n%s", want, conf)
		}
	}
	for _, tc := range []struct{ name, ip string }{
		{"kubernetes.default.svc.cluster.local", "10.43.0.1"},
		{"web." + ns + ".svc.cluster.local", svc.Spec.ClusterIP},
	} {
		var last string
		deadline := time.Now().Add(30 * time.Second)
		for {
			r := runKubectl(t, nil, "", "exec", "-n", ns, "client", "--", "nslookup", "-type=a", tc.name)
			last = fmt.Sprintf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			if r.Code == 0 && strings.Contains(r.Stdout, "Address: "+tc.ip) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("nslookup %s in a pod, want %s:\n%s", tc.name, tc.ip, last)
			}
			time.Sleep(time.Second)
		}
	}
	// A name that does not exist is NXDOMAIN, not a timeout.
	r := runKubectl(t, nil, "", "exec", "-n", ns, "client", "--", "nslookup", "-type=a", "nope."+ns+".svc.cluster.local")
	if r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, "NXDOMAIN") {
		t.Errorf("nslookup of an unknown service: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
