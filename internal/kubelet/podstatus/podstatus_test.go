package podstatus

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var now = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

func pod(policy v1.RestartPolicy, inits []string, names ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u"}}
	p.Spec.RestartPolicy = policy
	for _, n := range inits {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: n, Image: "busybox"})
	}
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: n, Image: "busybox"})
	}
	return p
}

func running(attempt uint32) Instance {
	return Instance{ID: "r", Attempt: attempt, State: Running, StartedAt: now.Add(-time.Minute)}
}

func exited(attempt uint32, code int32) Instance {
	return Instance{ID: "x", Attempt: attempt, State: Exited, ExitCode: code, StartedAt: now.Add(-2 * time.Minute), FinishedAt: now.Add(-time.Minute)}
}

func cond(st v1.PodStatus, t v1.PodConditionType) v1.PodCondition {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c
		}
	}
	return v1.PodCondition{}
}

func TestPhaseAndConditions(t *testing.T) {
	tests := []struct {
		name      string
		in        Input
		phase     v1.PodPhase
		ready     v1.ConditionStatus
		readyMsg  string
		initCond  v1.ConditionStatus
		waitingOf string // container whose waiting reason is checked
		waiting   string
	}{
		{"nothing started yet", Input{Pod: pod(v1.RestartPolicyAlways, nil, "a")}, v1.PodPending, v1.ConditionFalse, "containers with unready status: [a]", v1.ConditionTrue, "a", "ContainerCreating"},
		{"running without probes is ready", Input{Pod: pod(v1.RestartPolicyAlways, nil, "a"), SandboxReady: true, Instances: map[string][]Instance{"a": {running(0)}}}, v1.PodRunning, v1.ConditionTrue, "", v1.ConditionTrue, "", ""},
		{"readiness probe failing", Input{Pod: pod(v1.RestartPolicyAlways, nil, "a"), SandboxReady: true, Instances: map[string][]Instance{"a": {running(0)}}, Ready: map[string]bool{"a": false}}, v1.PodRunning, v1.ConditionFalse, "containers with unready status: [a]", v1.ConditionTrue, "", ""},
		{"crash loop keeps Running with waiting reason", Input{Pod: pod(v1.RestartPolicyAlways, nil, "a"), SandboxReady: true,
			Instances: map[string][]Instance{"a": {exited(3, 1)}}, Waiting: map[string]Waiting{"a": {Reason: "CrashLoopBackOff", Message: "back-off 40s"}}},
			v1.PodRunning, v1.ConditionFalse, "containers with unready status: [a]", v1.ConditionTrue, "a", "CrashLoopBackOff"},
		{"never: success", Input{Pod: pod(v1.RestartPolicyNever, nil, "a", "b"), Instances: map[string][]Instance{"a": {exited(0, 0)}, "b": {exited(0, 0)}}}, v1.PodSucceeded, v1.ConditionFalse, "", v1.ConditionTrue, "", ""},
		{"never: one failed", Input{Pod: pod(v1.RestartPolicyNever, nil, "a", "b"), Instances: map[string][]Instance{"a": {exited(0, 0)}, "b": {exited(0, 2)}}}, v1.PodFailed, v1.ConditionFalse, "", v1.ConditionTrue, "", ""},
		{"on failure: failed one restarts", Input{Pod: pod(v1.RestartPolicyOnFailure, nil, "a"), Instances: map[string][]Instance{"a": {exited(0, 2)}}}, v1.PodRunning, v1.ConditionFalse, "containers with unready status: [a]", v1.ConditionTrue, "", ""},
		{"on failure: success completes", Input{Pod: pod(v1.RestartPolicyOnFailure, nil, "a"), Instances: map[string][]Instance{"a": {exited(0, 0)}}}, v1.PodSucceeded, v1.ConditionFalse, "", v1.ConditionTrue, "", ""},
		{"init running", Input{Pod: pod(v1.RestartPolicyAlways, []string{"i1", "i2"}, "a"), SandboxReady: true, Instances: map[string][]Instance{"i1": {running(0)}}},
			v1.PodPending, v1.ConditionFalse, "containers with unready status: [a]", v1.ConditionFalse, "a", "PodInitializing"},
		{"init failed with Never fails the pod", Input{Pod: pod(v1.RestartPolicyNever, []string{"i1"}, "a"), Instances: map[string][]Instance{"i1": {exited(0, 1)}}},
			v1.PodFailed, v1.ConditionFalse, "", v1.ConditionFalse, "", ""},
		{"inits done", Input{Pod: pod(v1.RestartPolicyAlways, []string{"i1"}, "a"), SandboxReady: true, Instances: map[string][]Instance{"i1": {exited(0, 0)}, "a": {running(0)}}},
			v1.PodRunning, v1.ConditionTrue, "", v1.ConditionTrue, "", ""},
		{"terminating is not ready", Input{Pod: pod(v1.RestartPolicyAlways, nil, "a"), SandboxReady: true, Terminating: true, Instances: map[string][]Instance{"a": {running(0)}}},
			v1.PodRunning, v1.ConditionFalse, "containers with unready status: [a]", v1.ConditionTrue, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Now = now
			st := Compute(tt.in)
			if st.Phase != tt.phase {
				t.Errorf("phase %s, want %s", st.Phase, tt.phase)
			}
			r := cond(st, v1.PodReady)
			if r.Status != tt.ready {
				t.Errorf("Ready %s, want %s", r.Status, tt.ready)
			}
			if tt.readyMsg != "" && r.Message != tt.readyMsg {
				t.Errorf("Ready message %q, want %q", r.Message, tt.readyMsg)
			}
			if c := cond(st, v1.PodInitialized); c.Status != tt.initCond {
				t.Errorf("Initialized %s, want %s", c.Status, tt.initCond)
			}
			if tt.waitingOf != "" {
				for _, cs := range st.ContainerStatuses {
					if cs.Name == tt.waitingOf && (cs.State.Waiting == nil || cs.State.Waiting.Reason != tt.waiting) {
						t.Errorf("container %s state %+v, want waiting %s", cs.Name, cs.State, tt.waiting)
					}
				}
			}
		})
	}
}

