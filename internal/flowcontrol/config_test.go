package flowcontrol

import (
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	registry "github.com/orca-project/orca/internal/registry/flowcontrol"
)

// TestBootstrapLimits: the default server's 600 seats split as upstream
// splits them.
func TestBootstrapLimits(t *testing.T) {
	p := bootstrapPlan(600)
	want := map[string][4]int{ // nominal, min, max, maxSeats
		"exempt":          {0, 0, 600, 0},
		"catch-all":       {13, 13, 613, 0},
		"system":          {74, 50, 674, 12},
		"node-high":       {98, 73, 698, 15},
		"leader-election": {25, 25, 625, 4},
		"workload-high":   {98, 49, 698, 15},
		"workload-low":    {245, 24, 845, 37},
		"global-default":  {49, 24, 649, 8},
	}
	if len(p.levels) != len(want) {
		t.Fatalf("%d levels, want %d", len(p.levels), len(want))
	}
	sum := 0
	for name, w := range want {
		l := p.levels[name]
		if got := [4]int{l.nominalCL, l.minCL, l.maxCL, l.maxSeats}; got != w {
			t.Errorf("%s: nominal, min, max, max seats = %v, want %v", name, got, w)
		}
		sum += l.nominalCL
	}
	if p.nominalSum != sum {
		t.Errorf("nominal sum %d, want %d", p.nominalSum, sum)
	}
	var order []string
	for _, fs := range p.schemas {
		order = append(order, fs.Name)
	}
	wantOrder := []string{"exempt", "probes", "system-leader-election", "system-node-high", "system-nodes",
		"kube-controller-manager", "kube-scheduler", "kube-system-service-accounts", "service-accounts", "global-default", "catch-all"}
	if len(order) != len(wantOrder) {
		t.Fatalf("schemas %v, want %v", order, wantOrder)
	}
	for i := range order {
		if order[i] != wantOrder[i] {
			t.Fatalf("schemas %v, want %v", order, wantOrder)
		}
	}
}

// TestImaginedMandatoryObjects: with no objects at all, requests still
// have the exempt and catch-all levels, which then share every seat.
func TestImaginedMandatoryObjects(t *testing.T) {
	p := makePlan(nil, nil, 600, time.Unix(0, 0))
	if len(p.schemas) != 2 || p.schemas[0].Name != "exempt" || p.schemas[1].Name != "catch-all" {
		t.Fatalf("schemas %v", p.schemas)
	}
	if l := p.levels["catch-all"]; l.nominalCL != 600 || !p.levels["exempt"].queuing.Exempt {
		t.Errorf("levels %+v", p.levels)
	}
}

func TestDanglingConditions(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	schema := func(name, level string, conds ...flowcontrolv1.FlowSchemaCondition) *flowcontrolv1.FlowSchema {
		fs := registry.SuggestedFlowSchemas()[8].DeepCopy()
		fs.Name, fs.Spec.PriorityLevelConfiguration.Name, fs.Spec.MatchingPrecedence = name, level, 5000
		fs.Status.Conditions = conds
		return fs
	}
	found := flowcontrolv1.FlowSchemaCondition{Type: "Dangling", Status: "False", Reason: "Found",
		Message: `This FlowSchema references the PriorityLevelConfiguration object named "global-default" and it exists`}
	broken := registry.SuggestedPriorityLevelConfigurations()[0].DeepCopy()
	broken.Name = "broken" // Limited but missing its limit response's queuing
	broken.Spec.Limited.LimitResponse.Queuing = nil
	pls := append(registry.SuggestedPriorityLevelConfigurations(), broken)
	p := makePlan(pls, []*flowcontrolv1.FlowSchema{
		schema("fresh", "global-default"),
		schema("known", "global-default", found),
		schema("missing", "nowhere", found),
		schema("on-broken", "broken"),
	}, 600, now)
	got := map[string]flowcontrolv1.FlowSchemaCondition{}
	for _, u := range p.conditions {
		got[u.schema] = u.condition
	}
	if len(got) != 3 {
		t.Fatalf("updates for %v, want fresh, missing and on-broken", got)
	}
	want := found
	want.LastTransitionTime = metav1.NewTime(now)
	if got["fresh"] != want {
		t.Errorf("fresh: %+v", got["fresh"])
	}
	if c := got["missing"]; c.Status != "True" || c.Reason != "NotFound" ||
		c.Message != `This FlowSchema references the PriorityLevelConfiguration object named "nowhere" but there is no such object` {
		t.Errorf("missing: %+v", c)
	}
	if c := got["on-broken"]; c.Status != "True" {
		t.Errorf("a schema on a broken level is not dangling: %+v", c)
	}
	for _, fs := range p.schemas {
		if fs.Name == "missing" || fs.Name == "on-broken" {
			t.Errorf("dangling schema %s is used", fs.Name)
		}
	}
}
