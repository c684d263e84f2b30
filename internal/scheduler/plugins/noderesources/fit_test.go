package noderesources

import (
	"context"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func nodeWith(n *v1.Node, pods ...*v1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(n)
	for _, p := range pods {
		ni.AddPod(framework.NewPodInfo(p))
	}
	return ni
}

func TestFitFilter(t *testing.T) {
	gpuPod := tu.Pod("gpu", "100m", "")
	gpuPod.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
	ephPod := tu.Pod("eph", "", "")
	ephPod.Spec.Containers[0].Resources.Requests[v1.ResourceEphemeralStorage] = resource.MustParse("200Gi")
	tiny := tu.WithAllocatable(tu.Node("n", 2, 4, nil), v1.ResourcePods, "1")
	// A RuntimeClass's overhead counts as the pod's request, as upstream:
	// 1500m of containers and 600m of sandbox do not fit in 2 CPUs.
	withOverhead := func(p *v1.Pod, cpu string) *v1.Pod {
		p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		node *framework.NodeInfo
		want []string
	}{
		{"fits", tu.Pod("p", "1", "1Gi"), nodeWith(tu.Node("n", 2, 4, nil)), nil},
		{"cpu taken by bound pods", tu.Pod("p", "1", ""), nodeWith(tu.Node("n", 2, 4, nil), tu.OnNode(tu.Pod("x", "1500m", ""), "n")), []string{"Insufficient cpu"}},
		{"cpu and memory", tu.Pod("p", "3", "5Gi"), nodeWith(tu.Node("n", 2, 4, nil)), []string{"Insufficient cpu", "Insufficient memory"}},
		{"no requests always fit", tu.Pod("p", "", ""), nodeWith(tu.Node("n", 2, 4, nil), tu.OnNode(tu.Pod("x", "2", "4Gi"), "n")), nil},
		{"too many pods", tu.Pod("p", "", ""), nodeWith(tiny, tu.OnNode(tu.Pod("x", "", ""), "n")), []string{"Too many pods"}},
		{"gpu on a node without", gpuPod, nodeWith(tu.Node("n", 2, 4, nil)), []string{"Insufficient nvidia.com/gpu"}},
		{"gpu on a gpu node", gpuPod, nodeWith(tu.WithAllocatable(tu.Node("n", 2, 4, nil), "nvidia.com/gpu", "2")), nil},
		{"ephemeral storage", ephPod, nodeWith(tu.Node("n", 2, 4, nil)), []string{"Insufficient ephemeral-storage"}},
		{"overhead tips a pod over", withOverhead(tu.Pod("p", "1500m", ""), "600m"), nodeWith(tu.Node("n", 2, 4, nil)), []string{"Insufficient cpu"}},
		{"overhead of bound pods", tu.Pod("p", "1", ""), nodeWith(tu.Node("n", 2, 4, nil), tu.OnNode(withOverhead(tu.Pod("x", "500m", ""), "600m"), "n")), []string{"Insufficient cpu"}},
		{"overhead that fits", withOverhead(tu.Pod("p", "1500m", ""), "500m"), nodeWith(tu.Node("n", 2, 4, nil)), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := (&Fit{}).Filter(context.Background(), nil, framework.NewPodInfo(tc.pod), tc.node)
			if !reflect.DeepEqual(st.Reasons(), tc.want) {
				t.Errorf("reasons = %q, want %q", st.Reasons(), tc.want)
			}
			if tc.want != nil && st.Code() != framework.Unschedulable {
				t.Errorf("code = %v, want Unschedulable (preemption may help)", st.Code())
			}
		})
	}
}

func TestScores(t *testing.T) {
	empty := nodeWith(tu.Node("n", 4, 8, nil))
	half := nodeWith(tu.Node("n", 4, 8, nil), tu.OnNode(tu.Pod("x", "2", "4Gi"), "n"))
	skewed := nodeWith(tu.Node("n", 4, 8, nil), tu.OnNode(tu.Pod("x", "4", ""), "n"))
	pod := framework.NewPodInfo(tu.Pod("p", "", ""))
	for _, tc := range []struct {
		name           string
		node           *framework.NodeInfo
		least, balance int64
	}{
		// Request-less pods count as 100m/200Mi for LeastAllocated only.
		{"empty", empty, (97 + 97) / 2, 100},
		{"half", half, (47 + 47) / 2, 100},
		{"cpu full", skewed, (0 + 95) / 2, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := (&Fit{}).Score(context.Background(), nil, pod, tc.node); got != tc.least {
				t.Errorf("least allocated = %d, want %d", got, tc.least)
			}
			if got, _ := (&Balanced{}).Score(context.Background(), nil, pod, tc.node); got != tc.balance {
				t.Errorf("balanced = %d, want %d", got, tc.balance)
			}
		})
	}
}
