package simnode

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)

// podAt builds a pod bound to a simulated node; edits adjust it.
func podAt(edits ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1", Generation: 1},
		Spec: v1.PodSpec{NodeName: "sim-0", RestartPolicy: v1.RestartPolicyAlways,
			Containers: []v1.Container{{Name: "app", Image: "busybox"}}},
	}
	for _, e := range edits {
		e(p)
	}
	return p
}

func annotate(kv ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Annotations = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Annotations[kv[i]] = kv[i+1]
		}
	}
}

func started(at time.Time) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Status.StartTime = &metav1.Time{Time: at} }
}

func policy(r v1.RestartPolicy) func(*v1.Pod) { return func(p *v1.Pod) { p.Spec.RestartPolicy = r } }

func readinessDelay(s int32) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.Containers[0].ReadinessProbe = &v1.Probe{InitialDelaySeconds: s} }
}

func deleting(at time.Time, grace int64) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.DeletionTimestamp = &metav1.Time{Time: at.Add(time.Duration(grace) * time.Second)}
		p.DeletionGracePeriodSeconds = ptr.To(grace)
	}
}

func condition(st *v1.PodStatus, t v1.PodConditionType) v1.ConditionStatus {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func TestPlan(t *testing.T) {
	type want struct {
		write              bool
		phase              v1.PodPhase
		ready              v1.ConditionStatus
		state              string // running, terminated
		exitCode, restarts int32
		delete             bool
		wake               time.Time
		podIP              string
	}
	cases := []struct {
		name string
		pod  *v1.Pod
		now  time.Time
		want want
	}{
		{"new pod runs and is ready at once", podAt(), t0,
			want{write: true, phase: v1.PodRunning, ready: v1.ConditionTrue, state: "running", podIP: "10.42.0.2"}},
		{"readiness probe delays Ready", podAt(readinessDelay(5)), t0,
			want{write: true, phase: v1.PodRunning, ready: v1.ConditionFalse, state: "running", wake: t0.Add(5 * time.Second), podIP: "10.42.0.2"}},
		{"ready once the delay passed", podAt(readinessDelay(5), started(t0)), t0.Add(5 * time.Second),
			want{write: true, phase: v1.PodRunning, ready: v1.ConditionTrue, state: "running", podIP: "10.42.0.2"}},
		{"run duration wakes at its end", podAt(policy(v1.RestartPolicyNever), annotate(RunDurationAnnotation, "30s")), t0,
			want{write: true, phase: v1.PodRunning, ready: v1.ConditionTrue, state: "running", wake: t0.Add(30 * time.Second), podIP: "10.42.0.2"}},
		{"run duration ends Succeeded", podAt(policy(v1.RestartPolicyNever), annotate(RunDurationAnnotation, "30s"), started(t0)), t0.Add(31 * time.Second),
			want{write: true, phase: v1.PodSucceeded, ready: v1.ConditionFalse, state: "terminated", podIP: "10.42.0.2"}},
		{"exit code ends Failed", podAt(policy(v1.RestartPolicyNever), annotate(RunDurationAnnotation, "30s", ExitCodeAnnotation, "1"), started(t0)), t0.Add(30 * time.Second),
			want{write: true, phase: v1.PodFailed, ready: v1.ConditionFalse, state: "terminated", exitCode: 1, podIP: "10.42.0.2"}},
		{"OnFailure with exit 0 succeeds", podAt(policy(v1.RestartPolicyOnFailure), annotate(RunDurationAnnotation, "10s"), started(t0)), t0.Add(10 * time.Second),
			want{write: true, phase: v1.PodSucceeded, ready: v1.ConditionFalse, state: "terminated", podIP: "10.42.0.2"}},
		{"OnFailure with a failure restarts", podAt(policy(v1.RestartPolicyOnFailure), annotate(RunDurationAnnotation, "10s", ExitCodeAnnotation, "2"), started(t0)), t0.Add(25 * time.Second),
			want{write: true, phase: v1.PodRunning, ready: v1.ConditionTrue, state: "running", restarts: 2, wake: t0.Add(30 * time.Second), podIP: "10.42.0.2"}},
		{"Always restarts after each run", podAt(annotate(RunDurationAnnotation, "10s"), started(t0)), t0.Add(10 * time.Second),
			want{write: true, phase: v1.PodRunning, ready: v1.ConditionTrue, state: "running", restarts: 1, wake: t0.Add(20 * time.Second), podIP: "10.42.0.2"}},
		{"fractional run duration rounds up to a second", podAt(policy(v1.RestartPolicyNever), annotate(RunDurationAnnotation, "1500ms"), started(t0)), t0.Add(1600 * time.Millisecond),
			want{write: true, phase: v1.PodRunning, ready: v1.ConditionTrue, state: "running", wake: t0.Add(2 * time.Second), podIP: "10.42.0.2"}},
		{"malformed run duration is ignored", podAt(policy(v1.RestartPolicyNever), annotate(RunDurationAnnotation, "soon"), started(t0)), t0.Add(time.Hour),
			want{write: true, phase: v1.PodRunning, ready: v1.ConditionTrue, state: "running", podIP: "10.42.0.2"}},
		{"deleted running pod waits its grace period", podAt(started(t0), deleting(t0.Add(time.Minute), 30)), t0.Add(time.Minute + 10*time.Second),
			want{wake: t0.Add(time.Minute + 30*time.Second)}},
		{"deleted running pod removed after its grace period", podAt(started(t0), deleting(t0.Add(time.Minute), 30)), t0.Add(time.Minute + 30*time.Second),
			want{delete: true}},
		{"stop duration shortens the wait", podAt(started(t0), deleting(t0.Add(time.Minute), 30), annotate(StopDurationAnnotation, "0s")), t0.Add(time.Minute),
			want{delete: true}},
		{"stop duration longer than grace is cut", podAt(started(t0), deleting(t0, 5), annotate(StopDurationAnnotation, "1m")), t0.Add(time.Second),
			want{wake: t0.Add(5 * time.Second)}},
		{"deleted pod that never started goes at once", podAt(deleting(t0, 30)), t0,
			want{delete: true}},
		{"finished pod is left alone", podAt(func(p *v1.Pod) { p.Status.Phase = v1.PodSucceeded }), t0,
			want{}},
		{"finished pod deleted goes at once", podAt(started(t0), deleting(t0, 30), func(p *v1.Pod) { p.Status.Phase = v1.PodFailed }), t0,
			want{delete: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := Plan(PodInput{Pod: tc.pod, PodIP: "10.42.0.2", HostIP: "100.64.0.1", Now: tc.now})
			if plan.Delete != tc.want.delete {
				t.Errorf("delete = %v, want %v", plan.Delete, tc.want.delete)
			}
			if !plan.Wake.Equal(tc.want.wake) {
				t.Errorf("wake = %v, want %v", plan.Wake, tc.want.wake)
			}
			if (plan.Status != nil) != tc.want.write {
				t.Fatalf("status written = %v, want %v", plan.Status != nil, tc.want.write)
			}
			if plan.Status == nil {
				return
			}
			st := plan.Status
			if st.Phase != tc.want.phase || condition(st, v1.PodReady) != tc.want.ready || st.PodIP != tc.want.podIP {
				t.Errorf("phase %s ready %s podIP %s, want %s %s %s", st.Phase, condition(st, v1.PodReady), st.PodIP, tc.want.phase, tc.want.ready, tc.want.podIP)
			}
			cs := st.ContainerStatuses[0]
			if !strings.HasPrefix(cs.ContainerID, "simulated://") {
				t.Errorf("containerID %q, want simulated://", cs.ContainerID)
			}
			if cs.RestartCount != tc.want.restarts {
				t.Errorf("restartCount %d, want %d", cs.RestartCount, tc.want.restarts)
			}
			switch tc.want.state {
			case "running":
				if cs.State.Running == nil {
					t.Errorf("state %+v, want running", cs.State)
				}
			case "terminated":
				if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != tc.want.exitCode {
					t.Errorf("state %+v, want terminated with %d", cs.State, tc.want.exitCode)
				}
			}
			if st.HostIP != "100.64.0.1" || st.StartTime == nil || st.QOSClass != v1.PodQOSBestEffort {
				t.Errorf("hostIP %s startTime %v qos %s", st.HostIP, st.StartTime, st.QOSClass)
			}
		})
	}
}

// A status the simulator sent before is recomputed exactly: a restarted
// simulator, or a second look, writes nothing.
func TestPlanSettles(t *testing.T) {
	for _, pod := range []*v1.Pod{
		podAt(),
		podAt(readinessDelay(5)),
		podAt(policy(v1.RestartPolicyNever), annotate(RunDurationAnnotation, "3s", ExitCodeAnnotation, "1")),
		podAt(func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "init1"}, {Name: "init2"},
				{Name: "sidecar", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways)}}
		}),
	} {
		now := t0.Add(300 * time.Millisecond)
		for step := 0; step < 20; step++ {
			plan := Plan(PodInput{Pod: pod, PodIP: "10.42.0.2", HostIP: "100.64.0.1", Now: now})
			if plan.Status != nil {
				pod = pod.DeepCopy()
				pod.Status = *roundTrip(t, plan.Status)
			}
			if again := Plan(PodInput{Pod: pod, PodIP: "10.42.0.2", HostIP: "100.64.0.1", Now: now}); again.Status != nil {
				t.Fatalf("%s: second look at %v rewrites the status", pod.Name, now)
			}
			now = now.Add(700 * time.Millisecond)
		}
	}
}

func TestPlanInitContainers(t *testing.T) {
	pod := podAt(func(p *v1.Pod) {
		p.Spec.InitContainers = []v1.Container{{Name: "init1"}, {Name: "init2"}}
	})
	plan := Plan(PodInput{Pod: pod, PodIP: "10.42.0.2", HostIP: "100.64.0.1", Now: t0})
	st := plan.Status
	if st.Phase != v1.PodRunning || condition(st, v1.PodInitialized) != v1.ConditionTrue {
		t.Fatalf("phase %s initialized %s", st.Phase, condition(st, v1.PodInitialized))
	}
	for _, cs := range st.InitContainerStatuses {
		if term := cs.State.Terminated; term == nil || term.ExitCode != 0 || term.Reason != "Completed" || !strings.HasPrefix(term.ContainerID, "simulated://") {
			t.Errorf("init container %s: %+v, want terminated with 0", cs.Name, cs.State)
		}
	}
	for _, ct := range []v1.PodConditionType{v1.PodScheduled, v1.PodInitialized, v1.ContainersReady, v1.PodReady, v1.PodReadyToStartContainers} {
		if condition(st, ct) != v1.ConditionTrue {
			t.Errorf("condition %s = %s, want True", ct, condition(st, ct))
		}
	}
}
