package volume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/localpath"
)

// setupClaim resolves a claim to its bound volume: a CSI driver's, or a
// host directory used in place (hostPath and local, Orca's local-path
// volumes among them).
func (m *Manager) setupClaim(ctx context.Context, pod *v1.Pod, volumeName, claimName string, readOnly, ephemeral bool) (Volume, error) {
	pvc, err := m.Sources.Claim(ctx, pod.Namespace, claimName)
	if err == nil {
		err = checkClaim(pvc)
	}
	if err != nil {
		return Volume{}, fmt.Errorf("error processing PVC %s/%s: %w", pod.Namespace, claimName, err)
	}
	if ephemeral {
		if err := checkEphemeralOwner(pod, pvc); err != nil {
			return Volume{}, err
		}
	}
	pv, err := m.Sources.Volume(ctx, pvc.Spec.VolumeName)
	if err == nil {
		err = checkVolumeBinding(pv, pvc)
	}
	if err != nil {
		return Volume{}, fmt.Errorf("error processing PVC %s/%s: %w", pod.Namespace, claimName, err)
	}
	if pv.Spec.VolumeMode != nil && *pv.Spec.VolumeMode == v1.PersistentVolumeBlock {
		return Volume{}, fmt.Errorf("volume %s has volumeMode %s, but is specified in volumeMounts", pv.Name, v1.PersistentVolumeBlock)
	}
	switch {
	case pv.Spec.CSI != nil:
		src := pv.Spec.CSI
		return m.setupCSI(ctx, pod, volumeName, csiSource{
			driver: src.Driver, volumeID: src.VolumeHandle, fsType: src.FSType, attributes: src.VolumeAttributes,
			mountFlags: pv.Spec.MountOptions, accessModes: pv.Spec.AccessModes, readOnly: readOnly || src.ReadOnly,
		})
	case pv.Spec.HostPath != nil:
		return setupHostPath(pv.Spec.HostPath.Path, pv.Spec.HostPath.Type, readOnly)
	case pv.Spec.Local != nil && localpath.Ours(pv):
		// A local-path volume: its directory is made on first use, below
		// this node's storage directory only, and given the pod's fsGroup.
		if m.LocalPathRoot == "" {
			return Volume{}, fmt.Errorf("local-path volume %s: this node keeps no local-path volumes", pv.Name)
		}
		if err := localpath.EnsureDir(m.LocalPathRoot, pv.Spec.Local.Path); err != nil {
			return Volume{}, fmt.Errorf("local-path volume %s: %w", pv.Name, err)
		}
		if err := applyFSGroup(pv.Spec.Local.Path, pod, readOnly); err != nil {
			return Volume{}, fmt.Errorf("local-path volume %s: %w", pv.Name, err)
		}
		return Volume{HostPath: pv.Spec.Local.Path, ReadOnly: readOnly}, nil
	case pv.Spec.Local != nil:
		path := filepath.Clean(pv.Spec.Local.Path)
		info, err := os.Stat(path)
		if err != nil {
			return Volume{}, fmt.Errorf("local volume %s: %w", pv.Name, err)
		}
		if !info.IsDir() {
			return Volume{}, fmt.Errorf("local volume %s: %s is not a directory", pv.Name, path)
		}
		if err := applyFSGroup(path, pod, readOnly); err != nil {
			return Volume{}, fmt.Errorf("local volume %s: %w", pv.Name, err)
		}
		return Volume{HostPath: path, ReadOnly: readOnly}, nil
	}
	return Volume{}, fmt.Errorf("persistent volume %s: no volume plugin matched", pv.Name)
}

// checkClaim is upstream's check of a claim a pod may use.
func checkClaim(pvc *v1.PersistentVolumeClaim) error {
	switch {
	case pvc.DeletionTimestamp != nil:
		return errors.New("PVC is being deleted")
	case pvc.Status.Phase != v1.ClaimBound:
		return errors.New("PVC is not bound")
	case pvc.Spec.VolumeName == "":
		return errors.New("PVC has empty pvc.Spec.VolumeName")
	}
	return nil
}

func checkVolumeBinding(pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim) error {
	if pv.Spec.ClaimRef == nil {
		return fmt.Errorf("found PV object %s but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim", pv.Name)
	}
	if pv.Spec.ClaimRef.UID != pvc.UID {
		return fmt.Errorf("found PV object %s but its pv.Spec.ClaimRef.UID %s does not point to claim.UID %s", pv.Name, pv.Spec.ClaimRef.UID, pvc.UID)
	}
	return nil
}

// checkEphemeralOwner refuses a claim with the ephemeral name that the pod
// does not own: it was not created for this pod.
func checkEphemeralOwner(pod *v1.Pod, pvc *v1.PersistentVolumeClaim) error {
	if !metav1.IsControlledBy(pvc, pod) {
		return fmt.Errorf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", pvc.Namespace, pvc.Name, pod.Namespace, pod.Name)
	}
	return nil
}
