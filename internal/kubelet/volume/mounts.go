package volume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Mounts turns one container's volumeMounts (incl. subPath, subPathExpr
// with env expansion, readOnly, mountPropagation) into CRI mounts. env is
// the container's resolved environment, which subPathExpr expands from.
// A missing subPath is created in the volume, as upstream does.
func Mounts(pod *v1.Pod, c *v1.Container, vols map[string]Volume, env map[string]string) ([]*runtimeapi.Mount, error) {
	mounts := make([]*runtimeapi.Mount, 0, len(c.VolumeMounts))
	for _, vm := range c.VolumeMounts {
		vol, ok := vols[vm.Name]
		if !ok {
			return nil, fmt.Errorf("cannot find volume %q to mount into container %q", vm.Name, c.Name)
		}
		hostPath := vol.HostPath
		subPath := vm.SubPath
		if vm.SubPathExpr != "" {
			var err error
			if subPath, err = expandSubPath(vm.SubPathExpr, env); err != nil {
				return nil, err
			}
		}
		if subPath != "" {
			if err := checkSubPath(subPath); err != nil {
				return nil, err
			}
			var err error
			if hostPath, err = resolveSubPath(vol.HostPath, subPath); err != nil {
				return nil, fmt.Errorf("volumeMount %q of container %q: %w", vm.Name, c.Name, err)
			}
		}
		propagation, err := propagation(vm.MountPropagation)
		if err != nil {
			return nil, err
		}
		readOnly := vm.ReadOnly || vol.ReadOnly
		mounts = append(mounts, &runtimeapi.Mount{
			ContainerPath:     vm.MountPath,
			HostPath:          hostPath,
			Readonly:          readOnly,
			RecursiveReadOnly: readOnly && vm.RecursiveReadOnly != nil && *vm.RecursiveReadOnly == v1.RecursiveReadOnlyEnabled,
			Propagation:       propagation,
		})
	}
	return mounts, nil
}

// checkSubPath is upstream's check: relative, and no '..' element.
func checkSubPath(subPath string) error {
	if filepath.IsAbs(subPath) {
		return fmt.Errorf("error SubPath `%s` must not be an absolute path", subPath)
	}
	for _, item := range strings.Split(subPath, "/") {
		if item == ".." {
			return fmt.Errorf("unable to provision SubPath `%s`: must not contain '..'", subPath)
		}
	}
	return nil
}

// resolveSubPath returns the host path of subPath inside the volume,
// creating missing directories with the volume's mode. A symlink inside the
// volume may not lead out of it.
func resolveSubPath(volumePath, subPath string) (string, error) {
	base, err := filepath.EvalSymlinks(volumePath)
	if err != nil {
		return "", fmt.Errorf("resolve volume path: %w", err)
	}
	full := filepath.Join(volumePath, subPath)
	if _, err := os.Lstat(full); errors.Is(err, os.ErrNotExist) {
		info, err := os.Stat(base)
		if err != nil {
			return "", err
		}
		if err := safeMkdirAll(base, subPath, info.Mode().Perm()); err != nil {
			return "", err
		}
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", fmt.Errorf("resolve subPath: %w", err)
	}
	if !within(real, base) {
		return "", fmt.Errorf("subpath %q not within volume path %q", real, base)
	}
	return real, nil
}

// safeMkdirAll creates base/rel one element at a time, refusing to follow
// a symlink out of base.
func safeMkdirAll(base, rel string, perm os.FileMode) error {
	cur := base
	for _, item := range strings.Split(filepath.Clean(rel), "/") {
		next := filepath.Join(cur, item)
		if _, err := os.Lstat(next); errors.Is(err, os.ErrNotExist) {
			if err := os.Mkdir(next, perm); err != nil && !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("create subPath directory: %w", err)
			}
			// Mkdir honours the umask; the volume's mode is what matters.
			if err := os.Chmod(next, perm); err != nil {
				return err
			}
		}
		real, err := filepath.EvalSymlinks(next)
		if err != nil {
			return err
		}
		if !within(real, base) {
			return fmt.Errorf("subpath %q not within volume path %q", real, base)
		}
		cur = real
	}
	return nil
}

func within(p, base string) bool {
	return p == base || strings.HasPrefix(p, base+"/")
}

func propagation(mode *v1.MountPropagationMode) (runtimeapi.MountPropagation, error) {
	switch {
	case mode == nil, *mode == v1.MountPropagationNone:
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE, nil
	case *mode == v1.MountPropagationHostToContainer:
		return runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER, nil
	case *mode == v1.MountPropagationBidirectional:
		return runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL, nil
	}
	return 0, fmt.Errorf("invalid MountPropagation mode: %q", *mode)
}

// expandSubPath expands $(VAR) references in a subPathExpr; every
// reference must name a non-empty variable, as upstream requires.
func expandSubPath(expr string, env map[string]string) (string, error) {
	missing := map[string]bool{}
	out := expand(expr, func(name string) string {
		v := env[name]
		if v == "" {
			missing[name] = true
		}
		return v
	})
	if len(missing) > 0 {
		names := make([]string, 0, len(missing))
		for n := range missing {
			names = append(names, n)
		}
		sort.Strings(names)
		return "", fmt.Errorf("missing value for %s", strings.Join(names, ", "))
	}
	return out, nil
}

// expand replaces $(NAME) with mapping(NAME), following Kubernetes'
// expansion syntax: "$$" is a literal "$", and "$" not followed by a
// complete "(NAME)" is kept as written.
func expand(input string, mapping func(string) string) string {
	var b strings.Builder
	for i := 0; i < len(input); i++ {
		if input[i] != '$' || i+1 == len(input) {
			b.WriteByte(input[i])
			continue
		}
		switch next := input[i+1]; {
		case next == '$':
			b.WriteByte('$')
			i++
		case next == '(':
			end := strings.IndexByte(input[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			b.WriteString(mapping(input[i+2 : i+2+end]))
			i += 2 + end
		default:
			b.WriteByte('$')
			b.WriteByte(next)
			i++
		}
	}
	return b.String()
}
