package volume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/csinames"
)

const pluginCSI = "kubernetes.io~csi"

// CSI is what CSI volumes need from the node and the API: the node
// service of a registered driver, the driver's CSIDriver object (nil
// when there is none), and VolumeAttachments.
type CSI interface {
	NodeClient(driver string) (csipb.NodeClient, error)
	CSIDriver(ctx context.Context, name string) (*storagev1.CSIDriver, error)
	VolumeAttachment(ctx context.Context, name string) (*storagev1.VolumeAttachment, error)
	// NodeName is the node's name, part of attachment names.
	NodeName() string
	// StagingRoot is where volumes are staged, one directory per driver
	// and volume (upstream's plugins/kubernetes.io/csi).
	StagingRoot() string
	// ReportInUse publishes the node's volumes in use (InUse) in its
	// status at once, so that an attached volume is not detached while
	// it is being mounted.
	ReportInUse(ctx context.Context) error
}

// Upstream's pod information keys in a volume's context.
const (
	ctxPodName        = "csi.storage.k8s.io/pod.name"
	ctxPodNamespace   = "csi.storage.k8s.io/pod.namespace"
	ctxPodUID         = "csi.storage.k8s.io/pod.uid"
	ctxServiceAccount = "csi.storage.k8s.io/serviceAccount.name"
	ctxEphemeral      = "csi.storage.k8s.io/ephemeral"
)

// csiRecord is what a CSI volume's directory remembers for its teardown,
// upstream's vol_data.json.
type csiRecord struct {
	Driver      string `json:"driverName"`
	VolumeID    string `json:"volumeHandle"`
	StagingPath string `json:"stagingPath,omitempty"`
}

// csiSource is a CSI volume as the node sees it, persistent or inline.
type csiSource struct {
	driver, volumeID, fsType string
	attributes               map[string]string
	mountFlags               []string
	accessModes              []v1.PersistentVolumeAccessMode
	inline, readOnly         bool
}

