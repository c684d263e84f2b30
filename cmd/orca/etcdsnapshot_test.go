package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runOrca runs the orca command line in-process and returns its output.
func runOrca(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestEtcdSnapshotCommands(t *testing.T) {
	dataDir := t.TempDir()
	dir := filepath.Join(dataDir, "snapshots")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		size int
	}{
		{"on-demand-n1-1767225600", 100},
		{"on-demand-n1-1767229200", 200},
		{"etcd-snapshot-n1-1767240000", 300},
		{"on-demand-n1-1767232800", 400},
		{"on-demand-n2-1767200000", 500},
		{"before-upgrade-n1-1767210000", 600},
	} {
		if err := os.WriteFile(filepath.Join(dir, f.name), bytes.Repeat([]byte{0}, f.size), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name+".sha256"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	flags := []string{"--data-dir", dataDir, "--node-name", "n1"}
	at := func(sec int64) string { return time.Unix(sec, 0).Format(time.RFC3339) }
	row := func(name string, size int, sec int64) string {
		return fmt.Sprintf("%s file://%s %d %s", name, filepath.Join(dir, name), size, at(sec))
	}
	ls := func() []string {
		t.Helper()
		out, err := runOrca(t, append([]string{"etcd-snapshot", "ls"}, flags...)...)
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			rows = append(rows, strings.Join(strings.Fields(l), " "))
		}
		return rows
	}
	want := []string{
		"Name Location Size Created",
		row("on-demand-n2-1767200000", 500, 1767200000),
		row("before-upgrade-n1-1767210000", 600, 1767210000),
		row("on-demand-n1-1767225600", 100, 1767225600),
		row("on-demand-n1-1767229200", 200, 1767229200),
		row("on-demand-n1-1767232800", 400, 1767232800),
		row("etcd-snapshot-n1-1767240000", 300, 1767240000),
	}
	if got := ls(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The columns line up, as tabwriter pads them.
	out, _ := runOrca(t, append([]string{"etcd-snapshot", "list"}, flags...)...)
	lines := strings.Split(out, "\n")
	if i := strings.Index(lines[0], "Location"); i < 0 || !strings.HasPrefix(lines[1][i:], "file://") {
		t.Errorf("columns not aligned:\n%s", out)
	}

	// Prune keeps the newest on-demand snapshot of this node only.
	out, err := runOrca(t, append([]string{"etcd-snapshot", "prune", "--retention", "1"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Pruned snapshot on-demand-n1-1767225600\nPruned snapshot on-demand-n1-1767229200\n"; out != want {
		t.Errorf("prune printed %q, want %q", out, want)
	}
	out, err = runOrca(t, append([]string{"etcd-snapshot", "prune", "--retention", "0", "--name", "etcd-snapshot"}, flags...)...)
	if err != nil || out != "" {
		t.Errorf("prune with retention 0: %q, %v", out, err)
	}

	out, err = runOrca(t, append([]string{"etcd-snapshot", "delete", "before-upgrade-n1-1767210000", "nothing-here", "on-demand-n2-1767200000"}, flags...)...)
	if err == nil || !strings.Contains(err.Error(), "snapshot nothing-here not found") {
		t.Errorf("delete of a missing snapshot: %v", err)
	}
	if want := "Deleted snapshot before-upgrade-n1-1767210000\nDeleted snapshot on-demand-n2-1767200000\n"; out != want {
		t.Errorf("delete printed %q, want %q", out, want)
	}
	want = []string{
		"Name Location Size Created",
		row("on-demand-n1-1767232800", 400, 1767232800),
		row("etcd-snapshot-n1-1767240000", 300, 1767240000),
	}
	if got := ls(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after prune and delete:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Sidecars went with their snapshots.
	if m, _ := filepath.Glob(filepath.Join(dir, "*.sha256")); len(m) != 2 {
		t.Errorf("checksum files left: %v", m)
	}

	// --etcd-snapshot-dir elsewhere, and empty.
	out, err = runOrca(t, append([]string{"etcd-snapshot", "ls", "--etcd-snapshot-dir", filepath.Join(dataDir, "none")}, flags...)...)
	if err != nil || out != "Name Location Size Created\n" {
		t.Errorf("ls of an empty dir: %q, %v", out, err)
	}

	// save needs the running server.
	_, err = runOrca(t, append([]string{"etcd-snapshot", "save"}, flags...)...)
	if err == nil || !strings.Contains(err.Error(), "must be running") {
		t.Errorf("save without a server: %v", err)
	}
}

func TestServerClusterResetFlags(t *testing.T) {
	dataDir := t.TempDir()
	_, err := runOrca(t, "server", "--data-dir", dataDir, "--cluster-reset-restore-path", "/x")
	if err == nil || !strings.Contains(err.Error(), "requires --cluster-reset") {
		t.Errorf("restore path without --cluster-reset: %v", err)
	}
	_, err = runOrca(t, "server", "--data-dir", dataDir, "--cluster-reset", "--etcd-endpoints", "http://127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "--etcd-endpoints") {
		t.Errorf("--cluster-reset with an external etcd: %v", err)
	}
	// Nothing was created: the checks come before any start-up.
	if entries, _ := os.ReadDir(dataDir); len(entries) != 0 {
		t.Errorf("data dir holds %d entries", len(entries))
	}
}
