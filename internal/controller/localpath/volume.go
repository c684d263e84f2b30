package localpath

import (
	"errors"
	"fmt"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/orca-project/orca/internal/localpath"
)

// Volume is the PersistentVolume the provisioner makes for claim on
// node (nil when the class binds at once and no node was chosen), or why
// it cannot.
func Volume(claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass, node *v1.Node) (*v1.PersistentVolume, error) {
	if node == nil {
		return nil, errors.New("the local-path provisioner needs the node a pod is scheduled to: use a StorageClass with volumeBindingMode WaitForFirstConsumer")
	}
	if claim.Spec.VolumeMode != nil && *claim.Spec.VolumeMode == v1.PersistentVolumeBlock {
		return nil, errors.New("the local-path provisioner makes filesystem volumes only, not volumeMode Block")
	}
	for _, m := range claim.Spec.AccessModes {
		if m != v1.ReadWriteOnce && m != v1.ReadWriteOncePod {
			return nil, fmt.Errorf("the local-path provisioner supports only the ReadWriteOnce and ReadWriteOncePod access modes, not %s", m)
		}
	}
	if claim.Spec.Selector != nil {
		return nil, errors.New("claim Selector is not supported")
	}
	root := node.Annotations[localpath.DirAnnotation]
	if root == "" {
		return nil, fmt.Errorf("node %q keeps no local-path volumes (it has no %s annotation)", node.Name, localpath.DirAnnotation)
	}
	if !filepath.IsAbs(root) || filepath.Clean(root) != root {
		return nil, fmt.Errorf("node %q has an invalid %s annotation %q", node.Name, localpath.DirAnnotation, root)
	}
	name := volumeName(claim)
	dir, err := localpath.DirName(name, claim.Namespace, claim.Name)
	if err != nil {
		return nil, err
	}
	hostname := node.Labels[v1.LabelHostname]
	if hostname == "" {
		hostname = node.Name
	}
	policy := v1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		policy = *class.ReclaimPolicy
	}
	mode := v1.PersistentVolumeFilesystem
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{localpath.NodeLabel: node.Name},
			Annotations: map[string]string{volume.AnnDynamicallyProvisioned: localpath.Provisioner},
			Finalizers:  []string{localpath.Finalizer},
		},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: claim.Spec.Resources.Requests[v1.ResourceStorage]},
			AccessModes:                   claim.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: policy,
			StorageClassName:              class.Name,
			MountOptions:                  class.MountOptions,
			VolumeMode:                    &mode,
			PersistentVolumeSource: v1.PersistentVolumeSource{
				Local: &v1.LocalVolumeSource{Path: filepath.Join(root, dir)},
			},
			ClaimRef: &v1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion,
			},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{hostname}}},
			}}}},
		},
	}
	return pv, nil
}
