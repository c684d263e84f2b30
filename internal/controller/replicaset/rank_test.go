package replicaset

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var now = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

// pod builds a test pod; opts adjust it.
func pod(name string, opts ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name),
		CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Spec:   v1.PodSpec{NodeName: "n1"},
		Status: v1.PodStatus{Phase: v1.PodRunning}}
	ready(now.Add(-time.Hour))(p)
	for _, o := range opts {
		o(p)
	}
	return p
}

func ready(at time.Time) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}}
	}
}
func notReady(p *v1.Pod)   { p.Status.Conditions[0].Status = v1.ConditionFalse }
func unassigned(p *v1.Pod) { p.Spec.NodeName = "" }
func phase(ph v1.PodPhase) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Status.Phase = ph }
}
func onNode(n string) func(*v1.Pod) { return func(p *v1.Pod) { p.Spec.NodeName = n } }
func created(at time.Time) func(*v1.Pod) {
	return func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(at) }
}
func restarts(n int32) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", RestartCount: n}} }
}
func cost(c string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Annotations = map[string]string{PodDeletionCostAnnotation: c} }
}

func TestPodsToDelete(t *testing.T) {
	tests := []struct {
		name    string
		pods    []*v1.Pod
		related []*v1.Pod // nil: the pods themselves
		n       int
		want    []string
	}{
		{"unassigned before assigned",
			[]*v1.Pod{pod("assigned"), pod("unassigned", unassigned, phase(v1.PodPending), notReady)}, nil, 1, []string{"unassigned"}},
		{"pending before unknown before running",
			[]*v1.Pod{pod("running"), pod("unknown", phase(v1.PodUnknown)), pod("pending", phase(v1.PodPending))}, nil, 2, []string{"pending", "unknown"}},
		{"not ready before ready",
			[]*v1.Pod{pod("ready"), pod("not-ready", notReady)}, nil, 1, []string{"not-ready"}},
		{"lower deletion cost first, over readiness time",
			[]*v1.Pod{pod("cheap", cost("-10"), ready(now.Add(-100*time.Hour))), pod("dear", cost("10"), ready(now.Add(-time.Second)))}, nil, 1, []string{"cheap"}},
		{"invalid deletion cost counts as zero",
			[]*v1.Pod{pod("bad", cost("x")), pod("negative", cost("-1"))}, nil, 1, []string{"negative"}},
		{"doubled up on a node first",
			[]*v1.Pod{pod("alone", onNode("a")), pod("crowded", onNode("b"))},
			[]*v1.Pod{pod("alone", onNode("a")), pod("crowded", onNode("b")), pod("sibling", onNode("b"))}, 1, []string{"crowded"}},
		{"ready for less time first",
			[]*v1.Pod{pod("old-ready", ready(now.Add(-10*time.Hour))), pod("new-ready", ready(now.Add(-time.Minute)))}, nil, 1, []string{"new-ready"}},
		{"readiness times in the same log2 bucket fall back to UID",
			[]*v1.Pod{pod("b", ready(now.Add(-40*time.Second))), pod("a", ready(now.Add(-50*time.Second)))}, nil, 1, []string{"a"}},
		{"more restarts first",
			[]*v1.Pod{pod("calm", restarts(1)), pod("flappy", restarts(5))}, nil, 1, []string{"flappy"}},
		{"newer first",
			[]*v1.Pod{pod("old", created(now.Add(-48*time.Hour))), pod("new", created(now.Add(-time.Minute)))}, nil, 1, []string{"new"}},
		{"same age bucket breaks ties by UID",
			[]*v1.Pod{pod("z", created(now.Add(-40*time.Second))), pod("y", created(now.Add(-50*time.Second)))}, nil, 1, []string{"y"}},
		{"phase outranks readiness and age",
			[]*v1.Pod{pod("pending-old", phase(v1.PodPending), notReady, created(now.Add(-48*time.Hour))), pod("running-new", notReady, created(now))}, nil, 1, []string{"pending-old"}},
		{"asking for all returns all",
			[]*v1.Pod{pod("a"), pod("b")}, nil, 5, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			related := tt.related
			if related == nil {
				related = tt.pods
			}
			got := PodsToDelete(tt.pods, related, tt.n, now)
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
			}
			if len(names) != len(tt.want) {
				t.Fatalf("deleted %v, want %v", names, tt.want)
			}
			for i := range names {
				if names[i] != tt.want[i] {
					t.Fatalf("deleted %v, want %v", names, tt.want)
				}
			}
		})
	}
}

func TestSidecarRestartsBreakTies(t *testing.T) {
	withSidecar := func(n int32) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "proxy", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways)}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{{Name: "proxy", RestartCount: n}}
		}
	}
	pods := []*v1.Pod{pod("steady", withSidecar(0)), pod("crashy", withSidecar(4))}
	if got := PodsToDelete(pods, pods, 1, now); got[0].Name != "crashy" {
		t.Fatalf("deleted %s, want the pod whose sidecar restarts", got[0].Name)
	}
}
