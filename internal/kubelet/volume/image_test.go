package volume

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
)

// fakeImages mounts a tmpfs where the runtime would mount the image, so
// the manager's mount-once logic sees a real mount point.
type fakeImages struct {
	mounts, unmounts []string
}

func (f *fakeImages) MountImage(_ context.Context, _ *v1.Pod, src *v1.ImageVolumeSource, target string) error {
	f.mounts = append(f.mounts, src.Reference+" "+target)
	return unix.Mount("tmpfs", target, "tmpfs", unix.MS_RDONLY, "")
}

func (f *fakeImages) UnmountImage(_ context.Context, target string) error {
	f.unmounts = append(f.unmounts, target)
	return unix.Unmount(target, 0)
}

func TestImageVolumeMountedOnceAndReleased(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	m := newManager(t, newFakeSources())
	imgs := &fakeImages{}
	m.Images = imgs
	pod := podWith(v1.Volume{Name: "tools", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: "example.com/tools:1", PullPolicy: v1.PullIfNotPresent}}})
	vols, err := setup(t, m, pod)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(m.Root, string(pod.UID), "volumes", "kubernetes.io~image", "tools")
	if v := vols["tools"]; v.HostPath != want || !v.ReadOnly {
		t.Fatalf("volume %+v, want read-only at %s", v, want)
	}
	if _, err := setup(t, m, pod); err != nil {
		t.Fatal(err)
	}
	if len(imgs.mounts) != 1 || imgs.mounts[0] != "example.com/tools:1 "+want {
		t.Fatalf("mounts %q after two syncs, want one of the image at its directory", imgs.mounts)
	}
	if err := m.Teardown(string(pod.UID)); err != nil {
		t.Fatal(err)
	}
	if len(imgs.unmounts) != 1 || imgs.unmounts[0] != want {
		t.Fatalf("unmounts %q, want the image volume's directory", imgs.unmounts)
	}
	if _, err := os.Stat(want); !os.IsNotExist(err) {
		t.Fatalf("image volume directory left behind: %v", err)
	}
}

func TestImageVolumeWithoutRuntimeSupport(t *testing.T) {
	m := newManager(t, newFakeSources())
	pod := podWith(v1.Volume{Name: "tools", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: "example.com/tools:1"}}})
	_, err := setup(t, m, pod)
	if err == nil || !strings.Contains(err.Error(), `MountVolume.SetUp failed for volume "tools" : image volumes are not supported on this node`) {
		t.Fatalf("err %v, want the volume's mount failure", err)
	}
}
