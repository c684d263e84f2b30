// Package volumerestrictions is the ReadWriteOncePod half of upstream's
// VolumeRestrictions plugin: a pod whose claim has the ReadWriteOncePod
// access mode fits nowhere while another pod in the cluster (bound or
// assumed, not finished) uses that claim. Evicting that pod would help,
// so the rejection is Unschedulable, as upstream's, and preemption may
// pick the user of the claim as a victim: Filter counts the users on the
// node it is given, which in a preemption dry run is the node without its
// victims (upstream does this with PreFilter's AddPod/RemovePod).
//
// Not built: upstream's other half, the same-disk conflicts of inline GCE
// PD, AWS EBS, iSCSI and Ceph RBD volumes (node(s) had no available disk).
package volumerestrictions

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// Name is the plugin's name.
const Name = "VolumeRestrictions"

// ErrReasonReadWriteOncePodConflict is upstream's reason.
const ErrReasonReadWriteOncePodConflict = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"

// Lister reads claims; a missing claim is an error for which
// apierrors.IsNotFound is true (as client-go's listers give, whose message
// is upstream's `persistentvolumeclaim "x" not found`). The VolumeBinding
// plugin's Lister is one.
type Lister interface {
	Claim(namespace, name string) (*v1.PersistentVolumeClaim, error)
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

const stateKey = "PreFilter" + Name

// state is what PreFilter found for a pod whose ReadWriteOncePod claims
// other pods use.
type state struct {
	namespace string
	claims    sets.Set[string]
	self      types.UID
	// users counts the other pods' references to the claims over the
	// snapshot; byNode, per node.
	users  int
	byNode map[string]int
}

// PreFilter implements framework.PreFilterPlugin. A pod whose claims are
// not ReadWriteOncePod, or used by no other pod, stores nothing, so its
// Filter is one map lookup (upstream's Skip).
func (pl *Plugin) PreFilter(_ context.Context, cs *framework.CycleState, pod *framework.PodInfo, snap *framework.Snapshot) *framework.Status {
	claims, st := pl.readWriteOncePodClaims(pod.Pod)
	if st != nil || claims.Len() == 0 {
		return st
	}
	s := &state{namespace: pod.Pod.Namespace, claims: claims, self: pod.Pod.UID, byNode: map[string]int{}}
	for _, n := range snap.Nodes {
		if c := s.usersOn(n); c > 0 {
			s.byNode[n.Name()] = c
			s.users += c
		}
	}
	if s.users == 0 {
		return nil
	}
	cs.Write(stateKey, s)
	return nil
}

// readWriteOncePodClaims names the pod's claims with the ReadWriteOncePod
// access mode. A missing claim rejects the pod everywhere, with upstream's
// message.
func (pl *Plugin) readWriteOncePodClaims(pod *v1.Pod) (sets.Set[string], *framework.Status) {
	var out sets.Set[string]
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		c, err := pl.Lister.Claim(pod.Namespace, vol.PersistentVolumeClaim.ClaimName)
		switch {
		case apierrors.IsNotFound(err):
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
		case err != nil:
			return nil, framework.AsStatus(fmt.Errorf("get persistentvolumeclaim %q: %w", vol.PersistentVolumeClaim.ClaimName, err))
		}
		if slices.Contains(c.Spec.AccessModes, v1.ReadWriteOncePod) {
			if out == nil {
				out = sets.New[string]()
			}
			out.Insert(c.Name)
		}
	}
	return out, nil
}

// usersOn counts the references of the pods on node, other than the pod
// itself, to the claims.
func (s *state) usersOn(node *framework.NodeInfo) int {
	n := 0
	for _, p := range node.Pods {
		n += References(p.Pod, s.namespace, s.claims, s.self)
	}
	return n
}

// References counts pod's volumes that use one of claims in namespace; a
// pod with UID self counts nothing.
func References(pod *v1.Pod, namespace string, claims sets.Set[string], self types.UID) int {
	if pod.Namespace != namespace || pod.UID == self {
		return 0
	}
	n := 0
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim != nil && claims.Has(vol.PersistentVolumeClaim.ClaimName) {
			n++
		}
	}
	return n
}

// Filter implements framework.FilterPlugin: the claims' users elsewhere,
// as PreFilter counted them, plus those on node as given — fewer when
// preemption removed victims from it, more when nominated pods were
// added to it.
func (*Plugin) Filter(_ context.Context, cs *framework.CycleState, _ *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	v, ok := cs.Read(stateKey)
	if !ok {
		return nil
	}
	s, ok := v.(*state)
	if !ok {
		return framework.AsStatus(errors.New("volumerestrictions: unexpected cycle state"))
	}
	if s.users-s.byNode[node.Name()]+s.usersOn(node) > 0 {
		return framework.NewStatus(framework.Unschedulable, ErrReasonReadWriteOncePodConflict)
	}
	return nil
}
