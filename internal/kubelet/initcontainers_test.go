package kubelet

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

func TestPlanInit(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	always := v1.ContainerRestartPolicyAlways
	pod := func(policy v1.RestartPolicy, inits ...string) *v1.Pod {
		p := &v1.Pod{Spec: v1.PodSpec{RestartPolicy: policy, Containers: []v1.Container{{Name: "main"}}}}
		for _, n := range inits {
			c := v1.Container{Name: n}
			if n[0] == 's' { // "s...": a sidecar
				c.RestartPolicy = &always
			}
			p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		}
		return p
	}
	run := func(state podstatus.State, code int32) []container {
		return []container{{Instance: podstatus.Instance{ID: "id", State: state, ExitCode: code, CreatedAt: now.Add(-time.Hour)}}}
	}
	running, ok, failed := run(podstatus.Running, 0), run(podstatus.Exited, 0), run(podstatus.Exited, 1)
	creating := []container{{Instance: podstatus.Instance{ID: "id", State: podstatus.Created, CreatedAt: now.Add(-time.Second)}}}
	startedAll := func(*v1.Container, string) bool { return true }
	startedNone := func(*v1.Container, string) bool { return false }

	for _, tc := range []struct {
		name    string
		pod     *v1.Pod
		runs    map[string][]container
		started func(*v1.Container, string) bool
		start   []int
		done    bool
		failed  bool
	}{
		{"no init containers", pod(v1.RestartPolicyAlways), nil, startedAll, nil, true, false},
		{"first init", pod(v1.RestartPolicyAlways, "i1", "i2"), nil, startedAll, []int{0}, false, false},
		{"init running", pod(v1.RestartPolicyAlways, "i1", "i2"), map[string][]container{"i1": running}, startedAll, nil, false, false},
		{"init being started", pod(v1.RestartPolicyAlways, "i1"), map[string][]container{"i1": creating}, startedAll, nil, false, false},
		{"next init", pod(v1.RestartPolicyAlways, "i1", "i2"), map[string][]container{"i1": ok}, startedAll, []int{1}, false, false},
		{"inits done", pod(v1.RestartPolicyAlways, "i1", "i2"), map[string][]container{"i1": ok, "i2": ok}, startedAll, nil, true, false},
		{"init failed, restarted", pod(v1.RestartPolicyOnFailure, "i1"), map[string][]container{"i1": failed}, startedAll, []int{0}, false, false},
		{"init failed under Never", pod(v1.RestartPolicyNever, "i1"), map[string][]container{"i1": failed}, startedAll, nil, false, true},
		{"sidecar first", pod(v1.RestartPolicyAlways, "side", "i1"), nil, startedAll, []int{0}, false, false},
		{"sidecar not started yet", pod(v1.RestartPolicyAlways, "side", "i1"), map[string][]container{"side": running}, startedNone, nil, false, false},
		{"sidecar started: next", pod(v1.RestartPolicyAlways, "side", "i1"), map[string][]container{"side": running}, startedAll, []int{1}, false, false},
		{"sidecar started, inits done", pod(v1.RestartPolicyAlways, "side", "i1"), map[string][]container{"side": running, "i1": ok}, startedAll, nil, true, false},
		// A sidecar restarts whatever the pod's policy.
		{"sidecar exited before init", pod(v1.RestartPolicyNever, "side", "i1"), map[string][]container{"side": failed}, startedAll, []int{0}, false, false},
		{"sidecar exited after the main container ran", pod(v1.RestartPolicyNever, "side1", "i1", "side2"),
			map[string][]container{"side1": ok, "i1": ok, "side2": running, "main": running}, startedNone, []int{0}, true, false},
		// After initialization a regular init container is not run again,
		// and a sidecar restarting does not hold the regular containers.
		{"after initialization", pod(v1.RestartPolicyAlways, "i1", "side"), map[string][]container{"side": running, "main": running}, startedNone, nil, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planInit(tc.pod, tc.runs, tc.started, now)
			if !slices.Equal(p.start, tc.start) || p.done != tc.done || p.failed != tc.failed {
				t.Errorf("got start %v done %v failed %v, want %v %v %v", p.start, p.done, p.failed, tc.start, tc.done, tc.failed)
			}
		})
	}
}

func TestRegularContainersDone(t *testing.T) {
	exited := func(code int32) []container {
		return []container{{Instance: podstatus.Instance{State: podstatus.Exited, ExitCode: code}}}
	}
	pod := func(policy v1.RestartPolicy) *v1.Pod {
		return &v1.Pod{Spec: v1.PodSpec{RestartPolicy: policy, Containers: []v1.Container{{Name: "a"}, {Name: "b"}}}}
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		runs map[string][]container
		want bool
	}{
		{"not all ran", pod(v1.RestartPolicyNever), map[string][]container{"a": exited(0)}, false},
		{"never: all exited", pod(v1.RestartPolicyNever), map[string][]container{"a": exited(0), "b": exited(1)}, true},
		{"on failure: one will restart", pod(v1.RestartPolicyOnFailure), map[string][]container{"a": exited(0), "b": exited(1)}, false},
		{"on failure: all succeeded", pod(v1.RestartPolicyOnFailure), map[string][]container{"a": exited(0), "b": exited(0)}, true},
		{"always restarts", pod(v1.RestartPolicyAlways), map[string][]container{"a": exited(0), "b": exited(0)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := regularContainersDone(tc.pod, tc.runs); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
