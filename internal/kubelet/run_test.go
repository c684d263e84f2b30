package kubelet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// recordingRuntime is just enough of a CRI runtime, in memory, for run's
// calls, which it records in order. A call it does not implement panics
// on the nil embedded interface: run is not expected to make it.
type recordingRuntime struct {
	Runtime
	mu         sync.Mutex
	calls      []string
	next       int
	sandboxes  []*runtimeapi.PodSandbox
	containers []*runtimeapi.ContainerStatus
	sandboxOf  map[string]string
}

func (r *recordingRuntime) record(format string, args ...any) {
	r.calls = append(r.calls, fmt.Sprintf(format, args...))
}

func (r *recordingRuntime) id(prefix string) string {
	r.next++
	return fmt.Sprintf("%s%d", prefix, r.next)
}

func (r *recordingRuntime) RunPodSandbox(_ context.Context, req *runtimeapi.RunPodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.RunPodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	md := req.Config.Metadata
	r.record("RunPodSandbox attempt %d", md.Attempt)
	sb := &runtimeapi.PodSandbox{Id: r.id("sb"), Metadata: md, State: runtimeapi.PodSandboxState_SANDBOX_READY,
		CreatedAt: time.Now().UnixNano(), Labels: req.Config.Labels, Annotations: req.Config.Annotations}
	r.sandboxes = append(r.sandboxes, sb)
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: sb.Id}, nil
}

func (r *recordingRuntime) StopPodSandbox(_ context.Context, req *runtimeapi.StopPodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.StopPodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("StopPodSandbox %s", req.PodSandboxId)
	for _, sb := range r.sandboxes {
		if sb.Id == req.PodSandboxId {
			sb.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
		}
	}
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

func (r *recordingRuntime) ListPodSandbox(context.Context, *runtimeapi.ListPodSandboxRequest, ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := &runtimeapi.ListPodSandboxResponse{}
	for _, sb := range r.sandboxes {
		out.Items = append(out.Items, proto.Clone(sb).(*runtimeapi.PodSandbox))
	}
	return out, nil
}

func (r *recordingRuntime) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest, _ ...grpc.CallOption) (*runtimeapi.PodSandboxStatusResponse, error) {
	return &runtimeapi.PodSandboxStatusResponse{Status: &runtimeapi.PodSandboxStatus{
		Id: req.PodSandboxId, Network: &runtimeapi.PodSandboxNetworkStatus{Ip: "10.42.0.9"},
	}}, nil
}

func (r *recordingRuntime) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest, _ ...grpc.CallOption) (*runtimeapi.ImageStatusResponse, error) {
	return &runtimeapi.ImageStatusResponse{Image: &runtimeapi.Image{Id: "sha256:" + req.Image.Image}}, nil
}

func (r *recordingRuntime) CreateContainer(_ context.Context, req *runtimeapi.CreateContainerRequest, _ ...grpc.CallOption) (*runtimeapi.CreateContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	md := req.Config.Metadata
	r.record("CreateContainer %s attempt %d", md.Name, md.Attempt)
	st := &runtimeapi.ContainerStatus{Id: r.id("c"), Metadata: md, State: runtimeapi.ContainerState_CONTAINER_CREATED,
		CreatedAt: time.Now().UnixNano(), Image: req.Config.Image, Labels: req.Config.Labels, Annotations: req.Config.Annotations}
	r.containers = append(r.containers, st)
	r.sandboxOf[st.Id] = req.PodSandboxId
	return &runtimeapi.CreateContainerResponse{ContainerId: st.Id}, nil
}

func (r *recordingRuntime) StartContainer(_ context.Context, req *runtimeapi.StartContainerRequest, _ ...grpc.CallOption) (*runtimeapi.StartContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.container(req.ContainerId)
	r.record("StartContainer %s attempt %d", st.Metadata.Name, st.Metadata.Attempt)
	st.State, st.StartedAt = runtimeapi.ContainerState_CONTAINER_RUNNING, time.Now().UnixNano()
	return &runtimeapi.StartContainerResponse{}, nil
}

