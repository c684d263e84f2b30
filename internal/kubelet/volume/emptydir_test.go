package volume

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestEmptyDirOnDisk(t *testing.T) {
	m := newManager(t, newFakeSources())
	pod := podWith(v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	vols, err := setup(t, m, pod)
	if err != nil {
		t.Fatal(err)
	}
	vol := vols["scratch"]
	if want := filepath.Join(m.Root, "uid-1/volumes/kubernetes.io~empty-dir/scratch"); vol.HostPath != want || vol.ReadOnly {
		t.Fatalf("volume %+v, want writable %s", vol, want)
	}
	if mode, _ := statOf(t, vol.HostPath); mode.Perm() != 0o777 || !mode.IsDir() {
		t.Fatalf("mode %v, want a 0777 directory", mode)
	}
	// What containers write survives a resync.
	if err := os.WriteFile(filepath.Join(vol.HostPath, "data"), []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(vol.HostPath, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Setup(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(vol.HostPath, "data")); got != "kept" {
		t.Fatalf("data = %q after resync", got)
	}
	if mode, _ := statOf(t, vol.HostPath); mode.Perm() != 0o700 {
		t.Fatalf("resync changed the mode of a used emptyDir to %v", mode.Perm())
	}
}

func TestEmptyDirFSGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing groups needs root")
	}
	m := newManager(t, newFakeSources())
	pod := podWith(v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: ptr(int64(1234))}
	vols, err := setup(t, m, pod)
	if err != nil {
		t.Fatal(err)
	}
	mode, gid := statOf(t, vols["scratch"].HostPath)
	if gid != 1234 || mode&os.ModeSetgid == 0 || mode.Perm() != 0o777 {
		t.Fatalf("mode %v gid %d, want set-gid 0777 owned by group 1234", mode, gid)
	}
}

func TestEmptyDirMemoryIsTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting tmpfs needs root")
	}
	m := newManager(t, newFakeSources())
	m.NodeAllocatable = v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}
	pod := podWith(v1.Volume{Name: "shm", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{
		Medium: v1.StorageMediumMemory, SizeLimit: ptr(resource.MustParse("8Mi")),
	}}})
	vols, err := setup(t, m, pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := vols["shm"].HostPath
	if opts := mountOptions(t, dir); !strings.Contains(opts, "size=8192k") {
		t.Fatalf("tmpfs options %q, want size=8192k", opts)
	}
	if mode, _ := statOf(t, dir); mode.Perm() != 0o777 {
		t.Fatalf("tmpfs mode %v", mode.Perm())
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Setup(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	if n := countMounts(t, dir); n != 1 {
		t.Fatalf("%d mounts after resync", n)
	}
	if got := readFile(t, filepath.Join(dir, "f")); got != "x" {
		t.Fatalf("tmpfs contents lost on resync: %q", got)
	}
	if err := m.Teardown("uid-1"); err != nil {
		t.Fatal(err)
	}
	if n := countMounts(t, m.Root); n != 0 {
		t.Fatalf("%d mounts left after Teardown", n)
	}
}

func TestEmptyDirHugePagesRefused(t *testing.T) {
	m := newManager(t, newFakeSources())
	_, err := setup(t, m, podWith(v1.Volume{Name: "hp", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumHugePages}}}))
	if err == nil || !strings.Contains(err.Error(), `MountVolume.SetUp failed for volume "hp" : emptyDir medium "HugePages" is not supported`) {
		t.Fatalf("err = %v", err)
	}
}

func TestMemorySize(t *testing.T) {
	q := resource.MustParse
	qp := func(s string) *resource.Quantity { v := q(s); return &v }
	tests := []struct {
		name      string
		node      resource.Quantity
		pod, size *resource.Quantity
		want      string
	}{
		{"node only", q("8Gi"), nil, nil, "8Gi"},
		{"pod limit lower", q("8Gi"), qp("1Gi"), nil, "1Gi"},
		{"sizeLimit lowest", q("8Gi"), qp("1Gi"), qp("64Mi"), "64Mi"},
		{"sizeLimit above the pod limit is ignored", q("8Gi"), qp("1Gi"), qp("2Gi"), "1Gi"},
		{"pod limit above the node is ignored", q("8Gi"), qp("16Gi"), nil, "8Gi"},
		{"unknown node memory", resource.Quantity{}, nil, qp("64Mi"), "64Mi"},
		{"nothing known: kernel default", resource.Quantity{}, nil, nil, "0"},
		{"zero sizeLimit is no limit", q("8Gi"), nil, qp("0"), "8Gi"},
	}
	for _, tt := range tests {
		got := memorySize(tt.node, tt.pod, tt.size)
		if got.Cmp(q(tt.want)) != 0 {
			t.Errorf("%s: %s, want %s", tt.name, got.String(), tt.want)
		}
	}
}

func TestPodMemoryLimit(t *testing.T) {
	limited := func(s string) v1.Container {
		return v1.Container{Resources: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse(s)}}}
	}
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{limited("64Mi"), limited("32Mi")}, InitContainers: []v1.Container{limited("128Mi")}}}
	if got := podMemoryLimit(pod); got == nil || got.Cmp(resource.MustParse("128Mi")) != 0 {
		t.Fatalf("limit %v, want the init container's 128Mi", got)
	}
	pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{})
	if got := podMemoryLimit(pod); got != nil {
		t.Fatalf("limit %v with an unlimited container, want none", got)
	}
}
