package nodeports

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func withPort(p *v1.Pod, ip string, port int32, proto v1.Protocol) *v1.Pod {
	p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, v1.ContainerPort{ContainerPort: 80, HostPort: port, HostIP: ip, Protocol: proto})
	return p
}

func TestFilter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing *v1.Pod
		pod      *v1.Pod
		fits     bool
	}{
		{"free", nil, withPort(tu.Pod("p", "", ""), "", 8080, ""), true},
		{"same port", withPort(tu.Pod("x", "", ""), "", 8080, ""), withPort(tu.Pod("p", "", ""), "", 8080, v1.ProtocolTCP), false},
		{"other protocol", withPort(tu.Pod("x", "", ""), "", 8080, v1.ProtocolUDP), withPort(tu.Pod("p", "", ""), "", 8080, ""), true},
		{"different IPs", withPort(tu.Pod("x", "", ""), "10.0.0.1", 8080, ""), withPort(tu.Pod("p", "", ""), "10.0.0.2", 8080, ""), true},
		{"wildcard against an IP", withPort(tu.Pod("x", "", ""), "10.0.0.1", 8080, ""), withPort(tu.Pod("p", "", ""), "", 8080, ""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ni := framework.NewNodeInfo(tu.Node("n", 1, 1, nil))
			if tc.existing != nil {
				ni.AddPod(framework.NewPodInfo(tu.OnNode(tc.existing, "n")))
			}
			st := (&Plugin{}).Filter(context.Background(), nil, framework.NewPodInfo(tc.pod), ni)
			if st.IsSuccess() != tc.fits {
				t.Errorf("fits = %v, want %v", st.IsSuccess(), tc.fits)
			}
		})
	}
}