func (r *recordingRuntime) StopContainer(_ context.Context, req *runtimeapi.StopContainerRequest, _ ...grpc.CallOption) (*runtimeapi.StopContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.container(req.ContainerId)
	r.record("StopContainer %s attempt %d", st.Metadata.Name, st.Metadata.Attempt)
	r.exit(st, 137)
	return &runtimeapi.StopContainerResponse{}, nil
}

func (r *recordingRuntime) ListContainers(context.Context, *runtimeapi.ListContainersRequest, ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := &runtimeapi.ListContainersResponse{}
	for _, st := range r.containers {
		out.Containers = append(out.Containers, &runtimeapi.Container{Id: st.Id, PodSandboxId: r.sandboxOf[st.Id], Metadata: st.Metadata,
			Image: st.Image, State: st.State, CreatedAt: st.CreatedAt, Labels: st.Labels, Annotations: st.Annotations})
	}
	return out, nil
}

func (r *recordingRuntime) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest, _ ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &runtimeapi.ContainerStatusResponse{Status: proto.Clone(r.container(req.ContainerId)).(*runtimeapi.ContainerStatus)}, nil
}

func (r *recordingRuntime) container(id string) *runtimeapi.ContainerStatus {
	for _, st := range r.containers {
		if st.Id == id {
			return st
		}
	}
	panic("no container " + id)
}

func (r *recordingRuntime) exit(st *runtimeapi.ContainerStatus, code int32) {
	st.State, st.ExitCode, st.FinishedAt = runtimeapi.ContainerState_CONTAINER_EXITED, code, time.Now().UnixNano()
}

// crash makes the newest run of a container exit with code.
func (r *recordingRuntime) crash(name string, code int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.containers) - 1; i >= 0; i-- {
		if st := r.containers[i]; st.Metadata.Name == name {
			r.exit(st, code)
			return
		}
	}
}

// takeCalls returns the calls recorded since the last take.
func (r *recordingRuntime) takeCalls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
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
	rt := &recordingRuntime{sandboxOf: map[string]string{}}
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
	expect("first pass", rt.takeCalls(), []string{"RunPodSandbox attempt 0", "CreateContainer main attempt 0", "StartContainer main attempt 0"},
		takeEvents(rec), started)

	rt.crash("main", 1)
	_ = k.state.refresh(ctx, rt, pod.UID)
	pass()
	expect("first crash", rt.takeCalls(), []string{"CreateContainer main attempt 1", "StartContainer main attempt 1"}, takeEvents(rec), started)

	rt.crash("main", 1)
	_ = k.state.refresh(ctx, rt, pod.UID)
	again := pass()
	backOff := "Warning BackOff Back-off restarting failed container main in pod web_default(uid-1)"
	expect("second crash", rt.takeCalls(), nil, takeEvents(rec), []string{backOff})
	if again <= 9*time.Second || again > 10*time.Second {
		t.Errorf("second crash: looked at again in %v, want the 10 s back-off's rest", again)
	}
	w := k.waitingOf(pod.UID)["main"]
	if want := "back-off 10s restarting failed container=main pod=web_default(uid-1)"; w.reason != "CrashLoopBackOff" || w.message != want {
		t.Errorf("second crash: waiting %q %q, want CrashLoopBackOff %q", w.reason, w.message, want)
	}
	pass()
	expect("back-off still holding", rt.takeCalls(), nil, takeEvents(rec), nil)

	rt.mu.Lock()
	rt.sandboxes[0].State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	rt.mu.Unlock()
	_ = k.state.refresh(ctx, rt, pod.UID)
	pass()
	expect("sandbox died", rt.takeCalls(), []string{"RunPodSandbox attempt 1"}, takeEvents(rec), nil)
}