// setupCSI publishes a CSI volume into the pod's volume directory:
// through the VolumeAttachment when the driver needs attaching, staged
// once per node when the driver stages, published per pod; then the
// pod's fsGroup as the driver's fsGroupPolicy says.
func (m *Manager) setupCSI(ctx context.Context, pod *v1.Pod, name string, src csiSource) (Volume, error) {
	if m.CSI == nil {
		return Volume{}, errors.New("this node runs no CSI drivers")
	}
	obj, err := m.CSI.CSIDriver(ctx, src.driver)
	if err != nil && !apierrors.IsNotFound(err) {
		return Volume{}, fmt.Errorf("get CSIDriver %s: %w", src.driver, err)
	}
	if apierrors.IsNotFound(err) {
		obj = nil
	}
	if src.inline && !supportsMode(obj, storagev1.VolumeLifecycleEphemeral) {
		return Volume{}, fmt.Errorf("volume mode %q not supported by driver %s (only supports %q)", storagev1.VolumeLifecycleEphemeral, src.driver, modes(obj))
	}
	if !src.inline && !supportsMode(obj, storagev1.VolumeLifecyclePersistent) {
		return Volume{}, fmt.Errorf("volume mode %q not supported by driver %s (only supports %q)", storagev1.VolumeLifecyclePersistent, src.driver, modes(obj))
	}
	node, err := m.CSI.NodeClient(src.driver)
	if err != nil {
		return Volume{}, err
	}
	dir := m.volumeDir(pod.UID, pluginCSI, name)
	target := filepath.Join(dir, "mount")
	if mounted, err := isMounted(target); err != nil || mounted {
		return Volume{HostPath: target, ReadOnly: src.readOnly}, err
	}
	var publishContext map[string]string
	attached := !src.inline && attachRequired(obj)
	if attached {
		va, err := m.CSI.VolumeAttachment(ctx, csinames.Attachment(src.volumeID, src.driver, m.CSI.NodeName()))
		switch {
		case apierrors.IsNotFound(err):
			return Volume{}, fmt.Errorf("volume %s is not attached to this node yet", src.volumeID)
		case err != nil:
			return Volume{}, err
		case !va.Status.Attached:
			return Volume{}, fmt.Errorf("volume %s is not attached to this node yet (VolumeAttachment %s)", src.volumeID, va.Name)
		}
		publishContext = va.Status.AttachmentMetadata
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	capability := volumeCapability(src)
	staging := ""
	if !src.inline {
		caps, err := node.NodeGetCapabilities(cctx, &csipb.NodeGetCapabilitiesRequest{})
		if err != nil {
			return Volume{}, fmt.Errorf("NodeGetCapabilities: %w", err)
		}
		if hasCapability(caps, csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME) {
			staging = csinames.StagingPath(m.CSI.StagingRoot(), src.driver, src.volumeID)
		}
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return Volume{}, fmt.Errorf("make target directory: %w", err)
	}
	// The record goes first: it lists the volume in use (InUse), and a
	// teardown after a failed stage or publish still undoes what the
	// driver may have done.
	if err := writeRecord(dir, csiRecord{Driver: src.driver, VolumeID: src.volumeID, StagingPath: staging}); err != nil {
		return Volume{}, err
	}
	if attached {
		if err := m.CSI.ReportInUse(cctx); err != nil {
			return Volume{}, fmt.Errorf("report volume %s in use: %w", src.volumeID, err)
		}
	}
	if staging != "" {
		if err := os.MkdirAll(staging, 0o750); err != nil {
			return Volume{}, fmt.Errorf("make staging directory: %w", err)
		}
		if _, err := node.NodeStageVolume(cctx, &csipb.NodeStageVolumeRequest{
			VolumeId: src.volumeID, PublishContext: publishContext, StagingTargetPath: staging,
			VolumeCapability: capability, VolumeContext: src.attributes,
		}); err != nil {
			return Volume{}, fmt.Errorf("rpc error: NodeStageVolume: %w", err)
		}
	}
	volumeContext := src.attributes
	if obj != nil && obj.Spec.PodInfoOnMount != nil && *obj.Spec.PodInfoOnMount {
		volumeContext = map[string]string{}
		for k, v := range src.attributes {
			volumeContext[k] = v
		}
		volumeContext[ctxPodName] = pod.Name
		volumeContext[ctxPodNamespace] = pod.Namespace
		volumeContext[ctxPodUID] = string(pod.UID)
		volumeContext[ctxServiceAccount] = pod.Spec.ServiceAccountName
		volumeContext[ctxEphemeral] = fmt.Sprint(src.inline)
	}
	if _, err := node.NodePublishVolume(cctx, &csipb.NodePublishVolumeRequest{
		VolumeId: src.volumeID, PublishContext: publishContext, StagingTargetPath: staging, TargetPath: target,
		VolumeCapability: capability, Readonly: src.readOnly, VolumeContext: volumeContext,
	}); err != nil {
		return Volume{}, fmt.Errorf("rpc error: NodePublishVolume: %w", err)
	}
	if appliesFSGroup(obj, src) {
		if err := applyFSGroup(target, pod, src.readOnly); err != nil {
			return Volume{}, err
		}
	}
	return Volume{HostPath: target, ReadOnly: src.readOnly}, nil
}

// teardownCSI unpublishes every CSI volume of a pod, and unstages those
// no other pod on the node still uses. It leaves the directories to the
// caller.
func (m *Manager) teardownCSI(ctx context.Context, uid types.UID) error {
	dirs, _ := filepath.Glob(filepath.Join(m.podDir(uid), "volumes", pluginCSI, "*"))
	var errs []error
	for _, dir := range dirs {
		rec, err := readRecord(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if m.CSI == nil {
			errs = append(errs, fmt.Errorf("unpublish %s: this node runs no CSI drivers", rec.VolumeID))
			continue
		}
		node, err := m.CSI.NodeClient(rec.Driver)
		if err != nil {
			errs = append(errs, fmt.Errorf("unpublish %s: %w", rec.VolumeID, err))
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		_, err = node.NodeUnpublishVolume(cctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: rec.VolumeID, TargetPath: filepath.Join(dir, "mount")})
		if err == nil && rec.StagingPath != "" && !m.stagedElsewhere(uid, rec) {
			_, err = node.NodeUnstageVolume(cctx, &csipb.NodeUnstageVolumeRequest{VolumeId: rec.VolumeID, StagingTargetPath: rec.StagingPath})
		}
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("unpublish %s: %w", rec.VolumeID, err))
			continue
		}
		// Done with the driver: a teardown retried later skips it.
		_ = os.Remove(filepath.Join(dir, recordFile))
	}
	return errors.Join(errs...)
}

