package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orca-project/orca/internal/install"
)

func TestInstallArgs(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		dash  int
		role  string
		flags []string
		err   bool
	}{
		{args: nil, dash: -1, role: "server"},
		{args: []string{"agent"}, dash: -1, role: "agent"},
		{args: []string{"agent", "--server", "https://x:6443"}, dash: 1, role: "agent", flags: []string{"--server", "https://x:6443"}},
		{args: []string{"--node-ip", "10.0.0.1"}, dash: 0, role: "server", flags: []string{"--node-ip", "10.0.0.1"}},
		{args: []string{"worker"}, dash: -1, err: true},
		{args: []string{"server", "agent"}, dash: -1, err: true},
	} {
		role, flags, err := installArgs(tc.args, tc.dash)
		if (err != nil) != tc.err || role != tc.role || !slices.Equal(flags, tc.flags) {
			t.Errorf("installArgs(%q, %d) = %q %q %v; want %q %q (error %v)", tc.args, tc.dash, role, flags, err, tc.role, tc.flags, tc.err)
		}
	}
}

func TestCheckServiceFlags(t *testing.T) {
	for _, tc := range []struct {
		role  string
		flags []string
		ok    bool
	}{
		{"server", []string{"--node-ip", "10.0.0.1", "--eviction-hard", "nodefs.available<1Gi"}, true},
		{"server", []string{"--disable-agent", "--data-dir=/srv/orca"}, true},
		{"agent", []string{"--server", "https://10.0.0.1:6443", "--token-file", "/etc/orca/token"}, true},
		{"server", []string{"--no-such-flag"}, false},
		{"agent", []string{"--disable-agent"}, false}, // a server flag
		{"server", []string{"stray"}, false},
		{"server", []string{"--data-dir", "relative/dir"}, false},
	} {
		if err := checkServiceFlags(tc.role, tc.flags); (err == nil) != tc.ok {
			t.Errorf("checkServiceFlags(%s, %q) = %v, want ok %v", tc.role, tc.flags, err, tc.ok)
		}
	}
}

// TestInstallCommand installs into a temporary root, where systemd does not
// run: the files are written and the way to start them printed.
func TestInstallCommand(t *testing.T) {
	root := t.TempDir()
	out, err := runOrca(t, "install", "--root", root, "agent", "--", "--server", "https://10.0.0.1:6443", "--token-file", "/etc/orca/token")
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	unit, err := os.ReadFile(filepath.Join(root, "etc/systemd/system/orca-agent.service"))
	if err != nil {
		t.Fatal(err)
	}
	want := install.Unit("agent", "/usr/local/bin/orca", []string{"--server", "https://10.0.0.1:6443", "--token-file", "/etc/orca/token"})
	if string(unit) != want {
		t.Errorf("unit:\n%s\nwant\n%s", unit, want)
	}
	for _, l := range []string{"KillMode=process", "Delegate=yes", "Restart=always", "ExecStart=/usr/local/bin/orca agent \\"} {
		if !strings.Contains(string(unit), l+"\n") {
			t.Errorf("unit lacks %q", l)
		}
	}
	if st, err := os.Stat(filepath.Join(root, "usr/local/bin/orca")); err != nil || !st.Mode().IsRegular() {
		t.Errorf("binary not installed: %v", err)
	}
	if target, err := os.Readlink(filepath.Join(root, "usr/local/bin/kubectl")); err != nil || target != "orca" {
		t.Errorf("kubectl: %q %v", target, err)
	}
	if !strings.Contains(out, "systemd is not running here") || !strings.Contains(out, "systemctl daemon-reload && systemctl enable --now orca-agent.service") {
		t.Errorf("output does not say how to start it:\n%s", out)
	}

	if _, err := runOrca(t, "install", "--root", root, "server", "--", "--no-such-flag"); err == nil || !strings.Contains(err.Error(), "no-such-flag") {
		t.Errorf("a bad flag was installed: %v", err)
	}
	if _, err := runOrca(t, "install", "--root", root, "server", "--node-ip", "x"); err == nil {
		t.Error("flags before -- accepted")
	}
}

func TestUninstall(t *testing.T) {
	root := t.TempDir()
	if out, err := runOrca(t, "install", "--root", root, "server", "--", "--data-dir", "/srv/orca"); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	data := filepath.Join(root, "srv/orca")
	if err := os.MkdirAll(filepath.Join(data, "agent/containerd"), 0o700); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(root, "usr/local/bin/helm")
	if err := os.WriteFile(keep, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	var calls []string
	u := uninstaller{
		root: root,
		killall: func(_ context.Context, _ io.Writer, dir string) error {
			calls = append(calls, "killall "+strings.TrimPrefix(dir, root))
			return nil
		},
		systemctl: func(_ context.Context, _ io.Writer, args ...string) error {
			calls = append(calls, "systemctl "+strings.Join(args, " "))
			return nil
		},
		systemd: func(string) bool { return true },
	}
	var out bytes.Buffer
	if err := u.run(context.Background(), &out); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out.String())
	}
	// Units stopped before killall, so that systemd does not start the
	// server again; systemd told once the files are gone.
	want := []string{
		"systemctl stop orca.service", "systemctl disable orca.service",
		"killall /srv/orca",
		"systemctl reset-failed orca.service", "systemctl daemon-reload",
	}
	if !slices.Equal(calls, want) {
		t.Errorf("calls\n%q\nwant\n%q", calls, want)
	}
	for _, p := range []string{"srv/orca", "usr/local/bin/orca", "usr/local/bin/kubectl", "etc/systemd/system/orca.service", install.ManifestPath} {
		if _, err := os.Lstat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("%s not removed (%v)", p, err)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a file install did not write went: %v", err)
	}

	// Nothing installed, a data directory given: only that goes, and no
	// systemctl is run.
	calls = nil
	other := filepath.Join(root, "var/lib/other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	u.dataDir = "/var/lib/other"
	out.Reset()
	if err := u.run(context.Background(), &out); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out.String())
	}
	if !slices.Equal(calls, []string{"killall /var/lib/other"}) {
		t.Errorf("calls %q", calls)
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("data directory kept: %v", err)
	}
}

func TestUnitsOf(t *testing.T) {
	m := install.Manifest{Units: []install.InstalledUnit{
		{Name: "orca.service", DataDir: "/var/lib/orca"},
		{Name: "orca-agent.service", DataDir: "/srv/agent/"},
	}}
	if got := unitsOf(m, "/srv/agent"); len(got) != 1 || got[0].Name != "orca-agent.service" {
		t.Errorf("unitsOf = %+v", got)
	}
	if got := unitsOf(m, "/var/lib/orca2"); len(got) != 0 {
		t.Errorf("unitsOf = %+v", got)
	}
}

func TestKillallNeedsRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("runs as root")
	}
	if _, err := runOrca(t, "killall", "--data-dir", t.TempDir()); err == nil || !strings.Contains(err.Error(), "root") {
		t.Errorf("killall as a user: %v", err)
	}
}

func TestShellCommand(t *testing.T) {
	got := shellCommand([]string{"/usr/local/bin/orca", "server", "--eviction-hard", "nodefs.available<1Gi", "--node-label", "a=b c", "it's", ""})
	want := `/usr/local/bin/orca server --eviction-hard 'nodefs.available<1Gi' --node-label 'a=b c' 'it'\''s' ''`
	if got != want {
		t.Errorf("shellCommand =\n%s\nwant\n%s", got, want)
	}
}