func TestContainerStatusCarriesRestartsAndLastState(t *testing.T) {
	in := Input{Pod: pod(v1.RestartPolicyAlways, nil, "a"), SandboxReady: true, Now: now, PodIPs: []string{"10.42.0.5"}, HostIPs: []string{"192.0.2.10"},
		Instances: map[string][]Instance{"a": {running(2), {ID: "old", Attempt: 1, State: Exited, ExitCode: 137, Reason: "OOMKilled"}}}}
	st := Compute(in)
	cs := st.ContainerStatuses[0]
	if cs.RestartCount != 2 || cs.State.Running == nil || !cs.Ready || cs.Started == nil || !*cs.Started {
		t.Fatalf("status %+v", cs)
	}
	if lt := cs.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 137 || lt.Reason != "OOMKilled" || lt.ContainerID != "containerd://old" {
		t.Fatalf("last state %+v", cs.LastTerminationState)
	}
	if st.PodIP != "10.42.0.5" || st.HostIP != "192.0.2.10" || st.StartTime == nil || st.QOSClass != v1.PodQOSBestEffort {
		t.Fatalf("pod status %+v", st)
	}
	if cs.ContainerID != "containerd://r" {
		t.Fatalf("container id %q", cs.ContainerID)
	}
}

func TestTerminatedReasonDefaults(t *testing.T) {
	in := Input{Pod: pod(v1.RestartPolicyNever, nil, "a", "b"), Now: now,
		Instances: map[string][]Instance{"a": {exited(0, 0)}, "b": {exited(0, 3)}}}
	st := Compute(in)
	if r := st.ContainerStatuses[0].State.Terminated.Reason; r != "Completed" {
		t.Errorf("exit 0 reason %q", r)
	}
	if r := st.ContainerStatuses[1].State.Terminated.Reason; r != "Error" {
		t.Errorf("exit 3 reason %q", r)
	}
}

