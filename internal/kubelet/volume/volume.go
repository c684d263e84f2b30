// Package volume prepares a pod's volumes on the host before its containers
// start, keeps the projected ones (configMap, secret, downwardAPI,
// projected) in step with their sources on every resync, turns volume
// mounts into CRI mounts, and removes what it made when the pod is gone.
//
// Each volume that needs a directory of its own gets
// Root/<podUID>/volumes/<plugin>/<volumeName>, with upstream's plugin
// names (kubernetes.io~empty-dir, kubernetes.io~secret, ...), so that the
// layout survives a restart and Orphans can find what deleted pods left.
package volume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/csinames"
)

// Sources is what volume setup reads from the API (the kubelet implements
// it with a client). Missing objects are reported with errors for which
// k8s.io/apimachinery/pkg/api/errors.IsNotFound is true.
type Sources interface {
	ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*v1.Secret, error)
	Claim(ctx context.Context, namespace, name string) (*v1.PersistentVolumeClaim, error)
	Volume(ctx context.Context, name string) (*v1.PersistentVolume, error)
	Token(ctx context.Context, namespace, serviceAccount string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
}

// Volume is a prepared volume: the host path to mount.
type Volume struct {
	HostPath string
	// ReadOnly is forced for secret, configMap, projected and downwardAPI
	// volumes and for claims marked readOnly.
	ReadOnly bool
}

// Manager prepares and removes pod volumes. The zero value is not usable:
// Root and Sources must be set. Calls for different pods may run
// concurrently; calls for one pod must not (the kubelet's per-pod worker
// serialises them).
type Manager struct {
	Root string // pods directory
	// CSI reaches the node's CSI drivers; without it CSI volumes fail.
	CSI CSI
	// LocalPathRoot is the node's local-path storage directory; the
	// volumes of local-path claims must lie directly below it.
	LocalPathRoot string
	Sources       Sources
	// Certificates serves clusterTrustBundle and podCertificate
	// projections; without it they fail.
	Certificates Certificates
	// Images mounts image volumes; without it they fail.
	Images          Images
	NodeAllocatable v1.ResourceList  // resourceFieldRef defaults and tmpfs sizes
	Now             func() time.Time // token refresh and version names; time.Now when nil
	Log             *slog.Logger     // slog.Default() when nil

	mu       sync.Mutex
	tokens   map[tokenKey]cachedToken
	podCerts map[podCertKey]*podCert
}

// Plugin directory names, as upstream's kubelet lays them out.
const (
	pluginEmptyDir    = "kubernetes.io~empty-dir"
	pluginConfigMap   = "kubernetes.io~configmap"
	pluginSecret      = "kubernetes.io~secret"
	pluginDownwardAPI = "kubernetes.io~downward-api"
	pluginProjected   = "kubernetes.io~projected"
)

// MountError is the failure of one volume. Its message is upstream's
// FailedMount event message, so the kubelet can post it as is.
type MountError struct {
	Volume string
	Err    error
}

func (e *MountError) Error() string {
	return fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", e.Volume, e.Err)
}

func (e *MountError) Unwrap() error { return e.Err }

// Setup prepares every volume of the pod, idempotently: called before the
// pod's first start and again on every periodic resync (so configMap,
// secret, downwardAPI and projected contents follow their sources; tokens
// are refreshed when 80% of their lifetime has passed, as upstream).
//
// Volumes are prepared independently: the map holds every volume that is
// ready, and the error joins one *MountError per volume that is not.
func (m *Manager) Setup(ctx context.Context, pod *v1.Pod) (map[string]Volume, error) {
	if err := validUID(pod.UID); err != nil {
		return nil, err
	}
	vols := make(map[string]Volume, len(pod.Spec.Volumes))
	var errs []error
	for i := range pod.Spec.Volumes {
		spec := &pod.Spec.Volumes[i]
		vol, err := m.setupOne(ctx, pod, spec)
		if err != nil {
			errs = append(errs, &MountError{Volume: spec.Name, Err: err})
			continue
		}
		vols[spec.Name] = vol
	}
	return vols, errors.Join(errs...)
}

