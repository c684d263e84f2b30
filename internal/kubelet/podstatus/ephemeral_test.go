package podstatus

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestEphemeralContainerStatuses(t *testing.T) {
	withDebugger := func(inits []string) *v1.Pod {
		p := pod(v1.RestartPolicyAlways, inits, "a")
		p.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
		return p
	}
	for _, tc := range []struct {
		name     string
		in       Input
		waiting  string
		running  bool
		exitCode *int32
	}{
		{"not started", Input{Pod: withDebugger(nil), Instances: map[string][]Instance{"a": {running(0)}}}, "ContainerCreating", false, nil},
		{"not started, pod with init containers", Input{Pod: withDebugger([]string{"i"}), Instances: map[string][]Instance{"i": {exited(0, 0)}, "a": {running(0)}}}, "PodInitializing", false, nil},
		{"could not start", Input{Pod: withDebugger(nil), Instances: map[string][]Instance{"a": {running(0)}},
			Waiting: map[string]Waiting{"debug": {Reason: "CreateContainerConfigError", Message: "unable to find target container x"}}}, "CreateContainerConfigError", false, nil},
		{"running", Input{Pod: withDebugger(nil), Instances: map[string][]Instance{"a": {running(0)}, "debug": {running(0)}}}, "", true, nil},
		{"exited", Input{Pod: withDebugger(nil), Instances: map[string][]Instance{"a": {running(0)}, "debug": {exited(0, 3)}}}, "", false, ptr(int32(3))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.SandboxReady, tc.in.Now = true, now
			st := Compute(tc.in)
			if len(st.EphemeralContainerStatuses) != 1 {
				t.Fatalf("ephemeral statuses %+v", st.EphemeralContainerStatuses)
			}
			cs := st.EphemeralContainerStatuses[0]
			if cs.Name != "debug" || cs.Image != "busybox" || cs.Ready || cs.Started != nil {
				t.Errorf("status %+v", cs)
			}
			switch {
			case tc.waiting != "":
				if cs.State.Waiting == nil || cs.State.Waiting.Reason != tc.waiting {
					t.Errorf("state %+v, want waiting %s", cs.State, tc.waiting)
				}
			case tc.running:
				if cs.State.Running == nil || cs.ContainerID == "" {
					t.Errorf("state %+v, want running", cs.State)
				}
			default:
				if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != *tc.exitCode {
					t.Errorf("state %+v, want terminated with %d", cs.State, *tc.exitCode)
				}
			}
			// The debugger never makes the pod unready or changes its phase.
			if st.Phase != v1.PodRunning || cond(st, v1.PodReady).Status != v1.ConditionTrue {
				t.Errorf("phase %s, ready %s", st.Phase, cond(st, v1.PodReady).Status)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