func TestTransitionTimeKeptWhileStatusUnchanged(t *testing.T) {
	p := pod(v1.RestartPolicyAlways, nil, "a")
	earlier := metav1.NewTime(now.Add(-time.Hour))
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: earlier}}
	st := Compute(Input{Pod: p, SandboxReady: true, Now: now, Instances: map[string][]Instance{"a": {running(0)}}})
	if got := cond(st, v1.PodReady).LastTransitionTime; !got.Equal(&earlier) {
		t.Errorf("transition time %v, want %v", got, earlier)
	}
	st = Compute(Input{Pod: p, SandboxReady: true, Now: now, Instances: map[string][]Instance{"a": {running(0)}}, Ready: map[string]bool{"a": false}})
	if got := cond(st, v1.PodReady).LastTransitionTime; !got.Time.Equal(now) {
		t.Errorf("transition time %v, want now", got)
	}
}

func TestQOSClass(t *testing.T) {
	mk := func(req, lim v1.ResourceList) *v1.Pod {
		p := pod(v1.RestartPolicyAlways, nil, "a")
		p.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: req, Limits: lim}
		return p
	}
	q := func(s string) v1.ResourceList {
		return v1.ResourceList{v1.ResourceCPU: resourceMust(s), v1.ResourceMemory: resourceMust("64Mi")}
	}
	if c := QOSClass(mk(nil, nil)); c != v1.PodQOSBestEffort {
		t.Errorf("empty: %s", c)
	}
	if c := QOSClass(mk(q("100m"), q("100m"))); c != v1.PodQOSGuaranteed {
		t.Errorf("equal: %s", c)
	}
	if c := QOSClass(mk(q("100m"), q("200m"))); c != v1.PodQOSBurstable {
		t.Errorf("unequal: %s", c)
	}
}

// A pod the kubelet failed (past activeDeadlineSeconds) is Failed with the
// reason and message, whatever its restart policy, and stays so.
func TestFailureFailsThePod(t *testing.T) {
	f := &Failure{Reason: "DeadlineExceeded", Message: "Pod was active on the node longer than the specified deadline"}
	st := Compute(Input{Pod: pod(v1.RestartPolicyAlways, nil, "a"), Now: now, Failure: f,
		Instances: map[string][]Instance{"a": {exited(0, 137)}}})
	if st.Phase != v1.PodFailed || st.Reason != f.Reason || st.Message != f.Message {
		t.Fatalf("phase %s reason %q message %q", st.Phase, st.Reason, st.Message)
	}
	if r := cond(st, v1.PodReady); r.Status != v1.ConditionFalse {
		t.Errorf("Ready %s", r.Status)
	}
	p := pod(v1.RestartPolicyAlways, nil, "a")
	p.Status = st
	if again := Compute(Input{Pod: p, Now: now, Instances: map[string][]Instance{"a": {exited(0, 137)}}}); again.Phase != v1.PodFailed || again.Reason != f.Reason {
		t.Errorf("later status %s %q", again.Phase, again.Reason)
	}
	// A pod that already succeeded keeps its phase.
	done := Compute(Input{Pod: pod(v1.RestartPolicyNever, nil, "a"), Now: now, Failure: f, Instances: map[string][]Instance{"a": {exited(0, 0)}}})
	if done.Phase != v1.PodSucceeded || done.Reason != "" {
		t.Errorf("succeeded pod: %s %q", done.Phase, done.Reason)
	}
}

func sidecarPod(policy v1.RestartPolicy) *v1.Pod {
	p := pod(policy, []string{"side"}, "main")
	always := v1.ContainerRestartPolicyAlways
	p.Spec.InitContainers[0].RestartPolicy = &always
	return p
}

