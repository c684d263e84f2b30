package kubelet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/cri/fakeruntime"
)

// calls reads a fake runtime's calls that change something, from the
// n-th on, as "Method name attempt N" lines, and moves n past them.
type calls struct {
	rt *fakeruntime.Runtime
	n  int
}

func (c *calls) take(ctx context.Context) []string {
	all := c.rt.Calls()
	var out []string
	for _, call := range all[c.n:] {
		switch req := call.Request.(type) {
		case *runtimeapi.RunPodSandboxRequest:
			out = append(out, fmt.Sprintf("RunPodSandbox attempt %d", req.Config.Metadata.Attempt))
		case *runtimeapi.CreateContainerRequest:
			out = append(out, fmt.Sprintf("CreateContainer %s attempt %d", req.Config.Metadata.Name, req.Config.Metadata.Attempt))
		case *runtimeapi.StartContainerRequest:
			st, err := c.rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: req.ContainerId})
			if err != nil {
				out = append(out, "StartContainer "+req.ContainerId)
				continue
			}
			out = append(out, fmt.Sprintf("StartContainer %s attempt %d", st.Status.Metadata.Name, st.Status.Metadata.Attempt))
		case *runtimeapi.StopContainerRequest:
			out = append(out, "StopContainer "+req.ContainerId)
		case *runtimeapi.StopPodSandboxRequest:
			out = append(out, "StopPodSandbox "+req.PodSandboxId)
		}
	}
	c.n = len(all)
	return out
}

// crash ends the running container of that name with code.
func crash(t *testing.T, rt *fakeruntime.Runtime, name string, code int32) {
	t.Helper()
	list, err := rt.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Containers {
		if c.Metadata.Name == name && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			if err := rt.Exit(c.Id, code, "Error", ""); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no running container %s", name)
}

type noVolumes struct{}

func (noVolumes) Prepare(context.Context, *v1.Pod) error { return nil }
func (noVolumes) ContainerMounts(*v1.Pod, *v1.Container, map[string]string) ([]*runtimeapi.Mount, error) {
	return nil, nil
}
func (noVolumes) Teardown(string) error      { return nil }
func (noVolumes) Orphans() ([]string, error) { return nil, nil }

func takeEvents(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// run carries computePodActions' plan out against the runtime: a sandbox
// first, the container created and started in it in the same pass; a
// crash restarted at once with the next attempt; the crash after it held
// back by the crash-loop back-off with one BackOff event; a sandbox that
// dies replaced with the next attempt.
func TestRunCarriesOutThePlan(t *testing.T) {
	ctx := context.Background()
	rt := fakeruntime.New()
	rt.AddImage("busybox", 1)
	rtCalls := &calls{rt: rt}
	rec := record.NewFakeRecorder(100)
	k := New(Config{
		NodeName: "node1", Client: fake.NewSimpleClientset(), Runtime: rt, Volumes: noVolumes{},
		PodDir: t.TempDir(), LogDir: t.TempDir(), Recorder: rec,
	})
	pod := &v1.Pod{Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{Name: "main", Image: "busybox"}}}}
	pod.Name, pod.Namespace, pod.UID = "web", "default", "uid-1"
	pass := func() time.Duration {
		t.Helper()
		again := k.run(ctx, pod)
		if err := k.state.refresh(ctx, rt, pod.UID); err != nil {
			t.Fatal(err)
		}
		return again
	}
	expect := func(step string, gotCalls, wantCalls, gotEvents, wantEvents []string) {
		t.Helper()
		if !slices.Equal(gotCalls, wantCalls) {
			t.Errorf("%s: runtime calls\n%s\nwant\n%s", step, strings.Join(gotCalls, "\n"), strings.Join(wantCalls, "\n"))
		}
		if !slices.Equal(gotEvents, wantEvents) {
			t.Errorf("%s: events\n%s\nwant\n%s", step, strings.Join(gotEvents, "\n"), strings.Join(wantEvents, "\n"))
		}
	}
	started := []string{
		`Normal Pulled Container image "busybox" already present on machine`,
		"Normal Created Created container: main",
		"Normal Started Started container main",
	}

	pass()
	expect("first pass", rtCalls.take(ctx), []string{"RunPodSandbox attempt 0", "CreateContainer main attempt 0", "StartContainer main attempt 0"},
		takeEvents(rec), started)

	crash(t, rt, "main", 1)
	_ = k.state.refresh(ctx, rt, pod.UID)
	pass()
	expect("first crash", rtCalls.take(ctx), []string{"CreateContainer main attempt 1", "StartContainer main attempt 1"}, takeEvents(rec), started)

	crash(t, rt, "main", 1)
	_ = k.state.refresh(ctx, rt, pod.UID)
	again := pass()
	backOff := "Warning BackOff Back-off restarting failed container main in pod web_default(uid-1)"
	expect("second crash", rtCalls.take(ctx), nil, takeEvents(rec), []string{backOff})
	if again <= 9*time.Second || again > 10*time.Second {
		t.Errorf("second crash: looked at again in %v, want the 10 s back-off's rest", again)
	}
	w := k.waitingOf(pod.UID)["main"]
	if want := "back-off 10s restarting failed container=main pod=web_default(uid-1)"; w.reason != "CrashLoopBackOff" || w.message != want {
		t.Errorf("second crash: waiting %q %q, want CrashLoopBackOff %q", w.reason, w.message, want)
	}
	pass()
	expect("back-off still holding", rtCalls.take(ctx), nil, takeEvents(rec), nil)

	sandboxes, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil || len(sandboxes.Items) != 1 {
		t.Fatalf("sandboxes %v %v, want one", sandboxes, err)
	}
	if err := rt.KillSandbox(sandboxes.Items[0].Id); err != nil {
		t.Fatal(err)
	}
	_ = k.state.refresh(ctx, rt, pod.UID)
	pass()
	expect("sandbox died", rtCalls.take(ctx), []string{"RunPodSandbox attempt 1"}, takeEvents(rec), nil)
}
