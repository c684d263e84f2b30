// Package volumebinding places pods next to their persistent volumes, as
// upstream's VolumeBinding plugin does: a pod whose claim is missing,
// being deleted or unbound with immediate binding fits nowhere; a claim
// bound to a volume with node affinity admits only the nodes that
// affinity selects; an unbound WaitForFirstConsumer claim admits the
// nodes where an available volume could be bound to it. The plugin only
// decides; it binds nothing.
package volumebinding

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// Name is the plugin's name.
const Name = "VolumeBinding"

// Upstream's reasons.
const (
	ErrReasonUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"
	ErrReasonBindConflict     = "node(s) didn't find available persistent volumes to bind"
	ErrReasonNodeConflict     = "node(s) had volume node affinity conflict"
	ErrReasonPVNotExist       = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)

// Lister reads claims, volumes and classes; lookups of missing objects
// return errors for which apierrors.IsNotFound is true (as client-go's
// listers do, whose message is upstream's `persistentvolumeclaim "x" not
// found`).
type Lister interface {
	Claim(namespace, name string) (*v1.PersistentVolumeClaim, error)
	Volume(name string) (*v1.PersistentVolume, error)
	Volumes() ([]*v1.PersistentVolume, error)
	Class(name string) (*storagev1.StorageClass, error)
}

// Plugin is the PreFilter and Filter.
type Plugin struct {
	Lister Lister
}

var (
	_ framework.PreFilterPlugin = (*Plugin)(nil)
	_ framework.FilterPlugin    = (*Plugin)(nil)
)

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

const stateKey = Name

// state is what PreFilter found for a pod with claims.
type state struct {
	// bound are the volumes of bound claims; nil where the volume is gone.
	bound []*v1.PersistentVolume
	// delayed are unbound WaitForFirstConsumer claims, matched per node
	// against volumes.
	delayed []*v1.PersistentVolumeClaim
	volumes []*v1.PersistentVolume
	// classes of the delayed claims, by name, for provisioning.
	classes map[string]*storagev1.StorageClass
}

// PreFilter implements framework.PreFilterPlugin. Pods without claims
// store nothing, so their Filter costs one map lookup.
func (pl *Plugin) PreFilter(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, _ *framework.Snapshot) *framework.Status {
	claims, st := pl.claims(pod.Pod)
	if st != nil || len(claims) == 0 {
		return st
	}
	s := &state{}
	unboundImmediate := false
	for _, c := range claims {
		if bound(c) {
			pv, err := pl.Lister.Volume(c.Spec.VolumeName)
			if err != nil && !apierrors.IsNotFound(err) {
				return framework.AsStatus(fmt.Errorf("get persistentvolume %q: %w", c.Spec.VolumeName, err))
			}
			s.bound = append(s.bound, pv)
			continue
		}
		delay, err := pl.delayBinding(c)
		if err != nil {
			return framework.AsStatus(err)
		}
		// A claim pre-bound to a volume by name waits for the volume
		// controller, as upstream treats it.
		if !delay || c.Spec.VolumeName != "" {
			unboundImmediate = true
			continue
		}
		s.delayed = append(s.delayed, c)
		if s.classes == nil {
			s.classes = map[string]*storagev1.StorageClass{}
		}
		name := volume.GetPersistentVolumeClaimClass(c)
		if class, err := pl.Lister.Class(name); err == nil {
			s.classes[name] = class
		}
	}
	if unboundImmediate {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate)
	}
	if len(s.delayed) > 0 {
		vols, err := pl.Lister.Volumes()
		if err != nil {
			return framework.AsStatus(fmt.Errorf("list persistentvolumes: %w", err))
		}
		s.volumes = vols
	}
	cs.Write(stateKey, s)
	return nil
}

// claims looks up the pod's claims, rejecting it on the first claim that
// is missing, lost or being deleted, with upstream's messages.
func (pl *Plugin) claims(pod *v1.Pod) ([]*v1.PersistentVolumeClaim, *framework.Status) {
	var out []*v1.PersistentVolumeClaim
	for _, vol := range pod.Spec.Volumes {
		name, ephemeral := ClaimName(pod, &vol)
		if name == "" {
			continue
		}
		c, err := pl.Lister.Claim(pod.Namespace, name)
		switch {
		case apierrors.IsNotFound(err) && ephemeral:
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name))
		case apierrors.IsNotFound(err):
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
		case err == nil && ephemeral && !metav1.IsControlledBy(c, pod):
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("persistentvolumeclaim %q was not created for the pod", name))
		case err != nil:
			return nil, framework.AsStatus(fmt.Errorf("get persistentvolumeclaim %q: %w", name, err))
		case c.Status.Phase == v1.ClaimLost:
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", c.Name, c.Spec.VolumeName))
		case c.DeletionTimestamp != nil:
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("persistentvolumeclaim %q is being deleted", c.Name))
		}
		out = append(out, c)
	}
	return out, nil
}

// ClaimName is the claim a pod's volume uses: its persistentVolumeClaim,
// or the claim <pod>-<volume> of a generic ephemeral volume; "" for
// other volumes.
func ClaimName(pod *v1.Pod, vol *v1.Volume) (name string, ephemeral bool) {
	switch {
	case vol.PersistentVolumeClaim != nil:
		return vol.PersistentVolumeClaim.ClaimName, false
	case vol.Ephemeral != nil:
		return pod.Name + "-" + vol.Name, true
	}
	return "", false
}

