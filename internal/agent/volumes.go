package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/kubelet/csi"
	"github.com/orca-project/orca/internal/kubelet/volume"
)

// volumes adapts the volume manager to the kubelet: it remembers each
// pod's prepared volumes for the container mounts that follow.
type volumes struct {
	m    *volume.Manager
	mu   sync.Mutex
	pods map[string]map[string]volume.Volume
}

func newVolumes(root, localPathRoot string, client kubernetes.Interface, images volume.Images, csi volume.CSI, allocatable v1.ResourceList, log *slog.Logger) *volumes {
	return &volumes{
		m: &volume.Manager{Root: root, LocalPathRoot: localPathRoot, Sources: apiSources{client}, Certificates: apiSources{client}, Images: images, CSI: csi,
			NodeAllocatable: allocatable, Log: log},
		pods: map[string]map[string]volume.Volume{},
	}
}

func (v *volumes) Prepare(ctx context.Context, pod *v1.Pod) error {
	vols, err := v.m.Setup(ctx, pod)
	if err != nil {
		return err
	}
	v.mu.Lock()
	v.pods[string(pod.UID)] = vols
	v.mu.Unlock()
	return nil
}

func (v *volumes) ContainerMounts(pod *v1.Pod, c *v1.Container, env map[string]string) ([]*runtimeapi.Mount, error) {
	v.mu.Lock()
	vols := v.pods[string(pod.UID)]
	v.mu.Unlock()
	return volume.Mounts(pod, c, vols, env)
}

func (v *volumes) Teardown(uid string) error {
	v.mu.Lock()
	delete(v.pods, uid)
	v.mu.Unlock()
	return v.m.Teardown(uid)
}

func (v *volumes) Orphans() ([]string, error) { return v.m.Orphans() }

func (v *volumes) InUse() []v1.UniqueVolumeName { return v.m.InUse() }

// apiSources reads volume sources from the API server.
type apiSources struct{ c kubernetes.Interface }

func (s apiSources) ConfigMap(ctx context.Context, ns, name string) (*v1.ConfigMap, error) {
	return s.c.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
}

func (s apiSources) Secret(ctx context.Context, ns, name string) (*v1.Secret, error) {
	return s.c.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
}

func (s apiSources) Claim(ctx context.Context, ns, name string) (*v1.PersistentVolumeClaim, error) {
	return s.c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
}

func (s apiSources) Volume(ctx context.Context, name string) (*v1.PersistentVolume, error) {
	return s.c.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
}

func (s apiSources) Token(ctx context.Context, ns, sa string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return s.c.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, req, metav1.CreateOptions{})
}

func (s apiSources) ClusterTrustBundle(ctx context.Context, name string) (*certificatesv1.ClusterTrustBundle, error) {
	return s.c.CertificatesV1().ClusterTrustBundles().Get(ctx, name, metav1.GetOptions{})
}

func (s apiSources) ClusterTrustBundles(ctx context.Context, signerName string) ([]certificatesv1.ClusterTrustBundle, error) {
	list, err := s.c.CertificatesV1().ClusterTrustBundles().List(ctx, metav1.ListOptions{FieldSelector: "spec.signerName=" + signerName})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

func (s apiSources) ServiceAccount(ctx context.Context, ns, name string) (*v1.ServiceAccount, error) {
	return s.c.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
}

func (s apiSources) Node(ctx context.Context, name string) (*v1.Node, error) {
	return s.c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

func (s apiSources) CreatePodCertificateRequest(ctx context.Context, pcr *certificatesv1.PodCertificateRequest) (*certificatesv1.PodCertificateRequest, error) {
	return s.c.CertificatesV1().PodCertificateRequests(pcr.Namespace).Create(ctx, pcr, metav1.CreateOptions{})
}

func (s apiSources) PodCertificateRequest(ctx context.Context, ns, name string) (*certificatesv1.PodCertificateRequest, error) {
	return s.c.CertificatesV1().PodCertificateRequests(ns).Get(ctx, name, metav1.GetOptions{})
}

// csiVolumes serves the volume manager's CSI volumes from the node's
// driver registry and the API.
type csiVolumes struct {
	registry *csi.Registry
	client   kubernetes.Interface
	node     string
	staging  string
	inUse    func() []v1.UniqueVolumeName
}

func (c csiVolumes) NodeClient(driver string) (csipb.NodeClient, error) {
	return c.registry.NodeClient(driver)
}

func (c csiVolumes) CSIDriver(ctx context.Context, name string) (*storagev1.CSIDriver, error) {
	return c.client.StorageV1().CSIDrivers().Get(ctx, name, metav1.GetOptions{})
}

func (c csiVolumes) VolumeAttachment(ctx context.Context, name string) (*storagev1.VolumeAttachment, error) {
	return c.client.StorageV1().VolumeAttachments().Get(ctx, name, metav1.GetOptions{})
}

func (c csiVolumes) NodeName() string    { return c.node }
func (c csiVolumes) StagingRoot() string { return c.staging }

// ReportInUse writes the node's volumes in use into its status now,
// rather than at the next status report.
func (c csiVolumes) ReportInUse(ctx context.Context) error {
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"volumesInUse": c.inUse()}})
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Nodes().Patch(ctx, c.node, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}