// stagedElsewhere reports whether another pod on the node publishes the
// same staged volume.
func (m *Manager) stagedElsewhere(uid types.UID, rec csiRecord) bool {
	others, _ := filepath.Glob(filepath.Join(m.Root, "*", "volumes", pluginCSI, "*", recordFile))
	for _, f := range others {
		if filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(f))))) == string(uid) {
			continue
		}
		if r, err := readRecord(filepath.Dir(f)); err == nil && r.Driver == rec.Driver && r.VolumeID == rec.VolumeID {
			return true
		}
	}
	return false
}

const recordFile = "vol_data.json"

func writeRecord(dir string, rec csiRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, recordFile), b, 0o600); err != nil {
		return fmt.Errorf("record CSI volume: %w", err)
	}
	return nil
}

func readRecord(dir string) (csiRecord, error) {
	var rec csiRecord
	b, err := os.ReadFile(filepath.Join(dir, recordFile))
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("read %s: %w", filepath.Join(dir, recordFile), err)
	}
	return rec, nil
}

// attachRequired: without a CSIDriver object, attaching is required, as
// upstream.
func attachRequired(d *storagev1.CSIDriver) bool {
	return d == nil || d.Spec.AttachRequired == nil || *d.Spec.AttachRequired
}

func supportsMode(d *storagev1.CSIDriver, mode storagev1.VolumeLifecycleMode) bool {
	return slices.Contains(modes(d), mode)
}

func modes(d *storagev1.CSIDriver) []storagev1.VolumeLifecycleMode {
	if d == nil || len(d.Spec.VolumeLifecycleModes) == 0 {
		return []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
	return d.Spec.VolumeLifecycleModes
}

// appliesFSGroup is the driver's fsGroupPolicy: File always,
// None never, ReadWriteOnceWithFSType (the default) for a volume with an
// fsType that only one node writes.
func appliesFSGroup(d *storagev1.CSIDriver, src csiSource) bool {
	policy := storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy
	if d != nil && d.Spec.FSGroupPolicy != nil {
		policy = *d.Spec.FSGroupPolicy
	}
	switch policy {
	case storagev1.FileFSGroupPolicy:
		return true
	case storagev1.NoneFSGroupPolicy:
		return false
	}
	if src.fsType == "" {
		return false
	}
	return src.inline || slices.Contains(src.accessModes, v1.ReadWriteOnce) || slices.Contains(src.accessModes, v1.ReadWriteOncePod)
}

func volumeCapability(src csiSource) *csipb.VolumeCapability {
	mode := csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER
	switch {
	case slices.Contains(src.accessModes, v1.ReadWriteOncePod):
		mode = csipb.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER
	case slices.Contains(src.accessModes, v1.ReadWriteMany):
		mode = csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	case slices.Contains(src.accessModes, v1.ReadOnlyMany) && !slices.Contains(src.accessModes, v1.ReadWriteOnce):
		mode = csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY
	}
	return &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{FsType: src.fsType, MountFlags: src.mountFlags}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: mode},
	}
}

func hasCapability(resp *csipb.NodeGetCapabilitiesResponse, want csipb.NodeServiceCapability_RPC_Type) bool {
	for _, c := range resp.GetCapabilities() {
		if c.GetRpc().GetType() == want {
			return true
		}
	}
	return false
}

func isMounted(dir string) (bool, error) {
	points, err := mountPointsUnder(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	real, _ := filepath.EvalSymlinks(dir)
	return slices.Contains(points, real), nil
}

// InUse lists the CSI volumes published on the node, by upstream's
// unique volume names (kubernetes.io/csi/<driver>^<handle>), for the
// node's status.volumesInUse.
func (m *Manager) InUse() []v1.UniqueVolumeName {
	records, _ := filepath.Glob(filepath.Join(m.Root, "*", "volumes", pluginCSI, "*", recordFile))
	seen := map[v1.UniqueVolumeName]bool{}
	var out []v1.UniqueVolumeName
	for _, f := range records {
		rec, err := readRecord(filepath.Dir(f))
		if err != nil {
			continue
		}
		name := v1.UniqueVolumeName("kubernetes.io/csi/" + rec.Driver + "^" + rec.VolumeID)
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
