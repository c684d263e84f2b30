package fakeruntime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/orca-project/orca/internal/cri"
	"github.com/orca-project/orca/internal/cri/fakeruntime"
	"github.com/orca-project/orca/internal/kubelet"
	"github.com/orca-project/orca/internal/kubelet/credentials"
	"github.com/orca-project/orca/internal/kubelet/imagegc"
	"github.com/orca-project/orca/internal/kubelet/logrotate"
	"github.com/orca-project/orca/internal/kubelet/stats"
)

// The fake stands in for the real client wherever the kubelet and its
// parts consume a runtime.
var (
	_ kubelet.Runtime    = (*fakeruntime.Runtime)(nil)
	_ kubelet.Runtime    = (*cri.Client)(nil)
	_ imagegc.Runtime    = (*fakeruntime.Runtime)(nil)
	_ logrotate.Runtime  = (*fakeruntime.Runtime)(nil)
	_ stats.Runtime      = (*fakeruntime.Runtime)(nil)
	_ credentials.Puller = (*fakeruntime.Runtime)(nil)
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func sandboxConfig(name string, attempt uint32) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "ns", Uid: "uid-" + name, Attempt: attempt},
		Labels:       map[string]string{"pod": name},
		LogDirectory: "/logs/" + name,
	}
}

func containerConfig(name string, attempt uint32) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		Image:    &runtimeapi.ImageSpec{Image: "busybox"},
		Labels:   map[string]string{"container": name},
		LogPath:  name + "/0.log",
	}
}

// env is a runtime with busybox present, one ready sandbox "a" and one
// container "c" created in it, on a clock the test moves.
type env struct {
	rt    *fakeruntime.Runtime
	clock *clocktesting.FakeClock
	sb, c string
}

func newEnv(t *testing.T, opts ...fakeruntime.Option) *env {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	rt := fakeruntime.New(append([]fakeruntime.Option{fakeruntime.WithClock(clk)}, opts...)...)
	rt.AddImage("busybox", 1000)
	ctx := context.Background()
	sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("a", 0)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: containerConfig("c", 0), SandboxConfig: sandboxConfig("a", 0)})
	if err != nil {
		t.Fatal(err)
	}
	return &env{rt: rt, clock: clk, sb: sb.PodSandboxId, c: c.ContainerId}
}

func (e *env) status(t *testing.T) *runtimeapi.ContainerStatus {
	t.Helper()
	st, err := e.rt.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: e.c})
	if err != nil {
		t.Fatal(err)
	}
	return st.Status
}

func (e *env) start(t *testing.T) {
	t.Helper()
	e.clock.Step(time.Second)
	if _, err := e.rt.StartContainer(context.Background(), &runtimeapi.StartContainerRequest{ContainerId: e.c}); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(time.Second)
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		call func(e *env) error
		want codes.Code
	}{
		{"same sandbox name and attempt", func(e *env) error {
			_, err := e.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("a", 0)})
			return err
		}, codes.AlreadyExists},
		{"next sandbox attempt", func(e *env) error {
			_, err := e.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("a", 1)})
			return err
		}, codes.OK},
		{"sandbox name free once removed", func(e *env) error {
			if _, err := e.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: e.sb}); err != nil {
				return err
			}
			_, err := e.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("a", 0)})
			return err
		}, codes.OK},
		{"same container name and attempt", func(e *env) error {
			_, err := e.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: e.sb, Config: containerConfig("c", 0)})
			return err
		}, codes.AlreadyExists},
		{"image not present", func(e *env) error {
			cfg := containerConfig("d", 0)
			cfg.Image.Image = "nginx"
			_, err := e.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: e.sb, Config: cfg})
			return err
		}, codes.NotFound},
		{"pull an image no registry serves", func(e *env) error {
			_, err := e.rt.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "nginx"}})
			return err
		}, codes.NotFound},
		{"status of unknown container", func(e *env) error {
			_, err := e.rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: "nope"})
			return err
		}, codes.NotFound},
		{"status of unknown sandbox", func(e *env) error {
			_, err := e.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: "nope"})
			return err
		}, codes.NotFound},
		{"stop unknown container", func(e *env) error {
			_, err := e.rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: "nope"})
			return err
		}, codes.NotFound},
		{"remove unknown container", func(e *env) error {
			_, err := e.rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: "nope"})
			return err
		}, codes.OK},
		{"remove unknown sandbox", func(e *env) error {
			_, err := e.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: "nope"})
			return err
		}, codes.OK},
		{"start twice", func(e *env) error {
			if _, err := e.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: e.c}); err != nil {
				return err
			}
			_, err := e.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: e.c})
			return err
		}, codes.Unknown},
		{"exec in a container not running", func(e *env) error {
			_, err := e.rt.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: e.c, Cmd: []string{"true"}})
			return err
		}, codes.Unknown},
		{"create in a stopped sandbox", func(e *env) error {
			if _, err := e.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: e.sb}); err != nil {
				return err
			}
			_, err := e.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: e.sb, Config: containerConfig("d", 0)})
			return err
		}, codes.Unknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(newEnv(t))
			if got := status.Code(err); got != tc.want {
				t.Fatalf("code %v (%v), want %v", got, err, tc.want)
			}
		})
	}
}

