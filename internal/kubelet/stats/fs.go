package stats

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// statfs is the file system holding dir: capacity, free and used space
// and inodes.
func statfs(dir string, now time.Time) *statsapi.FsStats {
	var st unix.Statfs_t
	if dir == "" || unix.Statfs(dir, &st) != nil {
		return nil
	}
	bs := uint64(st.Bsize)
	return &statsapi.FsStats{
		Time:           metav1.NewTime(now),
		CapacityBytes:  ptr(st.Blocks * bs),
		AvailableBytes: ptr(st.Bavail * bs),
		UsedBytes:      ptr((st.Blocks - st.Bfree) * bs),
		Inodes:         ptr(st.Files),
		InodesFree:     ptr(st.Ffree),
		InodesUsed:     ptr(st.Files - st.Ffree),
	}
}

// du is the disk space (allocated blocks, as du counts) and inodes under
// dir, without crossing into other file systems' mounts.
func du(dir string) (bytes, inodes uint64, err error) {
	root, err := os.Lstat(dir)
	if err != nil {
		return 0, 0, err
	}
	dev := root.Sys().(*syscall.Stat_t).Dev
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone while walking
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		st := info.Sys().(*syscall.Stat_t)
		if st.Dev != dev {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		bytes += uint64(st.Blocks) * 512
		inodes++
		return nil
	})
	return bytes, inodes, err
}

// measuredVolumes are the volume plugins whose contents the kubelet keeps
// in the pod's directory (others are mounts of storage elsewhere).
var measuredVolumes = []string{
	"kubernetes.io~empty-dir", "kubernetes.io~configmap", "kubernetes.io~secret",
	"kubernetes.io~downward-api", "kubernetes.io~projected",
}

// volumes measures the pod's volumes under dir (DIR/PLUGIN/NAME).
func volumes(dir string, now time.Time) []statsapi.VolumeStats {
	if dir == "" {
		return nil
	}
	var out []statsapi.VolumeStats
	for _, plugin := range measuredVolumes {
		entries, err := os.ReadDir(filepath.Join(dir, plugin))
		if err != nil {
			continue
		}
		for _, e := range entries {
			path := filepath.Join(dir, plugin, e.Name())
			used, inodes, err := du(path)
			if err != nil {
				continue
			}
			v := statsapi.VolumeStats{Name: e.Name()}
			if fs := statfs(path, now); fs != nil {
				v.FsStats = *fs
			}
			v.Time = metav1.NewTime(now)
			v.UsedBytes, v.InodesUsed = ptr(used), ptr(inodes)
			out = append(out, v)
		}
	}
	return out
}
