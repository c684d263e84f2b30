package volume

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

// fakeSources serves objects from maps and answers NotFound the way a
// client does (plural resource names).
type fakeSources struct {
	mu         sync.Mutex
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
	claims     map[string]*v1.PersistentVolumeClaim
	volumes    map[string]*v1.PersistentVolume

	now        func() time.Time
	tokenErr   error
	tokenCalls []*authenticationv1.TokenRequest
}

func newFakeSources() *fakeSources {
	return &fakeSources{
		configMaps: map[string]*v1.ConfigMap{},
		secrets:    map[string]*v1.Secret{},
		claims:     map[string]*v1.PersistentVolumeClaim{},
		volumes:    map[string]*v1.PersistentVolume{},
		now:        time.Now,
	}
}

func notFound(resource, name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

func (f *fakeSources) ConfigMap(_ context.Context, ns, name string) (*v1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cm, ok := f.configMaps[ns+"/"+name]; ok {
		return cm.DeepCopy(), nil
	}
	return nil, notFound("configmaps", name)
}

func (f *fakeSources) Secret(_ context.Context, ns, name string) (*v1.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s.DeepCopy(), nil
	}
	return nil, notFound("secrets", name)
}

func (f *fakeSources) Claim(_ context.Context, ns, name string) (*v1.PersistentVolumeClaim, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.claims[ns+"/"+name]; ok {
		return c.DeepCopy(), nil
	}
	return nil, notFound("persistentvolumeclaims", name)
}

func (f *fakeSources) Volume(_ context.Context, name string) (*v1.PersistentVolume, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pv, ok := f.volumes[name]; ok {
		return pv.DeepCopy(), nil
	}
	return nil, notFound("persistentvolumes", name)
}

// Token issues "token-<n>" valid for the requested seconds (default 3600).
func (f *fakeSources) Token(_ context.Context, ns, sa string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokenCalls = append(f.tokenCalls, req.DeepCopy())
	if f.tokenErr != nil {
		return nil, f.tokenErr
	}
	out := req.DeepCopy()
	if out.Spec.ExpirationSeconds == nil {
		s := int64(3600)
		out.Spec.ExpirationSeconds = &s
	}
	out.Status.Token = fmt.Sprintf("token-%d", len(f.tokenCalls))
	out.Status.ExpirationTimestamp = metav1.NewTime(f.now().Add(time.Duration(*out.Spec.ExpirationSeconds) * time.Second))
	return out, nil
}

func newManager(t *testing.T, src *fakeSources) *Manager {
	t.Helper()
	m := &Manager{Root: t.TempDir(), Sources: src}
	return m
}

// setup runs Setup and tears the pod down at the end of the test, so
// tmpfs mounts never outlive it.
func setup(t *testing.T, m *Manager, pod *v1.Pod) (map[string]Volume, error) {
	t.Helper()
	t.Cleanup(func() {
		if err := m.Teardown(string(pod.UID)); err != nil {
			t.Errorf("Teardown: %v", err)
		}
	})
	return m.Setup(context.Background(), pod)
}

func podWith(volumes ...v1.Volume) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-1", Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{
			ServiceAccountName: "robot",
			Containers: []v1.Container{{Name: "app", Resources: v1.ResourceRequirements{
				Limits: v1.ResourceList{v1.ResourceMemory: mustQuantity("64Mi")},
			}}},
			Volumes: volumes,
		},
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// userFiles lists the files and directories a projected volume shows:
// those of the current version, each reachable through the volume's
// top-level links.
func userFiles(t *testing.T, dir string) []string {
	t.Helper()
	version := filepath.Join(dir, "..data")
	if _, err := os.Stat(version); err != nil {
		t.Fatalf("no published version: %v", err)
	}
	var out []string
	err := filepath.Walk(version+"/", func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(version, p)
		if rel == "." {
			return nil
		}
		if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
			t.Errorf("%s is not visible in the volume: %v", rel, err)
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func statOf(t *testing.T, p string) (os.FileMode, uint32) {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode(), info.Sys().(*syscall.Stat_t).Gid
}

func ptr[T any](v T) *T { return &v }

var mustQuantity = resource.MustParse

// mountOptions returns the super options mountinfo shows for dir.
func mountOptions(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == real {
			return f[len(f)-1]
		}
	}
	return ""
}

func countMounts(t *testing.T, dir string) int {
	t.Helper()
	points, err := mountPointsUnder(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(points)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func umask() os.FileMode {
	old := syscall.Umask(0)
	syscall.Umask(old)
	return os.FileMode(old)
}

func uidOf(name string) k8stypes.UID { return k8stypes.UID(name) }