func (m *Manager) setupOne(ctx context.Context, pod *v1.Pod, spec *v1.Volume) (Volume, error) {
	switch {
	case spec.EmptyDir != nil:
		return m.setupEmptyDir(pod, spec)
	case spec.HostPath != nil:
		return setupHostPath(spec.HostPath.Path, spec.HostPath.Type, false)
	case spec.ConfigMap != nil:
		return m.setupConfigMap(ctx, pod, spec)
	case spec.Secret != nil:
		return m.setupSecret(ctx, pod, spec)
	case spec.DownwardAPI != nil:
		return m.setupDownwardAPI(pod, spec)
	case spec.Projected != nil:
		return m.setupProjected(ctx, pod, spec)
	case spec.PersistentVolumeClaim != nil:
		return m.setupClaim(ctx, pod, spec.Name, spec.PersistentVolumeClaim.ClaimName, spec.PersistentVolumeClaim.ReadOnly, false)
	case spec.CSI != nil:
		src := spec.CSI
		fsType := ""
		if src.FSType != nil {
			fsType = *src.FSType
		}
		return m.setupCSI(ctx, pod, spec.Name, csiSource{
			driver: src.Driver, volumeID: csinames.InlineVolumeID(string(pod.UID), spec.Name), fsType: fsType, attributes: src.VolumeAttributes,
			inline: true, readOnly: src.ReadOnly != nil && *src.ReadOnly,
		})
	case spec.Image != nil:
		return m.setupImage(ctx, pod, spec)
	case spec.Ephemeral != nil:
		// A generic ephemeral volume is the claim the ephemeral volume
		// controller created for this pod, named <pod>-<volume>.
		return m.setupClaim(ctx, pod, spec.Name, pod.Name+"-"+spec.Name, false, true)
	}
	return Volume{}, errors.New("no volume plugin matched")
}

func (m *Manager) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Manager) log() *slog.Logger {
	if m.Log != nil {
		return m.Log
	}
	return slog.Default()
}

func (m *Manager) podDir(uid types.UID) string {
	return filepath.Join(m.Root, string(uid))
}

func (m *Manager) volumeDir(uid types.UID, plugin, name string) string {
	return filepath.Join(m.podDir(uid), "volumes", plugin, name)
}

// validUID keeps a malformed UID from naming a path outside Root.
func validUID(uid types.UID) error {
	s := string(uid)
	if s == "" || s == "." || s == ".." || strings.ContainsRune(s, '/') {
		return fmt.Errorf("invalid pod UID %q", s)
	}
	return nil
}

// Teardown removes what Setup made for a pod (unmounting tmpfs first). Safe
// to call for unknown pods and twice. Host paths and claims' host
// directories are never touched.
func (m *Manager) Teardown(podUID string) error {
	uid := types.UID(podUID)
	if err := validUID(uid); err != nil {
		return err
	}
	m.forgetTokens(uid)
	m.forgetPodCerts(uid)
	dir := filepath.Join(m.podDir(uid), "volumes")
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.teardownImages(ctx, dir); err != nil {
		return fmt.Errorf("tear down volumes of pod %s: %w", podUID, err)
	}
	// CSI volumes are the drivers' to unmount; what is left mounted
	// after that is removed like any other mount.
	if err := m.teardownCSI(ctx, uid); err != nil {
		return fmt.Errorf("tear down volumes of pod %s: %w", podUID, err)
	}
	// Removing files below a mount point that is still mounted would reach
	// into whatever is mounted there; unmount everything first and stop if
	// that fails.
	if err := unmountAllUnder(dir); err != nil {
		return fmt.Errorf("tear down volumes of pod %s: %w", podUID, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("tear down volumes of pod %s: %w", podUID, err)
	}
	// The pod directory may hold the kubelet's own files; it goes only when empty.
	if err := os.Remove(m.podDir(uid)); err != nil && !errors.Is(err, os.ErrNotExist) && !isNotEmpty(err) {
		return fmt.Errorf("remove directory of pod %s: %w", podUID, err)
	}
	return nil
}

// Orphans lists pod UIDs that have volume directories, so the kubelet can
// clean those of deleted pods after a restart.
func (m *Manager) Orphans() ([]string, error) {
	entries, err := os.ReadDir(m.Root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list pod directories: %w", err)
	}
	var uids []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if info, err := os.Stat(filepath.Join(m.Root, e.Name(), "volumes")); err == nil && info.IsDir() {
			uids = append(uids, e.Name())
		}
	}
	sort.Strings(uids)
	return uids, nil
}
