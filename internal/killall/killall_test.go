package killall

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestUnusedNetns(t *testing.T) {
	pinned := []Netns{{"cni-a", 10}, {"cni-b", 11}, {"orca-worker-1", 12}, {"cni-c", 13}, {"cni-other-node", 14}}
	ours := map[uint64]bool{10: true, 11: true, 12: true, 13: true, 1: true}
	got := UnusedNetns(pinned, map[uint64]bool{11: true, 1: true}, ours)
	if want := []string{"cni-a", "cni-c"}; !slices.Equal(got, want) {
		t.Errorf("UnusedNetns = %q, want %q", got, want)
	}
}

// fakeRuntime is a CRI runtime holding sandboxes; the embedded interface
// panics on anything else.
type fakeRuntime struct {
	runtimeapi.RuntimeServiceClient
	sandboxes []string
	failStop  string
	calls     []string
}

func (f *fakeRuntime) ListPodSandbox(context.Context, *runtimeapi.ListPodSandboxRequest, ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error) {
	var items []*runtimeapi.PodSandbox
	for _, id := range f.sandboxes {
		items = append(items, &runtimeapi.PodSandbox{Id: id, Metadata: &runtimeapi.PodSandboxMetadata{Namespace: "ns", Name: "pod-" + id}})
	}
	return &runtimeapi.ListPodSandboxResponse{Items: items}, nil
}

func (f *fakeRuntime) StopPodSandbox(_ context.Context, r *runtimeapi.StopPodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.StopPodSandboxResponse, error) {
	f.calls = append(f.calls, "stop "+r.PodSandboxId)
	if r.PodSandboxId == f.failStop {
		return nil, errors.New("stuck")
	}
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

func (f *fakeRuntime) RemovePodSandbox(_ context.Context, r *runtimeapi.RemovePodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.RemovePodSandboxResponse, error) {
	f.calls = append(f.calls, "remove "+r.PodSandboxId)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

func TestRemoveSandboxes(t *testing.T) {
	rt := &fakeRuntime{sandboxes: []string{"a", "b", "c"}, failStop: "b"}
	n, err := removeSandboxes(context.Background(), rt)
	if n != 2 || err == nil {
		t.Errorf("removed %d, err %v; want 2 and an error for b", n, err)
	}
	if want := []string{"stop a", "remove a", "stop b", "stop c", "remove c"}; !slices.Equal(rt.calls, want) {
		t.Errorf("calls %q, want %q", rt.calls, want)
	}
}

func TestDir(t *testing.T) {
	tmp := t.TempDir()
	real := filepath.Join(tmp, "real")
	link := filepath.Join(tmp, "link")
	if err := mkdirSymlink(real, link); err != nil {
		t.Fatal(err)
	}
	realResolved, _ := filepath.EvalSymlinks(real)
	for _, tc := range []struct {
		in, want string
		err      bool
	}{
		{in: link + "/", want: realResolved},
		{in: filepath.Join(tmp, "missing", "..", "missing2"), want: filepath.Join(mustEval(t, tmp), "missing2")},
		{in: "/", err: true},
		{in: "/tmp/..", err: true},
	} {
		got, err := Dir(tc.in)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("Dir(%q) = %q, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestReportWriteTo(t *testing.T) {
	var b bytes.Buffer
	if _, err := (Report{Sandboxes: 1, Processes: 7, Mounts: 3, Netns: 1, Links: 3, Routes: 2, Tables: 2}).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	want := `1 pod sandboxes removed through CRI
7 processes killed
3 mounts unmounted
1 pod network namespaces removed
3 network links deleted
2 routes deleted
2 nftables tables deleted
`
	if b.String() != want {
		t.Errorf("report:\n%s\nwant\n%s", b.String(), want)
	}
}

func mkdirSymlink(dir, link string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	return os.Symlink(dir, link)
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
