package volume

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/orca-project/orca/internal/mountinfo"
)

// isMountPoint reports whether dir is the root of a mount other than its
// parent's; enough for the tmpfs mounts this package makes.
func isMountPoint(dir string) (bool, error) {
	var st, parent unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return false, err
	}
	if err := unix.Lstat(filepath.Dir(dir), &parent); err != nil {
		return false, err
	}
	return st.Dev != parent.Dev || st.Ino == parent.Ino, nil
}

// mountTmpfs mounts a tmpfs of sizeBytes (0: the kernel default) on dir
// unless one is already there.
func mountTmpfs(dir string, sizeBytes int64) error {
	mounted, err := isMountPoint(dir)
	if err != nil {
		return err
	}
	if mounted {
		return nil
	}
	opts := ""
	if sizeBytes > 0 {
		opts = "size=" + strconv.FormatInt(sizeBytes, 10)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		return fmt.Errorf("mount tmpfs on %s: %w", dir, err)
	}
	return nil
}

// unmountAllUnder unmounts every mount at or below dir, deepest first.
func unmountAllUnder(dir string) error {
	points, err := mountPointsUnder(dir)
	if err != nil {
		return err
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	for _, p := range points {
		err := unix.Unmount(p, 0)
		if errors.Is(err, unix.EBUSY) {
			// A process still holds it; detach so the directory can go and
			// the kernel frees the mount once the last user is gone.
			err = unix.Unmount(p, unix.MNT_DETACH)
		}
		if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("unmount %s: %w", p, err)
		}
	}
	return nil
}

func mountPointsUnder(dir string) ([]string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	points, err := mountinfo.Self()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range points {
		if p == real || strings.HasPrefix(p, real+"/") {
			out = append(out, p)
		}
	}
	return out, nil
}

func isNotEmpty(err error) bool {
	return errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST)
}
