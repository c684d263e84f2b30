package localpath

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"/data/storage/pvc-1_ns_claim", true},
		{"/data/storage", false},
		{"/data/storage/", false},
		{"/data/storage/a/b", false},
		{"/data/storage/../etc", false},
		{"/data/storage/..", false},
		{"/data/other/pvc-1", false},
		{"/etc", false},
		{"relative/pvc-1", false},
		{"/data/storage/./pvc-1", false},
	} {
		_, err := Within("/data/storage", tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("Within(%q) = %v, want ok %v", tc.path, err, tc.ok)
		}
	}
}

func TestDirName(t *testing.T) {
	if got, err := DirName("pvc-1", "ns", "data"); err != nil || got != "pvc-1_ns_data" {
		t.Errorf("DirName = %q %v", got, err)
	}
	for _, bad := range [][3]string{{"pvc-1", "ns", "a/../../etc"}, {"pvc", "ns\x00", "c"}, {"pvc", "ns/x", "c"}} {
		if _, err := DirName(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("DirName%q accepted", bad)
		}
	}
}

func TestEnsureAndRemoveDir(t *testing.T) {
	root := filepath.Join(t.TempDir(), "storage")
	dir := filepath.Join(root, "pvc-1_ns_data")
	if err := EnsureDir(root, dir); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dir)
	if err != nil || info.Mode().Perm() != DirMode {
		t.Fatalf("made %v %v, want mode %v", info.Mode(), err, os.FileMode(DirMode))
	}
	if err := EnsureDir(root, dir); err != nil {
		t.Errorf("second EnsureDir: %v", err)
	}
	// A link a pod left inside points outside; removal must not follow it.
	outside := t.TempDir()
	keep := filepath.Join(outside, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := RemoveDir(root, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("directory still there: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("file behind the link was removed: %v", err)
	}
	if err := RemoveDir(root, filepath.Join(root, "..", "x")); err == nil {
		t.Error("RemoveDir outside the root accepted")
	}
	if err := EnsureDir(root, "/etc/orca-test"); err == nil {
		t.Error("EnsureDir outside the root accepted")
	}
	// A file where the directory should be is an error, not overwritten.
	file := filepath.Join(root, "pvc-2_ns_data")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDir(root, file); err == nil {
		t.Error("EnsureDir over a file accepted")
	}
}