func TestContainerLifecycle(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name       string
		act        func(t *testing.T, e *env)
		state      runtimeapi.ContainerState
		exitCode   int32
		reason     string
		startedAt  time.Time
		finishedAt time.Time
	}{
		{"created", func(*testing.T, *env) {}, runtimeapi.ContainerState_CONTAINER_CREATED, 0, "", time.Time{}, time.Time{}},
		{"started", func(t *testing.T, e *env) { e.start(t) }, runtimeapi.ContainerState_CONTAINER_RUNNING, 0, "", t0.Add(time.Second), time.Time{}},
		{"exits 0", func(t *testing.T, e *env) {
			e.start(t)
			_ = e.rt.Exit(e.c, 0, "", "")
		}, runtimeapi.ContainerState_CONTAINER_EXITED, 0, "Completed", t0.Add(time.Second), t0.Add(2 * time.Second)},
		{"fails", func(t *testing.T, e *env) {
			e.start(t)
			_ = e.rt.Exit(e.c, 2, "", "")
		}, runtimeapi.ContainerState_CONTAINER_EXITED, 2, "Error", t0.Add(time.Second), t0.Add(2 * time.Second)},
		{"killed by the kernel", func(t *testing.T, e *env) {
			e.start(t)
			_ = e.rt.Exit(e.c, 137, "OOMKilled", "")
		}, runtimeapi.ContainerState_CONTAINER_EXITED, 137, "OOMKilled", t0.Add(time.Second), t0.Add(2 * time.Second)},
		{"stopped", func(t *testing.T, e *env) {
			e.start(t)
			_, _ = e.rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: e.c, Timeout: 30})
		}, runtimeapi.ContainerState_CONTAINER_EXITED, 137, "Error", t0.Add(time.Second), t0.Add(2 * time.Second)},
		{"stopped before it started", func(t *testing.T, e *env) {
			_, _ = e.rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: e.c})
		}, runtimeapi.ContainerState_CONTAINER_CREATED, 0, "", time.Time{}, time.Time{}},
		{"its sandbox stopped", func(t *testing.T, e *env) {
			e.start(t)
			_, _ = e.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: e.sb})
		}, runtimeapi.ContainerState_CONTAINER_EXITED, 137, "Error", t0.Add(time.Second), t0.Add(2 * time.Second)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tc.act(t, e)
			st := e.status(t)
			if st.State != tc.state || st.ExitCode != tc.exitCode || st.Reason != tc.reason {
				t.Errorf("state %v code %d reason %q, want %v %d %q", st.State, st.ExitCode, st.Reason, tc.state, tc.exitCode, tc.reason)
			}
			if got := nanos(st.StartedAt); !got.Equal(tc.startedAt) {
				t.Errorf("startedAt %v, want %v", got, tc.startedAt)
			}
			if got := nanos(st.FinishedAt); !got.Equal(tc.finishedAt) {
				t.Errorf("finishedAt %v, want %v", got, tc.finishedAt)
			}
			if !nanos(st.CreatedAt).Equal(t0) || st.LogPath != "/logs/a/c/0.log" || st.Image.Image != "docker.io/library/busybox:latest" {
				t.Errorf("createdAt %v log %q image %q", nanos(st.CreatedAt), st.LogPath, st.Image.Image)
			}
		})
	}
}

func nanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func TestListFilters(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	sb2, err := e.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("b", 0)})
	if err != nil {
		t.Fatal(err)
	}
	c2, err := e.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb2.PodSandboxId, Config: containerConfig("c", 0)})
	if err != nil {
		t.Fatal(err)
	}
	e.start(t)
	running := &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}
	cases := []struct {
		name   string
		filter *runtimeapi.ContainerFilter
		want   []string
	}{
		{"all", nil, []string{e.c, c2.ContainerId}},
		{"by sandbox", &runtimeapi.ContainerFilter{PodSandboxId: sb2.PodSandboxId}, []string{c2.ContainerId}},
		{"by id prefix", &runtimeapi.ContainerFilter{Id: e.c[:12]}, []string{e.c}},
		{"by state", &runtimeapi.ContainerFilter{State: running}, []string{e.c}},
		{"by label", &runtimeapi.ContainerFilter{LabelSelector: map[string]string{"container": "c"}}, []string{e.c, c2.ContainerId}},
		{"by other label", &runtimeapi.ContainerFilter{LabelSelector: map[string]string{"container": "x"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := e.rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: tc.filter})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, c := range resp.Containers {
				got[c.Id] = true
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d containers, want %d", len(got), len(tc.want))
			}
			for _, id := range tc.want {
				if !got[id] {
					t.Errorf("missing %s", id)
				}
			}
		})
	}
	sbs, _ := e.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"pod": "b"}}})
	if len(sbs.Items) != 1 || sbs.Items[0].Id != sb2.PodSandboxId {
		t.Errorf("sandboxes labelled pod=b: %v", sbs.Items)
	}
}

