package volume

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	v1 "k8s.io/api/core/v1"
)

// Upstream's masks for a volume given to an fsGroup.
const (
	groupRW   fs.FileMode = 0o660
	groupRO   fs.FileMode = 0o440
	groupExec fs.FileMode = 0o110
)

// applyFSGroup is upstream's SetVolumeOwnership: every file of the
// volume gets the pod's fsGroup as its group and group read (and write,
// unless read-only) permission, directories the setgid bit and group
// search, so that files the pod creates later belong to the group too.
// With fsGroupChangePolicy OnRootMismatch nothing is walked when the
// volume's root already looks done. Symbolic links are neither followed
// nor changed in mode.
func applyFSGroup(dir string, pod *v1.Pod, readOnly bool) error {
	gid := fsGroup(pod)
	if gid == nil {
		return nil
	}
	mask := groupRW
	if readOnly {
		mask = groupRO
	}
	if sc := pod.Spec.SecurityContext; sc.FSGroupChangePolicy != nil && *sc.FSGroupChangePolicy == v1.FSGroupChangeOnRootMismatch {
		if info, err := os.Stat(dir); err == nil && ownedBy(info, *gid, mask) {
			return nil
		}
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(path, -1, int(*gid)); err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		m := mask
		if d.IsDir() {
			m |= fs.ModeSetgid | groupExec
		}
		return os.Chmod(path, info.Mode()&(fs.ModePerm|fs.ModeSetgid|fs.ModeSticky)|m)
	})
	if err != nil {
		return fmt.Errorf("set fsGroup %d on the volume: %w", *gid, err)
	}
	return nil
}

func ownedBy(info fs.FileInfo, gid int64, mask fs.FileMode) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int64(st.Gid) != gid {
		return false
	}
	return info.Mode()&fs.ModeSetgid != 0 && info.Mode()&mask == mask
}
