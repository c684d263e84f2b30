package kubelet

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func svcFor(ns, name, ip string, ports ...v1.ServicePort) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.ServiceSpec{ClusterIP: ip, Ports: ports}}
}

func TestServiceEnv(t *testing.T) {
	kubernetes := svcFor("default", "kubernetes", "10.43.0.1", v1.ServicePort{Name: "https", Protocol: v1.ProtocolTCP, Port: 443})
	kubeEnv := map[string]string{
		"KUBERNETES_SERVICE_HOST":       "10.43.0.1",
		"KUBERNETES_SERVICE_PORT":       "443",
		"KUBERNETES_SERVICE_PORT_HTTPS": "443",
		"KUBERNETES_PORT":               "tcp://10.43.0.1:443",
		"KUBERNETES_PORT_443_TCP":       "tcp://10.43.0.1:443",
		"KUBERNETES_PORT_443_TCP_PROTO": "tcp",
		"KUBERNETES_PORT_443_TCP_PORT":  "443",
		"KUBERNETES_PORT_443_TCP_ADDR":  "10.43.0.1",
	}
	// Upstream's own example (test/e2e/common/node/pods.go): an unnamed
	// port 8765 to 8080.
	fooservice := svcFor("app", "fooservice", "10.43.5.6", v1.ServicePort{Port: 8765, Protocol: v1.ProtocolTCP})
	fooEnv := map[string]string{
		"FOOSERVICE_SERVICE_HOST":        "10.43.5.6",
		"FOOSERVICE_SERVICE_PORT":        "8765",
		"FOOSERVICE_PORT":                "tcp://10.43.5.6:8765",
		"FOOSERVICE_PORT_8765_TCP":       "tcp://10.43.5.6:8765",
		"FOOSERVICE_PORT_8765_TCP_PROTO": "tcp",
		"FOOSERVICE_PORT_8765_TCP_PORT":  "8765",
		"FOOSERVICE_PORT_8765_TCP_ADDR":  "10.43.5.6",
	}
	merge := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	dns := svcFor("app", "my-dns", "10.43.0.10",
		v1.ServicePort{Name: "dns", Protocol: v1.ProtocolUDP, Port: 53},
		v1.ServicePort{Name: "dns-tcp", Protocol: v1.ProtocolTCP, Port: 53})
	for _, tc := range []struct {
		name     string
		services []*v1.Service
		ns       string
		links    bool
		want     map[string]string
	}{
		{"kubernetes service always", []*v1.Service{kubernetes, fooservice}, "other", true, kubeEnv},
		{"kubernetes service even without links", []*v1.Service{kubernetes, fooservice}, "app", false, kubeEnv},
		{"namespace's services with links", []*v1.Service{kubernetes, fooservice}, "app", true, merge(kubeEnv, fooEnv)},
		{"headless and ExternalName give nothing", []*v1.Service{
			svcFor("app", "headless", "None", v1.ServicePort{Port: 80}),
			{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "ext"}, Spec: v1.ServiceSpec{Type: v1.ServiceTypeExternalName, ExternalName: "example.com"}},
		}, "app", true, map[string]string{}},
		{"named ports, dashes and UDP", []*v1.Service{dns}, "app", true, map[string]string{
			"MY_DNS_SERVICE_HOST":         "10.43.0.10",
			"MY_DNS_SERVICE_PORT":         "53",
			"MY_DNS_SERVICE_PORT_DNS":     "53",
			"MY_DNS_SERVICE_PORT_DNS_TCP": "53",
			"MY_DNS_PORT":                 "udp://10.43.0.10:53",
			"MY_DNS_PORT_53_UDP":          "udp://10.43.0.10:53",
			"MY_DNS_PORT_53_UDP_PROTO":    "udp",
			"MY_DNS_PORT_53_UDP_PORT":     "53",
			"MY_DNS_PORT_53_UDP_ADDR":     "10.43.0.10",
			"MY_DNS_PORT_53_TCP":          "tcp://10.43.0.10:53",
			"MY_DNS_PORT_53_TCP_PROTO":    "tcp",
			"MY_DNS_PORT_53_TCP_PORT":     "53",
			"MY_DNS_PORT_53_TCP_ADDR":     "10.43.0.10",
		}},
		{"a namesake in the pod's namespace wins over default's", []*v1.Service{
			svcFor("app", "kubernetes", "10.43.9.9", v1.ServicePort{Port: 80, Protocol: v1.ProtocolTCP}), kubernetes,
		}, "app", true, map[string]string{
			"KUBERNETES_SERVICE_HOST":      "10.43.9.9",
			"KUBERNETES_SERVICE_PORT":      "80",
			"KUBERNETES_PORT":              "tcp://10.43.9.9:80",
			"KUBERNETES_PORT_80_TCP":       "tcp://10.43.9.9:80",
			"KUBERNETES_PORT_80_TCP_PROTO": "tcp",
			"KUBERNETES_PORT_80_TCP_PORT":  "80",
			"KUBERNETES_PORT_80_TCP_ADDR":  "10.43.9.9",
		}},
	} {
		got := serviceEnv(tc.services, tc.ns, tc.links)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.name, got, tc.want)
		}
	}
}

func TestWithServiceEnv(t *testing.T) {
	declared := []envVar{{"B", "mine"}, {"KUBERNETES_SERVICE_HOST", "override"}}
	got := withServiceEnv(declared, map[string]string{"KUBERNETES_SERVICE_HOST": "10.43.0.1", "Z_PORT": "1", "A_PORT": "2"})
	want := []envVar{{"B", "mine"}, {"KUBERNETES_SERVICE_HOST", "override"}, {"A_PORT", "2"}, {"Z_PORT", "1"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
