package integration

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestClusterDNS: the server publishes kube-system/kube-dns at 10.43.0.10,
// its EndpointSlice names the DNS server's port, and that server answers
// for services created through the API.
func TestClusterDNS(t *testing.T) {
	ctx := context.Background()
	var port int32
	eventually(t, 30*time.Second, func() error {
		svc, err := client.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if svc.Spec.ClusterIP != "10.43.0.10" || len(svc.Spec.Ports) != 2 || svc.Spec.Ports[0].Port != 53 {
			return fmt.Errorf("kube-dns service: %+v", svc.Spec)
		}
		s, err := client.DiscoveryV1().EndpointSlices("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(s.Endpoints) != 1 || s.Endpoints[0].Conditions.Ready == nil || !*s.Endpoints[0].Conditions.Ready || len(s.Ports) == 0 {
			return fmt.Errorf("kube-dns slice not ready: %+v", s.Endpoints)
		}
		if s.Labels[discoveryv1.LabelServiceName] != "kube-dns" || svc.Spec.Ports[0].TargetPort != intstr.FromInt32(*s.Ports[0].Port) {
			return fmt.Errorf("kube-dns slice %v does not match the service's target port", s.Ports)
		}
		port = *s.Ports[0].Port
		return nil
	})
	ns := newNamespace(t, client, "dns")
	if _, err := client.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	web, err := client.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port)))
	for _, tc := range []struct{ name, want string }{
		{"kubernetes.default.svc.cluster.local.", "10.43.0.1"},
		{"web." + ns + ".svc.cluster.local.", web.Spec.ClusterIP},
	} {
		eventually(t, 10*time.Second, func() error {
			for _, proto := range []string{"udp", "tcp"} {
				resp, _, err := (&mdns.Client{Net: proto, Timeout: 2 * time.Second}).Exchange(new(mdns.Msg).SetQuestion(tc.name, mdns.TypeA), addr)
				if err != nil {
					return err
				}
				if len(resp.Answer) != 1 || resp.Answer[0].(*mdns.A).A.String() != tc.want {
					return fmt.Errorf("%s over %s: %v, want A %s", tc.name, proto, resp.Answer, tc.want)
				}
			}
			return nil
		})
	}
	resp, _, err := (&mdns.Client{Timeout: 2 * time.Second}).Exchange(new(mdns.Msg).SetQuestion("nope."+ns+".svc.cluster.local.", mdns.TypeA), addr)
	if err != nil || resp.Rcode != mdns.RcodeNameError {
		t.Errorf("unknown service: %v %v, want NXDOMAIN", resp, err)
	}
	metrics, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := `coredns_dns_responses_total{rcode="NXDOMAIN",zone="cluster.local."}`; !strings.Contains(string(metrics), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}
