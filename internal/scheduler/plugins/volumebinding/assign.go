package volumebinding

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
)

// Assignment is what placing a pod on a node asks of its unbound
// WaitForFirstConsumer claims, upstream's PreBind: available volumes
// bound to claims (the volume's claimRef written by the scheduler, the
// rest by the volume controller), and claims handed to their
// provisioner for the node. The pod is bound once every claim in Wait
// is.
type Assignment struct {
	// Volumes are the volumes to write, already pointing at their claims.
	Volumes []*v1.PersistentVolume
	// Claims are the claims to write, annotated with the node.
	Claims []*v1.PersistentVolumeClaim
	// Wait are the claims the pod waits for.
	Wait []*v1.PersistentVolumeClaim
}

// Empty reports whether the pod needs nothing of its volumes.
func (a Assignment) Empty() bool { return len(a.Wait) == 0 }

// Assign works out the Assignment of pod on node from the Lister: for
// each unbound delayed claim, the smallest matching available volume
// the pod's other claims have not taken, else provisioning.
func Assign(pod *v1.Pod, node *v1.Node, l Lister) (Assignment, error) {
	var out Assignment
	var volumes []*v1.PersistentVolume
	taken := map[string]*v1.PersistentVolume{}
	for i := range pod.Spec.Volumes {
		name, _ := ClaimName(pod, &pod.Spec.Volumes[i])
		if name == "" {
			continue
		}
		c, err := l.Claim(pod.Namespace, name)
		if err != nil {
			return out, fmt.Errorf("get persistentvolumeclaim %q: %w", name, err)
		}
		if bound(c) {
			continue
		}
		className := volume.GetPersistentVolumeClaimClass(c)
		class, err := l.Class(className)
		if err != nil || class.VolumeBindingMode == nil || *class.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
			// Immediate claims are the volume controller's alone.
			continue
		}
		out.Wait = append(out.Wait, c)
		if sel, ok := c.Annotations[volume.AnnSelectedNode]; ok {
			if sel != node.Name {
				return out, fmt.Errorf("persistentvolumeclaim %q is being provisioned for node %q", name, sel)
			}
			continue
		}
		if volumes == nil {
			if volumes, err = l.Volumes(); err != nil {
				return out, fmt.Errorf("list persistentvolumes: %w", err)
			}
		}
		pv, err := volume.FindMatchingVolume(c, volumes, node, taken, true, true)
		if err != nil {
			return out, err
		}
		if pv != nil {
			taken[pv.Name] = pv
			if volume.IsVolumeBoundToClaim(pv, c) && pv.Spec.ClaimRef.UID == c.UID {
				continue // promised already: the volume controller finishes it
			}
			b, _, err := volume.GetBindVolumeToClaim(pv, c)
			if err != nil {
				return out, err
			}
			out.Volumes = append(out.Volumes, b)
			continue
		}
		if !Provisionable(class, node) {
			return out, fmt.Errorf("no volume for persistentvolumeclaim %q on node %q", name, node.Name)
		}
		a := c.DeepCopy()
		metav1.SetMetaDataAnnotation(&a.ObjectMeta, volume.AnnSelectedNode, node.Name)
		if a.Annotations[volume.AnnStorageProvisioner] == "" {
			metav1.SetMetaDataAnnotation(&a.ObjectMeta, volume.AnnStorageProvisioner, class.Provisioner)
			metav1.SetMetaDataAnnotation(&a.ObjectMeta, volume.AnnBetaStorageProvisioner, class.Provisioner)
		}
		out.Claims = append(out.Claims, a)
	}
	return out, nil
}

// Settled reports whether a claim the pod waits for is bound, or why it
// never will be for node: its provisioning was handed back (the selected
// node annotation removed, as provisioners do to have the pod placed
// again) or it is gone.
func Settled(c *v1.PersistentVolumeClaim, node string, provisioning bool) (bool, error) {
	if c.DeletionTimestamp != nil {
		return false, fmt.Errorf("persistentvolumeclaim %q is being deleted", c.Name)
	}
	if c.Spec.VolumeName != "" && metav1.HasAnnotation(c.ObjectMeta, volume.AnnBindCompleted) {
		return true, nil
	}
	if provisioning && c.Annotations[volume.AnnSelectedNode] != node {
		return false, fmt.Errorf("selectedNode annotation reset for PVC %q", c.Name)
	}
	return false, nil
}
