package prober_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/cri/fakeruntime"
	"github.com/orca-project/orca/internal/kubelet/prober"
)

// runningContainer starts one container in the runtime and returns its ID.
func runningContainer(t *testing.T, rt *fakeruntime.Runtime) string {
	t.Helper()
	ctx := context.Background()
	rt.AddImage("busybox", 1)
	sbCfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "default", Uid: "uid-p"}}
	sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbCfg})
	if err != nil {
		t.Fatal(err)
	}
	c, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: "busybox"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
		t.Fatal(err)
	}
	return c.ContainerId
}

func TestExecProbes(t *testing.T) {
	exec := func(cmd ...string) v1.ProbeHandler { return v1.ProbeHandler{Exec: &v1.ExecAction{Command: cmd}} }
	cases := []struct {
		name string
		kind prober.Kind
		cmd  []string
		// exited makes the container exit before the probe runs.
		exited  bool
		want    bool
		message string
		event   string
		// changed: the result differs from the one before the first run
		// (not ready, alive, not started), so the kubelet is told.
		changed bool
	}{
		{"readiness passes", prober.Readiness, []string{"ok"}, false, true, "", "", true},
		{"readiness fails with the command's output", prober.Readiness, []string{"fail", "not ready yet"}, false, false,
			"not ready yet", "Warning Unhealthy Readiness probe failed: not ready yet", false},
		{"liveness fails", prober.Liveness, []string{"fail", "dead"}, false, false, "dead", "Warning Unhealthy Liveness probe failed: dead", true},
		{"startup passes", prober.Startup, []string{"ok"}, false, true, "", "", true},
		{"command times out", prober.Readiness, []string{"hang"}, false, false, `command "hang" timed out`, "Warning Unhealthy Readiness probe failed: command", false},
		{"container gone", prober.Readiness, []string{"ok"}, true, false, "container is in CONTAINER_EXITED state", "Warning Unhealthy Readiness probe failed: container is in", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := fakeruntime.New()
			id := runningContainer(t, rt)
			rt.SetExecHandler(func(ctx context.Context, cid string, cmd []string) ([]byte, []byte, int32, error) {
				if cid != id {
					t.Errorf("exec in %s, want %s", cid, id)
				}
				switch cmd[0] {
				case "fail":
					return []byte(cmd[1]), nil, 1, nil
				case "hang":
					<-ctx.Done()
					return nil, nil, -1, ctx.Err()
				}
				return nil, nil, 0, nil
			})
			if tc.exited {
				_ = rt.Exit(id, 0, "", "")
			}
			changed := make(chan types.UID, 10)
			events := record.NewFakeRecorder(10)
			m := prober.NewManager(prober.Config{Exec: prober.CRIExec{Runtime: rt}, Recorder: events, OnChange: func(uid types.UID, _ prober.Kind) { changed <- uid }})
			defer m.Stop()
			probe := &v1.Probe{ProbeHandler: exec(tc.cmd...), PeriodSeconds: 60, TimeoutSeconds: 1, FailureThreshold: 1}
			c := v1.Container{Name: "app"}
			switch tc.kind {
			case prober.Readiness:
				c.ReadinessProbe = probe
			case prober.Liveness:
				c.LivenessProbe = probe
			case prober.Startup:
				c.StartupProbe = probe
			}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"}, Spec: v1.PodSpec{Containers: []v1.Container{c}}}
			m.Update(pod, map[string]string{"app": id}, "10.88.0.2")

			deadline := time.Now().Add(5 * time.Second)
			for {
				ok, known, has, msg := m.Result(pod.UID, "app", tc.kind, id)
				if !has {
					t.Fatal("no probe worker")
				}
				// Readiness starts known-false and liveness known-true:
				// wait for the first run's result to show.
				if known && ok == tc.want && msg == tc.message && (tc.want || msg != "") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("result ok=%v known=%v message %q, want ok=%v message %q", ok, known, msg, tc.want, tc.message)
				}
				time.Sleep(5 * time.Millisecond)
			}
			if tc.event != "" {
				select {
				case e := <-events.Events:
					if !strings.HasPrefix(e, tc.event) {
						t.Errorf("event %q, want %q", e, tc.event)
					}
				case <-time.After(time.Second):
					t.Errorf("no event, want %q", tc.event)
				}
			}
			wait := 50 * time.Millisecond
			if tc.changed {
				wait = time.Second
			}
			select {
			case uid := <-changed:
				if !tc.changed || uid != pod.UID {
					t.Errorf("change reported for %s", uid)
				}
			case <-time.After(wait):
				if tc.changed {
					t.Error("the change of result was not reported")
				}
			}
		})
	}
}
