package volume

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	v1 "k8s.io/api/core/v1"
)

// pluginImage holds image volumes, each the mount point of an image.
const pluginImage = "kubernetes.io~image"

// Images pulls and mounts the images of image volumes (the kubelet
// implements it with the runtime).
type Images interface {
	// MountImage makes the image present as the pull policy says and
	// mounts it read-only at target.
	MountImage(ctx context.Context, pod *v1.Pod, src *v1.ImageVolumeSource, target string) error
	// UnmountImage undoes MountImage; target need not be mounted.
	UnmountImage(ctx context.Context, target string) error
}

// setupImage mounts an image volume once; later resyncs find it mounted.
func (m *Manager) setupImage(ctx context.Context, pod *v1.Pod, spec *v1.Volume) (Volume, error) {
	if m.Images == nil {
		return Volume{}, fmt.Errorf("image volumes are not supported on this node")
	}
	if spec.Image.Reference == "" {
		return Volume{}, fmt.Errorf("image volume has no reference")
	}
	dir := m.volumeDir(pod.UID, pluginImage, spec.Name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return Volume{}, fmt.Errorf("image volume directory: %w", err)
	}
	points, err := mountPointsUnder(dir)
	if err != nil {
		return Volume{}, fmt.Errorf("image volume directory: %w", err)
	}
	if !slices.Contains(points, realPath(dir)) {
		if err := m.Images.MountImage(ctx, pod, spec.Image, dir); err != nil {
			return Volume{}, err
		}
	}
	return Volume{HostPath: dir, ReadOnly: true}, nil
}

// teardownImages releases the image volumes of a pod directory before
// the generic unmount, so the runtime lets go of their layers too.
func (m *Manager) teardownImages(ctx context.Context, volumesDir string) error {
	entries, err := os.ReadDir(filepath.Join(volumesDir, pluginImage))
	if errors.Is(err, fs.ErrNotExist) || m.Images == nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("image volumes: %w", err)
	}
	for _, e := range entries {
		if err := m.Images.UnmountImage(ctx, filepath.Join(volumesDir, pluginImage, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func realPath(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return dir
}
