package cgroups

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// v1Controllers are the hierarchies the kubelet makes pod cgroups in on
// cgroup v1; runc makes the others (cpuset, devices...) under them for
// each container.
var v1Controllers = []string{"cpu", "cpuacct", "memory", "pids"}

// Manager writes the QoS cgroup tree under a cgroup mount point.
type Manager struct {
	// Mount is where cgroups are mounted, /sys/fs/cgroup.
	Mount string

	mu   sync.Mutex
	once sync.Once
	v2   bool
}

// IsV2 reports whether the mount is the unified (v2) hierarchy.
func (m *Manager) IsV2() bool {
	m.once.Do(func() {
		_, err := os.Stat(filepath.Join(m.Mount, "cgroup.controllers"))
		m.v2 = err == nil
	})
	return m.v2
}

// dirs are a cgroup's directories: one per v1 hierarchy, or one on v2.
func (m *Manager) dirs(path, controller string) []string {
	if m.IsV2() {
		return []string{filepath.Join(m.Mount, path)}
	}
	if controller != "" {
		return []string{filepath.Join(m.Mount, controller, path)}
	}
	var out []string
	for _, c := range v1Controllers {
		if _, err := os.Stat(filepath.Join(m.Mount, c)); err == nil {
			out = append(out, filepath.Join(m.Mount, c, path))
		}
	}
	return out
}

// ensure makes a cgroup and writes its values, if any.
func (m *Manager) ensure(path string, v *Values) error {
	if m.IsV2() {
		// Children get the controllers only when each ancestor enables
		// them for its subtree.
		parent := filepath.Dir(path)
		for _, p := range ancestors(parent) {
			_ = os.WriteFile(filepath.Join(m.Mount, p, "cgroup.subtree_control"), []byte("+cpu +memory +pids"), 0o644)
		}
	}
	for _, d := range m.dirs(path, "") {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create cgroup %s: %w", d, err)
		}
	}
	if v == nil {
		return nil
	}
	var errs []error
	for _, f := range Files(*v, m.IsV2()) {
		for _, d := range m.dirs(path, f.Controller) {
			if err := os.WriteFile(filepath.Join(d, f.Name), []byte(f.Value), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("cgroup %s: write %s=%s: %w", path, f.Name, f.Value, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ancestors lists "/", "/a", "/a/b" for "/a/b".
func ancestors(p string) []string {
	out := []string{"/"}
	cur := ""
	for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
		if part == "" {
			continue
		}
		cur += "/" + part
		out = append(out, cur)
	}
	return out
}

// EnsurePod makes the pod's cgroup with its limits, and the tiers with
// their shares for the active pods (pod among them), and returns the
// pod's cgroup path.
func (m *Manager) EnsurePod(pod *v1.Pod, active []*v1.Pod) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.updateTiers(active); err != nil {
		return "", err
	}
	path := Path(pod)
	v := PodValues(pod)
	if err := m.ensure(path, &v); err != nil {
		return "", err
	}
	return path, nil
}

// SetPodValues writes a pod cgroup's values (a resize).
func (m *Manager) SetPodValues(pod *v1.Pod, v Values) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ensure(Path(pod), &v)
}

func (m *Manager) updateTiers(active []*v1.Pod) error {
	// Root's own limits would be upstream's node allocatable
	// enforcement, which Orca does not do: it only has to exist.
	if err := m.ensure(Root, nil); err != nil {
		return err
	}
	for _, q := range []v1.PodQOSClass{v1.PodQOSBurstable, v1.PodQOSBestEffort} {
		v := TierValues(q, active)
		if err := m.ensure(TierPath(q), &v); err != nil {
			return err
		}
	}
	return nil
}

// RemovePod removes the pod's cgroup, whichever tier it was in, and
// updates the tiers for the pods left. A cgroup still holding
// processes or children stays, and the error says so: call again.
func (m *Manager) RemovePod(uid types.UID, active []*v1.Pod) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for _, tier := range []string{Root, Root + "/burstable", Root + "/besteffort"} {
		path := tier + "/pod" + string(uid)
		for _, d := range m.allDirs(path) {
			if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			}
		}
	}
	_ = m.updateTiers(active)
	return errors.Join(errs...)
}

// allDirs are a cgroup's directories in every hierarchy, those runc made
// included.
func (m *Manager) allDirs(path string) []string {
	if m.IsV2() {
		return []string{filepath.Join(m.Mount, path)}
	}
	entries, err := os.ReadDir(m.Mount)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(m.Mount, e.Name(), path))
		}
	}
	return out
}
