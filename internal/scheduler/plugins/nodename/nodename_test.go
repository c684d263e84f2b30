package nodename

import (
	"context"
	"testing"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func TestFilter(t *testing.T) {
	for _, tc := range []struct {
		want, node string
		fits       bool
	}{{"", "a", true}, {"a", "a", true}, {"a", "b", false}} {
		p := tu.Pod("p", "", "")
		p.Spec.NodeName = tc.want
		st := (&Plugin{}).Filter(context.Background(), nil, framework.NewPodInfo(p), framework.NewNodeInfo(tu.Node(tc.node, 1, 1, nil)))
		if st.IsSuccess() != tc.fits {
			t.Errorf("nodeName %q on %q: fits = %v", tc.want, tc.node, st.IsSuccess())
		}
	}
}