func TestSandboxAddresses(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		opts   []fakeruntime.Option
		host   bool
		wantIP string
	}{
		{"pod network, default allocator", nil, false, "10.88.0.3"},
		{"pod network, own allocator", []fakeruntime.Option{fakeruntime.WithIPAllocator(func(cfg *runtimeapi.PodSandboxConfig) ([]string, error) {
			return []string{"10.244.0." + fmt.Sprint(len(cfg.Metadata.Name)), "fd00::1"}, nil
		})}, false, "10.244.0.1"},
		{"node network", nil, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts...)
			cfg := sandboxConfig("b", 0)
			if tc.host {
				cfg.Linux = &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
					NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}}}
			}
			sb, err := e.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			st, err := e.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.PodSandboxId})
			if err != nil {
				t.Fatal(err)
			}
			if st.Status.Network.Ip != tc.wantIP || st.Status.State != runtimeapi.PodSandboxState_SANDBOX_READY {
				t.Errorf("ip %q state %v, want %q ready", st.Status.Network.Ip, st.Status.State, tc.wantIP)
			}
		})
	}
	// The failed sandbox holds no name: a second try may succeed.
	ok := true
	rt := fakeruntime.New(fakeruntime.WithIPAllocator(func(*runtimeapi.PodSandboxConfig) ([]string, error) {
		if ok {
			ok = false
			return nil, errors.New("CNI ADD failed")
		}
		return []string{"10.1.0.5"}, nil
	}))
	if _, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("a", 0)}); err == nil {
		t.Fatal("first sandbox: no error from a failing allocator")
	}
	if _, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("a", 0)}); err != nil {
		t.Fatalf("second sandbox: %v", err)
	}
}

func TestImages(t *testing.T) {
	ctx := context.Background()
	rt := fakeruntime.New()
	rt.AddRegistryImage("registry.local/app:v1", 500)
	pulled, err := rt.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "registry.local/app:v1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"registry.local/app:v1", pulled.ImageRef} {
		st, _ := rt.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
		if st.Image == nil || st.Image.Id != pulled.ImageRef || st.Image.Size != 500 {
			t.Errorf("status of %s: %v", ref, st.Image)
		}
	}
	fs, _ := rt.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if got := fs.ImageFilesystems[0].UsedBytes.Value; got != 500 {
		t.Errorf("image fs used %d, want 500", got)
	}
	if _, err := rt.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: pulled.ImageRef}}); err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "registry.local/app:v1"}}); st.Image != nil {
		t.Errorf("removed image still present: %v", st.Image)
	}
}

func TestExecAndStats(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.start(t)
	e.rt.SetExecHandler(func(_ context.Context, id string, cmd []string) ([]byte, []byte, int32, error) {
		if cmd[0] == "fail" {
			return nil, []byte("bad"), 3, nil
		}
		return []byte(id[:4]), nil, 0, nil
	})
	ok, err := e.rt.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: e.c, Cmd: []string{"true"}})
	if err != nil || ok.ExitCode != 0 || string(ok.Stdout) != e.c[:4] {
		t.Errorf("exec true: %v %v", ok, err)
	}
	bad, err := e.rt.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: e.c, Cmd: []string{"fail"}})
	if err != nil || bad.ExitCode != 3 || string(bad.Stderr) != "bad" {
		t.Errorf("exec fail: %v %v", bad, err)
	}
	if err := e.rt.SetContainerStats(e.c, &runtimeapi.ContainerStats{Memory: &runtimeapi.MemoryUsage{UsageBytes: &runtimeapi.UInt64Value{Value: 42}}}); err != nil {
		t.Fatal(err)
	}
	list, _ := e.rt.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{Filter: &runtimeapi.ContainerStatsFilter{PodSandboxId: e.sb}})
	if len(list.Stats) != 1 || list.Stats[0].Attributes.Id != e.c || list.Stats[0].Memory.UsageBytes.Value != 42 {
		t.Errorf("container stats: %v", list.Stats)
	}
	pods, _ := e.rt.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{})
	if len(pods.Stats) != 1 || len(pods.Stats[0].Linux.Containers) != 1 || pods.Stats[0].Linux.Containers[0].Memory.UsageBytes.Value != 42 {
		t.Errorf("sandbox stats: %v", pods.Stats)
	}
}
