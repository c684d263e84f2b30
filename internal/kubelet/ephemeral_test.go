package kubelet

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

func TestEphemeralToStart(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{
		Containers: []v1.Container{{Name: "main"}},
		EphemeralContainers: []v1.EphemeralContainer{
			{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "d1"}},
			{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "d2"}},
		},
	}}
	run := func(state podstatus.State, sandbox string) []container {
		return []container{{Instance: podstatus.Instance{ID: "c", State: state}, SandboxID: sandbox}}
	}
	for _, tc := range []struct {
		name string
		runs map[string][]container
		want []int
	}{
		{"none ran", map[string][]container{"main": run(podstatus.Running, "s1")}, []int{0, 1}},
		{"one running", map[string][]container{"d1": run(podstatus.Running, "s1")}, []int{1}},
		// Never restarted: not when it exits, not when the create left
		// it unstarted, not in a new sandbox.
		{"one exited", map[string][]container{"d1": run(podstatus.Exited, "s1")}, []int{1}},
		{"one created only", map[string][]container{"d2": run(podstatus.Created, "s1")}, []int{0}},
		{"both ran in an old sandbox", map[string][]container{"d1": run(podstatus.Exited, "old"), "d2": run(podstatus.Exited, "old")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ephemeralToStart(pod, tc.runs); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEphemeralTarget(t *testing.T) {
	current := map[string][]container{"main": {{Instance: podstatus.Instance{ID: "new"}}, {Instance: podstatus.Instance{ID: "old"}}}}
	ec := func(target string) *v1.EphemeralContainer {
		return &v1.EphemeralContainer{TargetContainerName: target}
	}
	if id, err := ephemeralTarget(ec(""), current); id != "" || err != nil {
		t.Errorf("no target: %q %v", id, err)
	}
	if id, err := ephemeralTarget(ec("main"), current); id != "new" || err != nil {
		t.Errorf("target: %q %v, want the newest run", id, err)
	}
	if _, err := ephemeralTarget(ec("sidecar"), current); err == nil || err.Error() != "unable to find target container sidecar" {
		t.Errorf("missing target: %v", err)
	}
}

func TestTargetPIDNamespace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   runtimeapi.NamespaceMode
		target string
		want   runtimeapi.NamespaceMode
		id     string
	}{
		{"own namespace, target", runtimeapi.NamespaceMode_CONTAINER, "t", runtimeapi.NamespaceMode_TARGET, "t"},
		{"own namespace, no target", runtimeapi.NamespaceMode_CONTAINER, "", runtimeapi.NamespaceMode_CONTAINER, ""},
		{"shared pod namespace", runtimeapi.NamespaceMode_POD, "t", runtimeapi.NamespaceMode_POD, ""},
		{"host namespace", runtimeapi.NamespaceMode_NODE, "t", runtimeapi.NamespaceMode_NODE, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := &runtimeapi.NamespaceOption{Pid: tc.mode}
			targetPIDNamespace(ns, tc.target)
			if ns.Pid != tc.want || ns.TargetId != tc.id {
				t.Errorf("got %s %q, want %s %q", ns.Pid, ns.TargetId, tc.want, tc.id)
			}
		})
	}
}

func TestFindContainerFindsEphemeral(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{
		Containers:          []v1.Container{{Name: "main"}},
		EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug", TTY: true}}},
	}}
	if c := findContainer(pod, "debug"); c == nil || !c.TTY {
		t.Errorf("ephemeral container not found: %+v", c)
	}
}
