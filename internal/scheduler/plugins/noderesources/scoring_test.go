package noderesources

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

func TestStrategyScore(t *testing.T) {
	cpuMem := []ResourceWeight{{v1.ResourceCPU, 1}, {v1.ResourceMemory, 1}}
	cpuHeavy := []ResourceWeight{{v1.ResourceCPU, 3}, {v1.ResourceMemory, 1}}
	emptyFirst := []ShapePoint{{0, 10}, {100, 0}}
	fullFirst := []ShapePoint{{0, 0}, {100, 10}}
	stepped := []ShapePoint{{20, 0}, {50, 4}, {80, 10}}
	for _, tc := range []struct {
		name       string
		strategy   Strategy
		req, alloc []int64
		want       int64
	}{
		// 3000m of 4000m cpu (75%) and 5000 of 10000 memory (50%).
		{"least allocated", Strategy{Type: LeastAllocated, Resources: cpuMem}, []int64{3000, 5000}, []int64{4000, 10000}, (25 + 50) / 2},
		{"zero value is least allocated", Strategy{}, []int64{3000, 5000}, []int64{4000, 10000}, (25 + 50) / 2},
		{"most allocated", Strategy{Type: MostAllocated, Resources: cpuMem}, []int64{3000, 5000}, []int64{4000, 10000}, (75 + 50) / 2},
		{"most allocated weighted", Strategy{Type: MostAllocated, Resources: cpuHeavy}, []int64{3000, 5000}, []int64{4000, 10000}, (75*3 + 50) / 4},
		{"least allocated weighted", Strategy{Type: LeastAllocated, Resources: cpuHeavy}, []int64{3000, 5000}, []int64{4000, 10000}, (25*3 + 50) / 4},
		{"least allocated over capacity scores 0", Strategy{Type: LeastAllocated, Resources: cpuMem}, []int64{5000, 5000}, []int64{4000, 10000}, (0 + 50) / 2},
		{"most allocated over capacity counts as full", Strategy{Type: MostAllocated, Resources: cpuMem}, []int64{5000, 5000}, []int64{4000, 10000}, (100 + 50) / 2},
		{"resource the node lacks is left out", Strategy{Type: MostAllocated, Resources: cpuMem}, []int64{3000, 0}, []int64{4000, 0}, 75},
		{"node with nothing scores 0", Strategy{Type: MostAllocated, Resources: cpuMem}, []int64{0, 0}, []int64{0, 0}, 0},
		// Rounded mean: (25+50)/2 = 37.5.
		{"ratio like least allocated", Strategy{Type: RequestedToCapacityRatio, Resources: cpuMem, Shape: emptyFirst}, []int64{3000, 5000}, []int64{4000, 10000}, 38},
		{"ratio like most allocated", Strategy{Type: RequestedToCapacityRatio, Resources: cpuMem, Shape: fullFirst}, []int64{3000, 5000}, []int64{4000, 10000}, 63},
		{"ratio weighted", Strategy{Type: RequestedToCapacityRatio, Resources: cpuHeavy, Shape: fullFirst}, []int64{3000, 5000}, []int64{4000, 10000}, 69},
		// 75% is between 50 (40) and 80 (100): 40 + 60*25/30 = 90;
		// 10% is below the first point: 0, and a 0 leaves the mean.
		{"ratio broken line, zero left out", Strategy{Type: RequestedToCapacityRatio, Resources: cpuMem, Shape: stepped}, []int64{3000, 1000}, []int64{4000, 10000}, 90},
		{"ratio above the last point", Strategy{Type: RequestedToCapacityRatio, Resources: cpuMem, Shape: stepped}, []int64{3600, 9000}, []int64{4000, 10000}, 100},
		{"ratio over capacity is full", Strategy{Type: RequestedToCapacityRatio, Resources: cpuMem, Shape: emptyFirst}, []int64{5000, 0}, []int64{4000, 10000}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.strategy.Score(tc.req, tc.alloc); got != tc.want {
				t.Errorf("Score(%v, %v) = %d, want %d", tc.req, tc.alloc, got, tc.want)
			}
		})
	}
}

// TestFitScoreStrategies places a pod on an empty and on a half-full node:
// LeastAllocated prefers the empty one, MostAllocated the fuller one.
func TestFitScoreStrategies(t *testing.T) {
	empty := nodeWith(tu.Node("a", 4, 8, nil))
	half := nodeWith(tu.Node("b", 4, 8, nil), tu.OnNode(tu.Pod("x", "2", "4Gi"), "b"))
	pod := framework.NewPodInfo(tu.Pod("p", "1", "2Gi"))
	for _, tc := range []struct {
		name                string
		fit                 *Fit
		wantEmpty, wantHalf int64
	}{
		{"default", &Fit{}, 75, 25},
		{"most allocated", &Fit{Strategy: Strategy{Type: MostAllocated}}, 25, 75},
		{"most allocated on cpu only", &Fit{Strategy: Strategy{Type: MostAllocated, Resources: []ResourceWeight{{v1.ResourceCPU, 1}}}}, 25, 75},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := tc.fit.Score(context.Background(), nil, pod, empty)
			h, _ := tc.fit.Score(context.Background(), nil, pod, half)
			if e != tc.wantEmpty || h != tc.wantHalf {
				t.Errorf("scores empty=%d half=%d, want %d %d", e, h, tc.wantEmpty, tc.wantHalf)
			}
		})
	}
}

func TestFitIgnoredResources(t *testing.T) {
	pod := tu.Pod("p", "100m", "")
	pod.Spec.Containers[0].Resources.Requests["example.com/dongle"] = resource.MustParse("1")
	node := nodeWith(tu.Node("n", 2, 4, nil))
	for _, tc := range []struct {
		name    string
		ignored func(v1.ResourceName) bool
		want    int
	}{
		{"checked", nil, 1},
		{"ignored", func(n v1.ResourceName) bool { return n == "example.com/dongle" }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := (&Fit{Ignored: tc.ignored}).Filter(context.Background(), nil, framework.NewPodInfo(pod), node)
			if len(st.Reasons()) != tc.want {
				t.Errorf("reasons %q, want %d", st.Reasons(), tc.want)
			}
		})
	}
}

func TestBalancedScore(t *testing.T) {
	for _, tc := range []struct {
		name       string
		req, alloc []int64
		want       int64
	}{
		{"equal fractions", []int64{2, 4}, []int64{4, 8}, 100},
		{"two resources", []int64{4, 0}, []int64{4, 8}, 50},
		{"three resources", []int64{4, 0, 2}, []int64{4, 8, 4}, 59},
		{"absent resource left out", []int64{4, 0, 0}, []int64{4, 0, 0}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := balancedScore(tc.req, tc.alloc); got != tc.want {
				t.Errorf("balancedScore = %d, want %d", got, tc.want)
			}
		})
	}
}
