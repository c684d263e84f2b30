package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

func (m *Manager) setupEmptyDir(pod *v1.Pod, spec *v1.Volume) (Volume, error) {
	dir := m.volumeDir(pod.UID, pluginEmptyDir, spec.Name)
	ed := spec.EmptyDir
	if ed.Medium != v1.StorageMediumDefault && ed.Medium != v1.StorageMediumMemory {
		return Volume{}, fmt.Errorf("emptyDir medium %q is not supported on this node", ed.Medium)
	}
	if err := m.makeVolumeDir(dir, pod, ed); err != nil {
		return Volume{}, err
	}
	return Volume{HostPath: dir}, nil
}

// makeVolumeDir creates a writable volume directory (0777, as upstream, so
// any container user can write; with an fsGroup, owned by that group and
// set-gid). Ownership is set once, at creation: a resync must not undo
// what containers did since.
func (m *Manager) makeVolumeDir(dir string, pod *v1.Pod, ed *v1.EmptyDirVolumeSource) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o750); err != nil {
		return fmt.Errorf("create volume directory: %w", err)
	}
	err := os.Mkdir(dir, 0o750)
	fresh := err == nil
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create volume directory: %w", err)
	}
	if ed.Medium == v1.StorageMediumMemory {
		mounted, err := isMountPoint(dir)
		if err != nil {
			return err
		}
		// A memory volume is fresh whenever its tmpfs is not there yet
		// (first start, or after a node reboot).
		fresh = !mounted
		if fresh {
			if err := mountTmpfs(dir, m.memorySize(pod, ed.SizeLimit)); err != nil {
				return err
			}
		}
	}
	if !fresh {
		return nil
	}
	return setOwnership(dir, 0o777, fsGroup(pod))
}

// makeProjectionDir prepares the directory a configMap, secret,
// downwardAPI or projected volume is written into. Secrets and tokens go on
// tmpfs, as upstream, so they never reach the node's disk.
func (m *Manager) makeProjectionDir(dir string, pod *v1.Pod, memory bool) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("create volume directory: %w", err)
	}
	if memory {
		err := mountTmpfs(dir, m.memorySize(pod, nil))
		if errors.Is(err, unix.EPERM) {
			m.log().Warn("cannot mount tmpfs for a secret volume, writing it to disk", "dir", dir, "err", err)
		} else if err != nil {
			return err
		}
	}
	return setOwnership(dir, 0o755, fsGroup(pod))
}

func setOwnership(dir string, mode fs.FileMode, group *int64) error {
	if group != nil {
		if err := os.Chown(dir, -1, int(*group)); err != nil {
			return fmt.Errorf("set group of volume directory: %w", err)
		}
		mode |= fs.ModeSetgid
	}
	if err := os.Chmod(dir, mode); err != nil {
		return fmt.Errorf("set mode of volume directory: %w", err)
	}
	return nil
}

func fsGroup(pod *v1.Pod) *int64 {
	if sc := pod.Spec.SecurityContext; sc != nil {
		return sc.FSGroup
	}
	return nil
}

// memorySize is upstream's size of a memory-backed volume: node
// allocatable memory, lowered to the pod's memory limit when every
// container declares one, lowered to the volume's sizeLimit. Zero means no
// size option (the kernel's default).
func (m *Manager) memorySize(pod *v1.Pod, sizeLimit *resource.Quantity) int64 {
	size := memorySize(m.NodeAllocatable[v1.ResourceMemory], podMemoryLimit(pod), sizeLimit)
	return size.Value()
}

func memorySize(node resource.Quantity, podLimit, sizeLimit *resource.Quantity) resource.Quantity {
	size := node.DeepCopy()
	lower := func(q *resource.Quantity) {
		if q != nil && q.Sign() > 0 && (size.IsZero() || q.Cmp(size) <= 0) {
			size = q.DeepCopy()
		}
	}
	lower(podLimit)
	lower(sizeLimit)
	return size
}

// podMemoryLimit is the pod's memory limit, or nil when some container
// has none (the pod is then only bounded by the node).
func podMemoryLimit(pod *v1.Pod) *resource.Quantity {
	all := append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	if len(all) == 0 {
		return nil
	}
	for _, c := range all {
		if q, ok := c.Resources.Limits[v1.ResourceMemory]; !ok || q.IsZero() {
			return nil
		}
	}
	q := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})[v1.ResourceMemory]
	return &q
}
