package kubelet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

var actionsNow = time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)

// actionsPod is pod web in default with the regular containers named, and
// init containers as given; an init container whose name starts with
// "side" is a sidecar (restartPolicy Always).
func actionsPod(policy v1.RestartPolicy, inits []string, containers ...string) *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	p := &v1.Pod{Spec: v1.PodSpec{RestartPolicy: policy}}
	p.Name, p.Namespace, p.UID = "web", "default", "uid-1"
	for _, n := range inits {
		c := v1.Container{Name: n}
		if strings.HasPrefix(n, "side") {
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	for _, n := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: n})
	}
	return p
}

func withEphemeral(p *v1.Pod, name, target string) *v1.Pod {
	p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, v1.EphemeralContainer{
		EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: name},
		TargetContainerName:      target,
	})
	return p
}

// sbx is a sandbox; the newest is listed first, as the runtime state
// keeps them.
func sbx(id string, attempt uint32, ready bool) sandbox {
	return sandbox{ID: id, Attempt: attempt, Ready: ready}
}

// ran is one run of a container, ID "<name>-<attempt>", in a sandbox.
// state is running, created (a second ago), created-stale (two minutes
// ago: past createdGrace), exit:<code> (finished 5 s ago) or oom.
func ran(name string, attempt uint32, sandboxID, state string) container {
	c := container{Name: name, SandboxID: sandboxID, Instance: podstatus.Instance{
		ID: fmt.Sprintf("%s-%d", name, attempt), Attempt: attempt, CreatedAt: actionsNow.Add(-time.Hour),
	}}
	switch {
	case state == "running":
		c.State, c.StartedAt = podstatus.Running, actionsNow.Add(-time.Minute)
	case state == "created":
		c.State, c.CreatedAt = podstatus.Created, actionsNow.Add(-time.Second)
	case state == "created-stale":
		c.State, c.CreatedAt = podstatus.Created, actionsNow.Add(-2*time.Minute)
	case state == "oom":
		c.State, c.ExitCode, c.Reason = podstatus.Exited, 137, "OOMKilled"
		c.StartedAt, c.FinishedAt = actionsNow.Add(-time.Minute), actionsNow.Add(-5*time.Second)
	case strings.HasPrefix(state, "exit:"):
		var code int32
		fmt.Sscanf(state, "exit:%d", &code)
		c.State, c.ExitCode = podstatus.Exited, code
		c.StartedAt, c.FinishedAt = actionsNow.Add(-time.Minute), actionsNow.Add(-5*time.Second)
	default:
		panic("unknown state " + state)
	}
	return c
}

func rt(sandboxes []sandbox, containers ...container) *podRuntime {
	return &podRuntime{Sandboxes: sandboxes, Containers: containers}
}

