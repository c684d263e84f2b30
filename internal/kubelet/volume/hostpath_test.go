package volume

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestHostPathTypeChecks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	missing := filepath.Join(dir, "missing")

	tests := []struct {
		name    string
		path    string
		typ     v1.HostPathType
		wantErr string
		created os.FileMode // the type of what OrCreate made
	}{
		{name: "unset type, missing path", path: missing, typ: v1.HostPathUnset},
		{name: "directory", path: dir, typ: v1.HostPathDirectory},
		{name: "directory is a file", path: file, typ: v1.HostPathDirectory, wantErr: "hostPath type check failed: " + file + " is not a directory"},
		{name: "directory missing", path: missing, typ: v1.HostPathDirectory, wantErr: "hostPath type check failed: " + missing + " is not a directory"},
		{name: "DirectoryOrCreate creates", path: filepath.Join(dir, "new/dir"), typ: v1.HostPathDirectoryOrCreate, created: os.ModeDir},
		{name: "DirectoryOrCreate on a file", path: file, typ: v1.HostPathDirectoryOrCreate, wantErr: "hostPath type check failed: " + file + " is not a directory"},
		{name: "file", path: file, typ: v1.HostPathFile},
		{name: "file is a directory", path: dir, typ: v1.HostPathFile, wantErr: "hostPath type check failed: " + dir + " is not a file"},
		{name: "FileOrCreate creates", path: filepath.Join(dir, "new-file"), typ: v1.HostPathFileOrCreate, created: 0},
		{name: "FileOrCreate needs the parent", path: filepath.Join(dir, "nodir/file"), typ: v1.HostPathFileOrCreate, wantErr: "no such file or directory"},
		{name: "socket", path: sock, typ: v1.HostPathSocket},
		{name: "socket is a file", path: file, typ: v1.HostPathSocket, wantErr: "hostPath type check failed: " + file + " is not a socket file"},
		{name: "char device", path: "/dev/null", typ: v1.HostPathCharDev},
		{name: "char device is a file", path: file, typ: v1.HostPathCharDev, wantErr: "hostPath type check failed: " + file + " is not a character device"},
		{name: "block device is a char device", path: "/dev/null", typ: v1.HostPathBlockDev, wantErr: "hostPath type check failed: /dev/null is not a block device"},
		{name: "unknown type", path: dir, typ: "Fifo", wantErr: "Fifo is an invalid volume type"},
		{name: "'..' is cleaned before the check", path: filepath.Join(dir, "no-such-dir") + "/../file", typ: v1.HostPathFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, newFakeSources())
			pod := podWith(v1.Volume{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: tt.path, Type: ptr(tt.typ)}}})
			vols, err := setup(t, m, pod)
			if tt.wantErr != "" {
				if err == nil || !contains(err.Error(), `MountVolume.SetUp failed for volume "host" : `) || !contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := vols["host"]; got.HostPath != filepath.Clean(tt.path) || got.ReadOnly {
				t.Fatalf("volume %+v, want %s", got, filepath.Clean(tt.path))
			}
			if tt.typ == v1.HostPathDirectoryOrCreate || tt.typ == v1.HostPathFileOrCreate {
				info, err := os.Stat(tt.path)
				if err != nil || info.Mode().Type() != tt.created {
					t.Fatalf("created %v, %v", info, err)
				}
				wantPerm := os.FileMode(0o644)
				if tt.created == os.ModeDir {
					wantPerm = 0o755
				}
				if info.Mode().Perm() != wantPerm&^umask() {
					t.Errorf("created with mode %v", info.Mode().Perm())
				}
			}
		})
	}
}

func TestHostPathDotDotStaysClean(t *testing.T) {
	m := newManager(t, newFakeSources())
	pod := podWith(v1.Volume{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/../../../etc/./"}}})
	vols, err := setup(t, m, pod)
	if err != nil {
		t.Fatal(err)
	}
	if got := vols["host"].HostPath; got != "/etc" {
		t.Fatalf("host path %q, want /etc", got)
	}
}
