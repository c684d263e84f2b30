package install

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeBuild is a directory with an orca and an orca-pause, as make build
// leaves them.
func fakeBuild(t *testing.T, pause bool) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "orca"), []byte("orca binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	if pause {
		if err := os.WriteFile(filepath.Join(dir, "orca-pause"), []byte("pause binary"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "orca")
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInstallAndRemove(t *testing.T) {
	root := t.TempDir()
	exe := fakeBuild(t, true)
	opts := Options{Root: root, Role: "server", Flags: []string{"--data-dir", "/srv/orca"}, BinDir: "/usr/local/bin", SystemdDir: "/etc/systemd/system", Executable: exe}
	res, err := Install(opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(root, "usr/local/bin/orca")); got != "orca binary" {
		t.Errorf("orca: %q", got)
	}
	if st, err := os.Stat(filepath.Join(root, "usr/local/bin/orca")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("orca mode: %v %v", st.Mode(), err)
	}
	if got := readFile(t, filepath.Join(root, "usr/local/bin/orca-pause")); got != "pause binary" {
		t.Errorf("orca-pause: %q", got)
	}
	if target, err := os.Readlink(filepath.Join(root, "usr/local/bin/kubectl")); err != nil || target != "orca" {
		t.Errorf("kubectl link: %q %v", target, err)
	}
	unit := readFile(t, filepath.Join(root, "etc/systemd/system/orca.service"))
	if want := Unit("server", "/usr/local/bin/orca", opts.Flags); unit != want {
		t.Errorf("unit:\n%s\nwant\n%s", unit, want)
	}
	if !strings.Contains(unit, "ExecStart=/usr/local/bin/orca server \\\n    --data-dir \\\n    /srv/orca\n") {
		t.Errorf("unit's ExecStart names the flags after --:\n%s", unit)
	}
	if want := (InstalledUnit{Name: "orca.service", Path: "/etc/systemd/system/orca.service", DataDir: "/srv/orca"}); res.Unit != want {
		t.Errorf("unit %+v, want %+v", res.Unit, want)
	}

	// An agent unit next to it, and the server installed again: one
	// manifest with both units, nothing twice.
	opts.Role, opts.Flags = "agent", nil
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}
	opts.Role = "server"
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	want := Manifest{
		Units: []InstalledUnit{
			{Name: "orca-agent.service", Path: "/etc/systemd/system/orca-agent.service", DataDir: DefaultDataDir},
			{Name: "orca.service", Path: "/etc/systemd/system/orca.service", DataDir: DefaultDataDir},
		},
		Files: []string{"/usr/local/bin/orca", "/usr/local/bin/orca-pause"},
		Links: []string{"/usr/local/bin/kubectl"},
	}
	if !slices.Equal(m.Units, want.Units) || !slices.Equal(m.Files, want.Files) || !slices.Equal(m.Links, want.Links) {
		t.Errorf("manifest %+v\nwant %+v", m, want)
	}
	if got := m.DataDirs(); !slices.Equal(got, []string{DefaultDataDir}) {
		t.Errorf("DataDirs = %q", got)
	}

	// Something of the user's in the same directories stays.
	other := filepath.Join(root, "usr/local/bin/helm")
	if err := os.WriteFile(other, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	removed, err := RemoveFiles(root, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 6 {
		t.Errorf("removed %q", removed)
	}
	for _, p := range []string{"usr/local/bin/orca", "usr/local/bin/orca-pause", "usr/local/bin/kubectl", "etc/systemd/system/orca.service", "etc/systemd/system/orca-agent.service", "etc/orca"} {
		if _, err := os.Lstat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("%s still there (%v)", p, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another binary went: %v", err)
	}
	if m, err := ReadManifest(root); err != nil || !m.Empty() {
		t.Errorf("manifest after removal: %+v %v", m, err)
	}
}

func TestInstallLeavesARealKubectl(t *testing.T) {
	root := t.TempDir()
	kubectl := filepath.Join(root, "usr/bin/kubectl")
	if err := os.MkdirAll(filepath.Dir(kubectl), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubectl, []byte("the real kubectl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(Options{Root: root, Role: "agent", BinDir: "/usr/bin", SystemdDir: "/lib/systemd/system", Executable: fakeBuild(t, false)}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, kubectl); got != "the real kubectl" {
		t.Errorf("kubectl replaced: %q", got)
	}
	m, _ := ReadManifest(root)
	if len(m.Links) != 0 || !slices.Equal(m.Files, []string{"/usr/bin/orca"}) {
		t.Errorf("manifest %+v: no orca-pause was there, and kubectl is not ours", m)
	}
	if _, err := RemoveFiles(root, m); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, kubectl); got != "the real kubectl" {
		t.Errorf("kubectl removed or changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "lib/systemd/system/orca-agent.service")); !os.IsNotExist(err) {
		t.Errorf("unit left: %v", err)
	}
}

func TestInstallOntoItself(t *testing.T) {
	root := t.TempDir()
	exe := filepath.Join(root, "usr/local/bin/orca")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("orca binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := Install(Options{Root: root, Role: "server", BinDir: "/usr/local/bin", SystemdDir: "/etc/systemd/system", Executable: exe})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, exe); got != "orca binary" {
		t.Errorf("binary copied onto itself: %q", got)
	}
	if slices.Contains(res.Written, "/usr/local/bin/orca") {
		t.Errorf("recorded a binary it did not write: %q", res.Written)
	}
}

func TestInstallRefusesBadInput(t *testing.T) {
	root := t.TempDir()
	exe := fakeBuild(t, false)
	for _, o := range []Options{
		{Root: root, Role: "worker", BinDir: "/usr/local/bin", SystemdDir: "/etc/systemd/system", Executable: exe},
		{Root: root, Role: "server", BinDir: "bin", SystemdDir: "/etc/systemd/system", Executable: exe},
	} {
		if _, err := Install(o); err == nil {
			t.Errorf("Install(%+v) succeeded", o)
		}
	}
}