// bound reports whether the claim is bound to its volume. Upstream reads
// the volume controller's bind-completed annotation; a claim whose status
// says Bound counts too, for clusters where binding is written directly.
func bound(c *v1.PersistentVolumeClaim) bool {
	if c.Spec.VolumeName == "" {
		return false
	}
	_, done := c.Annotations[volume.AnnBindCompleted]
	return done || c.Status.Phase == v1.ClaimBound
}

// delayBinding is upstream's IsDelayBindingMode over the Lister: no class
// or a missing class binds immediately.
func (pl *Plugin) delayBinding(c *v1.PersistentVolumeClaim) (bool, error) {
	name := volume.GetPersistentVolumeClaimClass(c)
	if name == "" {
		return false, nil
	}
	class, err := pl.Lister.Class(name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get storageclass %q: %w", name, err)
	}
	if class.VolumeBindingMode == nil {
		return false, fmt.Errorf("VolumeBindingMode not set for StorageClass %q", name)
	}
	return *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer, nil
}

// Filter implements framework.FilterPlugin. No eviction changes a
// volume's topology, so every rejection is UnschedulableAndUnresolvable.
func (*Plugin) Filter(_ context.Context, cs *framework.CycleState, _ *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	v, ok := cs.Read(stateKey)
	if !ok {
		return nil
	}
	s, ok := v.(*state)
	if !ok {
		return framework.AsStatus(errors.New("volumebinding: unexpected cycle state"))
	}
	reasons := Conflicts(s.bound, s.delayed, s.volumes, s.classes, node.Node)
	if len(reasons) == 0 {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, reasons...)
}

// Conflicts lists, in upstream's order, why node cannot host a pod whose
// bound claims have the volumes bound (nil for a missing volume) and
// whose delayed claims must find an available volume among volumes or
// be provisioned there by their class (classes by name).
func Conflicts(bound []*v1.PersistentVolume, delayed []*v1.PersistentVolumeClaim, volumes []*v1.PersistentVolume, classes map[string]*storagev1.StorageClass, node *v1.Node) []string {
	var nodeConflict, missing, bindConflict bool
	for _, pv := range bound {
		if pv == nil {
			missing = true
			continue
		}
		if volume.CheckNodeAffinity(pv, node.Labels) != nil {
			nodeConflict = true
		}
	}
	// Each claim needs a volume of its own: those taken by earlier claims
	// of the pod are excluded for the later ones.
	taken := map[string]*v1.PersistentVolume{}
	for _, c := range delayed {
		// A claim already being provisioned for a node binds there only.
		if sel, ok := c.Annotations[volume.AnnSelectedNode]; ok {
			if sel != node.Name {
				bindConflict = true
				break
			}
			continue
		}
		pv, err := volume.FindMatchingVolume(c, volumes, node, taken, true, true)
		if err != nil {
			bindConflict = true
			break
		}
		if pv == nil {
			if !Provisionable(classes[volume.GetPersistentVolumeClaimClass(c)], node) {
				bindConflict = true
				break
			}
			continue
		}
		taken[pv.Name] = pv
	}
	var reasons []string
	if nodeConflict {
		reasons = append(reasons, ErrReasonNodeConflict)
	}
	if bindConflict {
		reasons = append(reasons, ErrReasonBindConflict)
	}
	if missing {
		reasons = append(reasons, ErrReasonPVNotExist)
	}
	return reasons
}

// Provisionable reports whether a volume of class can be provisioned for
// node: the class names a provisioner and its allowedTopologies, if any,
// admit the node's labels, as upstream's checkVolumeProvisions.
func Provisionable(class *storagev1.StorageClass, node *v1.Node) bool {
	if class == nil || class.Provisioner == "" || class.Provisioner == NoProvisioner {
		return false
	}
	if len(class.AllowedTopologies) == 0 {
		return true
	}
	for _, term := range class.AllowedTopologies {
		if topologyMatches(term, node.Labels) {
			return true
		}
	}
	return false
}

func topologyMatches(term v1.TopologySelectorTerm, labels map[string]string) bool {
	for _, req := range term.MatchLabelExpressions {
		v, ok := labels[req.Key]
		if !ok || !slices.Contains(req.Values, v) {
			return false
		}
	}
	return true
}

// NoProvisioner is the provisioner of classes whose volumes an
// administrator creates.
const NoProvisioner = "kubernetes.io/no-provisioner"

// Empty is a Lister that knows no objects.
type Empty struct{}

// Claim implements Lister.
func (Empty) Claim(_, name string) (*v1.PersistentVolumeClaim, error) {
	return nil, apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name)
}

// Volume implements Lister.
func (Empty) Volume(name string) (*v1.PersistentVolume, error) {
	return nil, apierrors.NewNotFound(v1.Resource("persistentvolume"), name)
}

// Volumes implements Lister.
func (Empty) Volumes() ([]*v1.PersistentVolume, error) { return nil, nil }

// Class implements Lister.
func (Empty) Class(name string) (*storagev1.StorageClass, error) {
	return nil, apierrors.NewNotFound(storagev1.Resource("storageclass"), name)
}
