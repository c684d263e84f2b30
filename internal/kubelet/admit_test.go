package kubelet

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestHostPortsConflict(t *testing.T) {
	pod := func(ports ...v1.ContainerPort) *v1.Pod {
		return &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Ports: ports}}}}
	}
	tcp := func(port int32, ip string) v1.ContainerPort {
		return v1.ContainerPort{ContainerPort: 80, HostPort: port, HostIP: ip}
	}
	udp := v1.ContainerPort{ContainerPort: 53, HostPort: 5353, Protocol: v1.ProtocolUDP}
	for _, tc := range []struct {
		name     string
		pod      *v1.Pod
		admitted []*v1.Pod
		want     bool
	}{
		{"no host ports", pod(v1.ContainerPort{ContainerPort: 80}), []*v1.Pod{pod(tcp(8080, ""))}, false},
		{"same port, every address", pod(tcp(8080, "")), []*v1.Pod{pod(tcp(8080, ""))}, true},
		{"same port, one address against every address", pod(tcp(8080, "10.0.0.1")), []*v1.Pod{pod(tcp(8080, ""))}, true},
		{"same port, different addresses", pod(tcp(8080, "10.0.0.1")), []*v1.Pod{pod(tcp(8080, "10.0.0.2"))}, false},
		{"other port", pod(tcp(8081, "")), []*v1.Pod{pod(tcp(8080, ""))}, false},
		{"same number, other protocol", pod(v1.ContainerPort{ContainerPort: 53, HostPort: 5353, Protocol: v1.ProtocolTCP}), []*v1.Pod{pod(udp)}, false},
		{"udp against udp", pod(udp), []*v1.Pod{pod(udp)}, true},
		{"nothing admitted", pod(tcp(8080, "")), nil, false},
	} {
		if got := hostPortsConflict(tc.pod, tc.admitted); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
