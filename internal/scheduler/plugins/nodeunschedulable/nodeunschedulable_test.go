package nodeunschedulable

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func TestFilter(t *testing.T) {
	cordoned := tu.Node("n", 1, 1, nil)
	cordoned.Spec.Unschedulable = true
	tolerating := tu.Pod("t", "", "")
	tolerating.Spec.Tolerations = []v1.Toleration{{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	for _, tc := range []struct {
		name string
		node *v1.Node
		pod  *v1.Pod
		fits bool
	}{
		{"schedulable", tu.Node("n", 1, 1, nil), tu.Pod("p", "", ""), true},
		{"cordoned", cordoned, tu.Pod("p", "", ""), false},
		{"cordoned but tolerated", cordoned, tolerating, true},
	} {
		st := (&Plugin{}).Filter(context.Background(), nil, framework.NewPodInfo(tc.pod), framework.NewNodeInfo(tc.node))
		if st.IsSuccess() != tc.fits || (!tc.fits && st.Message() != ErrReason) {
			t.Errorf("%s: fits = %v (%q), want %v", tc.name, st.IsSuccess(), st.Message(), tc.fits)
		}
	}
}