// Sidecars (init containers with restartPolicy Always), as upstream: the
// pod initializes once they have started, they count for readiness, and
// they neither keep a finished pod running nor make it fail.
func TestSidecars(t *testing.T) {
	tests := []struct {
		name       string
		in         Input
		phase      v1.PodPhase
		init       v1.ConditionStatus
		initMsg    string
		ready      v1.ConditionStatus
		readyMsg   string
		sideReady  bool
		mainReason string
	}{
		{"sidecar not started by its probe", Input{Pod: sidecarPod(v1.RestartPolicyAlways), SandboxReady: true,
			Instances: map[string][]Instance{"side": {running(0)}}, Started: map[string]bool{"side": false}},
			v1.PodPending, v1.ConditionFalse, "containers with incomplete status: [side]", v1.ConditionFalse, "containers with unready status: [side main]", false, "PodInitializing"},
		{"sidecar started, main not yet", Input{Pod: sidecarPod(v1.RestartPolicyAlways), SandboxReady: true,
			Instances: map[string][]Instance{"side": {running(0)}}},
			v1.PodPending, v1.ConditionTrue, "", v1.ConditionFalse, "containers with unready status: [main]", true, "ContainerCreating"},
		{"both running", Input{Pod: sidecarPod(v1.RestartPolicyAlways), SandboxReady: true,
			Instances: map[string][]Instance{"side": {running(0)}, "main": {running(0)}}},
			v1.PodRunning, v1.ConditionTrue, "", v1.ConditionTrue, "", true, ""},
		{"sidecar not ready", Input{Pod: sidecarPod(v1.RestartPolicyAlways), SandboxReady: true,
			Instances: map[string][]Instance{"side": {running(0)}, "main": {running(0)}}, Ready: map[string]bool{"side": false}},
			v1.PodRunning, v1.ConditionTrue, "", v1.ConditionFalse, "containers with unready status: [side]", false, ""},
		{"sidecar restarting after the main container ran", Input{Pod: sidecarPod(v1.RestartPolicyAlways), SandboxReady: true,
			Instances: map[string][]Instance{"side": {exited(1, 1)}, "main": {running(0)}}, Waiting: map[string]Waiting{"side": {Reason: "CrashLoopBackOff"}}},
			v1.PodRunning, v1.ConditionTrue, "", v1.ConditionFalse, "containers with unready status: [side]", false, ""},
		{"main done, sidecar still running", Input{Pod: sidecarPod(v1.RestartPolicyNever), SandboxReady: true,
			Instances: map[string][]Instance{"side": {running(0)}, "main": {exited(0, 0)}}},
			v1.PodRunning, v1.ConditionTrue, "", v1.ConditionFalse, "containers with unready status: [main]", true, ""},
		{"main done, sidecar stopped", Input{Pod: sidecarPod(v1.RestartPolicyNever),
			Instances: map[string][]Instance{"side": {exited(0, 137)}, "main": {exited(0, 0)}}},
			v1.PodSucceeded, v1.ConditionTrue, "", v1.ConditionFalse, "", false, ""},
		{"main failed, sidecar stopped", Input{Pod: sidecarPod(v1.RestartPolicyNever),
			Instances: map[string][]Instance{"side": {exited(0, 0)}, "main": {exited(0, 2)}}},
			v1.PodFailed, v1.ConditionTrue, "", v1.ConditionFalse, "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Now = now
			st := Compute(tt.in)
			if st.Phase != tt.phase {
				t.Errorf("phase %s, want %s", st.Phase, tt.phase)
			}
			if c := cond(st, v1.PodInitialized); c.Status != tt.init || c.Status == v1.ConditionFalse && c.Message != tt.initMsg {
				t.Errorf("Initialized %s %q, want %s %q", c.Status, c.Message, tt.init, tt.initMsg)
			}
			if c := cond(st, v1.ContainersReady); c.Status != tt.ready || c.Message != tt.readyMsg {
				t.Errorf("ContainersReady %s %q, want %s %q", c.Status, c.Message, tt.ready, tt.readyMsg)
			}
			if side := st.InitContainerStatuses[0]; side.Ready != tt.sideReady {
				t.Errorf("sidecar ready %v, want %v", side.Ready, tt.sideReady)
			}
			if main := st.ContainerStatuses[0]; tt.mainReason != "" && (main.State.Waiting == nil || main.State.Waiting.Reason != tt.mainReason) {
				t.Errorf("main state %+v, want waiting %s", main.State, tt.mainReason)
			}
		})
	}
	failed := Compute(Input{Pod: pod(v1.RestartPolicyNever, nil, "a"), Now: now, Instances: map[string][]Instance{"a": {exited(0, 1)}}})
	if c := cond(failed, v1.PodReady); c.Reason != "PodFailed" {
		t.Errorf("failed pod's Ready reason %q, want PodFailed", c.Reason)
	}
}
