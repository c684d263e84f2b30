package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
)

// setupHostPath checks a hostPath (or a hostPath persistent volume) as
// upstream does and returns it. The path is cleaned first, so '..' cannot
// lead a check and the mount to different places.
func setupHostPath(path string, typ *v1.HostPathType, readOnly bool) (Volume, error) {
	path = filepath.Clean(path)
	if !filepath.IsAbs(path) {
		return Volume{}, fmt.Errorf("invalid HostPath `%s`: must be an absolute path", path)
	}
	t := v1.HostPathUnset
	if typ != nil {
		t = *typ
	}
	if err := checkHostPathType(path, t); err != nil {
		return Volume{}, err
	}
	return Volume{HostPath: path, ReadOnly: readOnly}, nil
}

// checkHostPathType is upstream's hostPath type check, with its messages.
func checkHostPathType(path string, t v1.HostPathType) error {
	info, statErr := os.Stat(path)
	exists := statErr == nil
	is := func(want fs.FileMode) bool { return exists && info.Mode().Type() == want }
	switch t {
	case v1.HostPathUnset:
		return nil
	case v1.HostPathDirectoryOrCreate:
		if errors.Is(statErr, fs.ErrNotExist) {
			return makeHostDir(path)
		}
		fallthrough
	case v1.HostPathDirectory:
		if !exists || !info.IsDir() {
			return fmt.Errorf("hostPath type check failed: %s is not a directory", path)
		}
	case v1.HostPathFileOrCreate:
		if errors.Is(statErr, fs.ErrNotExist) {
			return makeHostFile(path)
		}
		fallthrough
	case v1.HostPathFile:
		if !exists || !info.Mode().IsRegular() {
			return fmt.Errorf("hostPath type check failed: %s is not a file", path)
		}
	case v1.HostPathSocket:
		if !is(fs.ModeSocket) {
			return fmt.Errorf("hostPath type check failed: %s is not a socket file", path)
		}
	case v1.HostPathCharDev:
		if !is(fs.ModeDevice | fs.ModeCharDevice) {
			return fmt.Errorf("hostPath type check failed: %s is not a character device", path)
		}
	case v1.HostPathBlockDev:
		if !is(fs.ModeDevice) {
			return fmt.Errorf("hostPath type check failed: %s is not a block device", path)
		}
	default:
		return fmt.Errorf("%s is an invalid volume type", t)
	}
	return nil
}

// makeHostDir creates a DirectoryOrCreate path with upstream's 0755.
func makeHostDir(path string) error {
	return os.MkdirAll(path, 0o755)
}

// makeHostFile creates a FileOrCreate path (0644). As upstream, its
// parent directory must already exist.
func makeHostFile(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}