func TestComputePodActions(t *testing.T) {
	ready := []sandbox{sbx("sb1", 0, true)}
	never, onFailure, always := v1.RestartPolicyNever, v1.RestartPolicyOnFailure, v1.RestartPolicyAlways
	held := func(name string, wait time.Duration) func(*syncInput) {
		return func(in *syncInput) { in.backoff[name] = backoffHold{wait: wait, held: true} }
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		rt   *podRuntime
		in   func(*syncInput)
		want []string
	}{
		// The sandbox.
		{name: "first start: a sandbox, attempt 0",
			pod: actionsPod(always, nil, "main"), rt: nil,
			want: []string{"create sandbox attempt 0"}},
		{name: "sandbox died: the rest is killed, a new sandbox with the next attempt",
			pod:  actionsPod(always, nil, "main"),
			rt:   rt([]sandbox{sbx("sb2", 1, false), sbx("sb1", 0, false)}, ran("main", 1, "sb2", "running")),
			want: []string{"kill pod", "create sandbox attempt 2"}},
		{name: "finished Never pod: no new sandbox",
			pod:  actionsPod(never, nil, "main"),
			rt:   rt([]sandbox{sbx("sb1", 0, false)}, ran("main", 0, "sb1", "exit:1")),
			want: []string{"leave sandbox down"}},
		{name: "OnFailure pod whose container failed: a new sandbox",
			pod:  actionsPod(onFailure, nil, "main"),
			rt:   rt([]sandbox{sbx("sb1", 0, false)}, ran("main", 0, "sb1", "exit:1")),
			want: []string{"kill pod", "create sandbox attempt 1"}},
		{name: "OnFailure pod that succeeded: no new sandbox",
			pod:  actionsPod(onFailure, nil, "main"),
			rt:   rt([]sandbox{sbx("sb1", 0, false)}, ran("main", 0, "sb1", "exit:0")),
			want: []string{"leave sandbox down"}},
		{name: "new sandbox: the attempt counts on from the runs of the old one",
			pod:  actionsPod(always, nil, "main"),
			rt:   rt([]sandbox{sbx("sb2", 1, true), sbx("sb1", 0, false)}, ran("main", 3, "sb1", "exit:0")),
			in:   func(in *syncInput) { in.backoff["main"] = backoffHold{wait: 10 * time.Second} },
			want: []string{"start container main attempt 4 (restart)"}},

		// Init containers, one at a time, in order.
		{name: "first init container first",
			pod: actionsPod(always, []string{"i1", "i2"}, "main"), rt: rt(ready),
			want: []string{"start init container i1 attempt 0"}},
		{name: "init container running: wait",
			pod: actionsPod(always, []string{"i1", "i2"}, "main"), rt: rt(ready, ran("i1", 0, "sb1", "running")),
			want: nil},
		{name: "init container done: the next",
			pod: actionsPod(always, []string{"i1", "i2"}, "main"), rt: rt(ready, ran("i1", 0, "sb1", "exit:0")),
			want: []string{"start init container i2 attempt 0"}},
		{name: "init containers done: the regular containers",
			pod:  actionsPod(always, []string{"i1", "i2"}, "main", "other"),
			rt:   rt(ready, ran("i2", 0, "sb1", "exit:0"), ran("i1", 0, "sb1", "exit:0")),
			want: []string{"start container main attempt 0", "start container other attempt 0"}},
		{name: "failed init container under Never fails the pod",
			pod:  actionsPod(never, []string{"i1", "i2"}, "main"),
			rt:   rt(ready, ran("i1", 0, "sb1", "exit:1")),
			want: []string{"init failed"}},
		{name: "failed init container under OnFailure restarts",
			pod:  actionsPod(onFailure, []string{"i1", "i2"}, "main"),
			rt:   rt(ready, ran("i1", 0, "sb1", "exit:1")),
			want: []string{"start init container i1 attempt 1 (restart)"}},
		{name: "failed init container under Always restarts after its back-off",
			pod:  actionsPod(always, []string{"i1"}, "main"),
			rt:   rt(ready, ran("i1", 2, "sb1", "exit:1")),
			in:   held("i1", 20*time.Second),
			want: []string{"back off i1: back-off 20s restarting failed container=i1 pod=web_default(uid-1) (event)", "requeue 15s"}},
		{name: "init container created, never started: started",
			pod:  actionsPod(always, []string{"i1"}, "main"),
			rt:   rt(ready, ran("i1", 0, "sb1", "created")),
			want: []string{"start created i1-0"}},
		{name: "init container created too long ago: replaced",
			pod:  actionsPod(always, []string{"i1"}, "main"),
			rt:   rt(ready, ran("i1", 0, "sb1", "created-stale")),
			want: []string{"start init container i1 attempt 1"}},

		// Sidecars: init containers with restartPolicy Always.
		{name: "sidecar started: the next init container beside it",
			pod:  actionsPod(always, []string{"side", "i1"}, "main"),
			rt:   rt(ready, ran("side", 0, "sb1", "running")),
			in:   func(in *syncInput) { in.sidecarStarted["side"] = true },
			want: []string{"running or done: side", "start init container i1 attempt 0"}},
		{name: "sidecar not past its startup probe: wait",
			pod:  actionsPod(always, []string{"side", "i1"}, "main"),
			rt:   rt(ready, ran("side", 0, "sb1", "running")),
			in:   func(in *syncInput) { in.sidecarStarted["side"] = false },
			want: []string{"running or done: side"}},
		{name: "sidecar runs beside the regular containers",
			pod:  actionsPod(always, []string{"side"}, "main"),
			rt:   rt(ready, ran("main", 0, "sb1", "running"), ran("side", 0, "sb1", "running")),
			in:   func(in *syncInput) { in.sidecarStarted["side"] = true },
			want: []string{"running or done: side", "running or done: main"}},
		{name: "sidecar that exited restarts, even under Never",
			pod:  actionsPod(never, []string{"side"}, "main"),
			rt:   rt(ready, ran("main", 0, "sb1", "running"), ran("side", 0, "sb1", "exit:1")),
			want: []string{"start init container side attempt 1 (restart)", "running or done: main"}},
		{name: "sidecars stopped, the last first, once the regular containers are done",
			pod: actionsPod(never, []string{"side1", "i1", "side2"}, "main"),
			rt: rt(ready, ran("main", 0, "sb1", "exit:0"), ran("side2", 0, "sb1", "running"),
				ran("i1", 0, "sb1", "exit:0"), ran("side1", 0, "sb1", "running")),
			in:   func(in *syncInput) { in.sidecarStarted["side1"], in.sidecarStarted["side2"] = true, true },
			want: []string{"running or done: side1", "running or done: side2", "running or done: main", "stop sidecar side2-0", "stop sidecar side1-0"}},
		{name: "sidecar that exited is not restarted once the regular containers are done",
			pod:  actionsPod(never, []string{"side"}, "main"),
			rt:   rt(ready, ran("main", 0, "sb1", "exit:0"), ran("side", 0, "sb1", "exit:137")),
			want: []string{"running or done: main"}},
		{name: "sidecar failing its liveness probe is killed",
			pod:  actionsPod(always, []string{"side"}, "main"),
			rt:   rt(ready, ran("main", 0, "sb1", "running"), ran("side", 0, "sb1", "running")),
			in:   func(in *syncInput) { in.probeFailed["side"] = "failed liveness probe" },
			want: []string{"kill side-0: failed liveness probe", "running or done: main", "requeue 1ms"}},

		// Restart policies against exit codes.
		{name: "Always restarts a container that succeeded",
			pod: actionsPod(always, nil, "main"), rt: rt(ready, ran("main", 0, "sb1", "exit:0")),
			want: []string{"start container main attempt 1 (restart)"}},
		{name: "OnFailure restarts a container that failed",
			pod: actionsPod(onFailure, nil, "main"), rt: rt(ready, ran("main", 0, "sb1", "exit:2")),
			want: []string{"start container main attempt 1 (restart)"}},
		{name: "OnFailure leaves a container that succeeded",
			pod: actionsPod(onFailure, nil, "main"), rt: rt(ready, ran("main", 0, "sb1", "exit:0")),
			want: []string{"running or done: main"}},
		{name: "Never leaves a container that failed",
			pod: actionsPod(never, nil, "main"), rt: rt(ready, ran("main", 0, "sb1", "exit:1")),
			want: []string{"running or done: main"}},
		{name: "OOMKilled under Always restarts",
			pod: actionsPod(always, nil, "main"), rt: rt(ready, ran("main", 0, "sb1", "oom")),
			want: []string{"start container main attempt 1 (restart)"}},
		{name: "OOMKilled under OnFailure restarts",
			pod: actionsPod(onFailure, nil, "main"), rt: rt(ready, ran("main", 0, "sb1", "oom")),
			want: []string{"start container main attempt 1 (restart)"}},
		{name: "OOMKilled under Never stays down",
			pod: actionsPod(never, nil, "main"), rt: rt(ready, ran("main", 0, "sb1", "oom")),
			want: []string{"running or done: main"}},

		// Back-off.
		{name: "back-off holds a restart: CrashLoopBackOff, event the first time",
			pod:  actionsPod(always, nil, "main"),
			rt:   rt(ready, ran("main", 3, "sb1", "exit:1")),
			in:   held("main", 40*time.Second),
			want: []string{"back off main: back-off 40s restarting failed container=main pod=web_default(uid-1) (event)", "requeue 35s"}},
		{name: "back-off holding still: no second event",
			pod: actionsPod(always, nil, "main"),
			rt:  rt(ready, ran("main", 3, "sb1", "exit:1")),
			in: func(in *syncInput) {
				held("main", 40*time.Second)(in)
				in.waiting["main"] = "CrashLoopBackOff"
			},
			want: []string{"back off main: back-off 40s restarting failed container=main pod=web_default(uid-1)", "requeue 35s"}},
		{name: "back-off all but over: looked at again soon, not at once",
			pod:  actionsPod(always, nil, "main"),
			rt:   rt(ready, ran("main", 1, "sb1", "exit:1")),
			in:   held("main", 5*time.Second),
			want: []string{"back off main: back-off 5s restarting failed container=main pod=web_default(uid-1) (event)", "requeue 10ms"}},
		{name: "back-off over: restarted",
			pod:  actionsPod(always, nil, "main"),
			rt:   rt(ready, ran("main", 3, "sb1", "exit:1")),
			in:   func(in *syncInput) { in.backoff["main"] = backoffHold{wait: 40 * time.Second} },
			want: []string{"start container main attempt 4 (restart)"}},

		// Probes.
		{name: "liveness probe failed: killed, to be restarted",
			pod:  actionsPod(always, nil, "main", "other"),
			rt:   rt(ready, ran("other", 0, "sb1", "running"), ran("main", 0, "sb1", "running")),
			in:   func(in *syncInput) { in.probeFailed["main"] = "failed liveness probe" },
			want: []string{"kill main-0: failed liveness probe", "running or done: other", "requeue 1ms"}},
		{name: "startup probe failed: killed, to be restarted",
			pod:  actionsPod(always, nil, "main"),
			rt:   rt(ready, ran("main", 0, "sb1", "running")),
			in:   func(in *syncInput) { in.probeFailed["main"] = "failed startup probe" },
			want: []string{"kill main-0: failed startup probe", "requeue 1ms"}},

		// Created but never started: a kubelet stopped between the steps.
		{name: "container created, never started: started",
			pod: actionsPod(always, nil, "main"), rt: rt(ready, ran("main", 0, "sb1", "created")),
			want: []string{"start created main-0"}},

		// Ephemeral containers.
		{name: "ephemeral container first, while an init container backs off",
			pod:  withEphemeral(actionsPod(always, []string{"i1"}, "main"), "debug", ""),
			rt:   rt(ready, ran("i1", 1, "sb1", "exit:1")),
			in:   held("i1", 10*time.Second),
			want: []string{"start ephemeral container debug", "back off i1: back-off 10s restarting failed container=i1 pod=web_default(uid-1) (event)", "requeue 5s"}},
		{name: "ephemeral container in its target's process namespace",
			pod:  withEphemeral(actionsPod(always, nil, "main"), "debug", "main"),
			rt:   rt(ready, ran("main", 0, "sb1", "running")),
			want: []string{"start ephemeral container debug targeting main-0", "running or done: main"}},
		{name: "ephemeral container whose target has not run",
			pod:  withEphemeral(actionsPod(always, []string{"i1"}, "main"), "debug", "main"),
			rt:   rt(ready, ran("i1", 0, "sb1", "running")),
			want: []string{"ephemeral container debug: unable to find target container main"}},
		{name: "ephemeral container that ran is never started again",
			pod:  withEphemeral(actionsPod(always, nil, "main"), "debug", ""),
			rt:   rt([]sandbox{sbx("sb2", 1, true), sbx("sb1", 0, false)}, ran("main", 1, "sb2", "running"), ran("debug", 0, "sb1", "exit:0")),
			want: []string{"running or done: main"}},
		{name: "ephemeral container created, never started: started",
			pod:  withEphemeral(actionsPod(always, nil, "main"), "debug", ""),
			rt:   rt(ready, ran("main", 0, "sb1", "running"), ran("debug", 0, "sb1", "created")),
			want: []string{"start created debug-0", "running or done: main"}},

		// Garbage.
		{name: "two newest exited runs kept; stopped sandboxes without containers removed",
			pod: actionsPod(always, nil, "main"),
			rt: rt([]sandbox{sbx("sb3", 2, true), sbx("sb2", 1, false), sbx("sb1", 0, false)},
				ran("main", 4, "sb3", "running"), ran("main", 3, "sb3", "exit:1"), ran("main", 2, "sb2", "exit:1"),
				ran("main", 1, "sb2", "exit:1"), ran("main", 0, "sb2", "exit:1")),
			want: []string{"running or done: main", "remove container main-1", "remove container main-0", "remove sandbox sb1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := syncInput{
				pod: tc.pod, runtime: tc.rt, now: actionsNow,
				probeFailed: map[string]string{}, sidecarStarted: map[string]bool{},
				backoff: map[string]backoffHold{}, waiting: map[string]string{},
			}
			if tc.in != nil {
				tc.in(&in)
			}
			got := computePodActions(in).String()
			if want := strings.Join(tc.want, "\n"); got != want {
				t.Errorf("plan:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
