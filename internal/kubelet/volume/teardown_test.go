package volume

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestTeardownAndOrphans(t *testing.T) {
	src := newFakeSources()
	src.secrets["shop/creds"] = &v1.Secret{Data: map[string][]byte{"pass": []byte("x")}}
	m := newManager(t, src)
	hostDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(hostDir, "keep"), []byte("host data"), 0o644); err != nil {
		t.Fatal(err)
	}
	volumes := []v1.Volume{
		{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "shm", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
		{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds"}}},
		{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir}}},
	}
	if os.Geteuid() != 0 {
		volumes = append(volumes[:1], volumes[2:]...) // no tmpfs without root
	}
	for _, uid := range []types.UID{"uid-a", "uid-b"} {
		pod := podWith(volumes...)
		pod.UID = uid
		if _, err := setup(t, m, pod); err != nil {
			t.Fatal(err)
		}
	}
	// The kubelet's own file in the pod directory.
	if err := os.WriteFile(filepath.Join(m.Root, "uid-b", "etc-hosts"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	orphans, err := m.Orphans()
	if err != nil || !slices.Equal(orphans, []string{"uid-a", "uid-b"}) {
		t.Fatalf("Orphans = %v, %v", orphans, err)
	}

	for range 2 {
		if err := m.Teardown("uid-a"); err != nil {
			t.Fatalf("Teardown: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(m.Root, "uid-a")); !os.IsNotExist(err) {
		t.Fatalf("pod directory still there: %v", err)
	}
	if err := m.Teardown("uid-b"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(m.Root, "uid-b", "etc-hosts")); err != nil {
		t.Fatalf("Teardown removed a file it did not make: %v", err)
	}
	if _, err := os.Stat(filepath.Join(m.Root, "uid-b", "volumes")); !os.IsNotExist(err) {
		t.Fatalf("volumes of uid-b still there: %v", err)
	}
	if got := readFile(t, filepath.Join(hostDir, "keep")); got != "host data" {
		t.Fatalf("hostPath contents changed: %q", got)
	}
	if n := countMounts(t, m.Root); n != 0 {
		t.Fatalf("%d mounts left", n)
	}
	orphans, err = m.Orphans()
	if err != nil || len(orphans) != 0 {
		t.Fatalf("Orphans after Teardown = %v, %v", orphans, err)
	}

	if err := m.Teardown("never-seen"); err != nil {
		t.Fatalf("Teardown of an unknown pod: %v", err)
	}
	for _, bad := range []string{"", "..", "../etc", "a/b"} {
		if err := m.Teardown(bad); err == nil {
			t.Errorf("Teardown(%q) accepted", bad)
		}
	}
}

func TestOrphansWithoutRoot(t *testing.T) {
	m := &Manager{Root: filepath.Join(t.TempDir(), "absent")}
	if got, err := m.Orphans(); err != nil || len(got) != 0 {
		t.Fatalf("Orphans = %v, %v", got, err)
	}
}
