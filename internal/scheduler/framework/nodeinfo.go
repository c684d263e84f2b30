package framework

import (
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// HostPortKey identifies a claimed host port. An empty or 0.0.0.0 IP
// claims the port on every address.
type HostPortKey struct {
	IP       string
	Protocol v1.Protocol
	Port     int32
}

// NodeInfo is a node and the pods bound (or assumed) to it, with their
// requests summed so that a fit check costs O(resources), not O(pods).
type NodeInfo struct {
	Node *v1.Node
	// Unschedulable and Taints copy the node's spec next to the sums:
	// filters read them for every node in every cycle, and reaching into
	// the large Node object for them was a cache miss each time (5% of the
	// CPU of a 5,000-node run).
	Unschedulable bool
	Taints        []v1.Taint
	Pods          []*PodInfo
	// PodsWithAffinity have terms that weigh on scoring other pods;
	// PodsWithRequiredAntiAffinity have a required anti-affinity term.
	PodsWithAffinity             []*PodInfo
	PodsWithRequiredAntiAffinity []*PodInfo

	Allocatable Resource
	// Requested sums the pods' requests; NonZeroRequested counts pods
	// without cpu/memory requests at the scoring defaults.
	Requested        Resource
	NonZeroRequested Resource
	UsedPorts        map[HostPortKey]struct{}

	// gen changes whenever the node or its pods change; memo holds answers
	// computed at a generation (see memo.go).
	gen  uint64
	memo map[string]memoEntry
}

// genCounter hands out generations; global so that a node removed and
// re-added never reuses a generation its stale memo could match.
var genCounter atomic.Uint64

// NewNodeInfo returns a NodeInfo for node with no pods.
func NewNodeInfo(node *v1.Node) *NodeInfo {
	ni := &NodeInfo{}
	ni.SetNode(node)
	return ni
}

// SetNode sets or replaces the node object.
func (ni *NodeInfo) SetNode(node *v1.Node) {
	ni.Node = node
	ni.gen = genCounter.Add(1)
	if node != nil {
		ni.Unschedulable, ni.Taints = node.Spec.Unschedulable, node.Spec.Taints
		ni.Allocatable = NewResource(node.Status.Allocatable)
	}
}

// Name returns the node's name ("" for a placeholder).
func (ni *NodeInfo) Name() string {
	if ni.Node == nil {
		return ""
	}
	return ni.Node.Name
}

// AddPod accounts for a pod on the node.
func (ni *NodeInfo) AddPod(pi *PodInfo) {
	ni.Pods = append(ni.Pods, pi)
	if pi.AffectsScoring() {
		ni.PodsWithAffinity = append(ni.PodsWithAffinity, pi)
	}
	if len(pi.RequiredAntiAffinity) > 0 {
		ni.PodsWithRequiredAntiAffinity = append(ni.PodsWithRequiredAntiAffinity, pi)
	}
	ni.account(pi, 1)
}

// RemovePod removes the pod with uid; it reports whether it was there.
func (ni *NodeInfo) RemovePod(uid types.UID) bool {
	idx := indexOf(ni.Pods, uid)
	if idx < 0 {
		return false
	}
	pi := ni.Pods[idx]
	ni.Pods = removeAt(ni.Pods, idx)
	if i := indexOf(ni.PodsWithAffinity, uid); i >= 0 {
		ni.PodsWithAffinity = removeAt(ni.PodsWithAffinity, i)
	}
	if i := indexOf(ni.PodsWithRequiredAntiAffinity, uid); i >= 0 {
		ni.PodsWithRequiredAntiAffinity = removeAt(ni.PodsWithRequiredAntiAffinity, i)
	}
	ni.account(pi, -1)
	return true
}

func (ni *NodeInfo) account(pi *PodInfo, sign int64) {
	ni.gen = genCounter.Add(1)
	ni.Requested.Add(pi.Requests, sign)
	ni.NonZeroRequested.MilliCPU += sign * pi.NonZeroCPU
	ni.NonZeroRequested.Memory += sign * pi.NonZeroMem
	for _, p := range pi.HostPorts {
		k := hostPortKey(p)
		if sign > 0 {
			if ni.UsedPorts == nil {
				ni.UsedPorts = map[HostPortKey]struct{}{}
			}
			ni.UsedPorts[k] = struct{}{}
		} else {
			delete(ni.UsedPorts, k)
		}
	}
}

func hostPortKey(p v1.ContainerPort) HostPortKey {
	ip := p.HostIP
	if ip == "" {
		ip = "0.0.0.0"
	}
	proto := p.Protocol
	if proto == "" {
		proto = v1.ProtocolTCP
	}
	return HostPortKey{IP: ip, Protocol: proto, Port: p.HostPort}
}

// PortConflict reports whether p collides with a port in use: the same
// protocol and port, on the same IP or where either side is 0.0.0.0.
func (ni *NodeInfo) PortConflict(p v1.ContainerPort) bool {
	want := hostPortKey(p)
	for used := range ni.UsedPorts {
		if used.Port != want.Port || used.Protocol != want.Protocol {
			continue
		}
		if used.IP == want.IP || used.IP == "0.0.0.0" || want.IP == "0.0.0.0" {
			return true
		}
	}
	return false
}

// Clone copies the node's accounting so preemption can remove pods
// from the copy without touching the snapshot.
func (ni *NodeInfo) Clone() *NodeInfo {
	c := &NodeInfo{
		Node:                         ni.Node,
		Unschedulable:                ni.Unschedulable,
		Taints:                       ni.Taints,
		Pods:                         append([]*PodInfo(nil), ni.Pods...),
		PodsWithAffinity:             append([]*PodInfo(nil), ni.PodsWithAffinity...),
		PodsWithRequiredAntiAffinity: append([]*PodInfo(nil), ni.PodsWithRequiredAntiAffinity...),
		Allocatable:                  ni.Allocatable.Clone(),
		Requested:                    ni.Requested.Clone(),
		NonZeroRequested:             ni.NonZeroRequested.Clone(),
		gen:                          genCounter.Add(1),
	}
	if ni.UsedPorts != nil {
		c.UsedPorts = make(map[HostPortKey]struct{}, len(ni.UsedPorts))
		for k := range ni.UsedPorts {
			c.UsedPorts[k] = struct{}{}
		}
	}
	return c
}

func indexOf(pods []*PodInfo, uid types.UID) int {
	for i, p := range pods {
		if p.Pod.UID == uid {
			return i
		}
	}
	return -1
}

// removeAt removes without keeping order: order of pods on a node does
// not matter and this keeps removal O(1) after the search.
func removeAt(pods []*PodInfo, i int) []*PodInfo {
	last := len(pods) - 1
	pods[i] = pods[last]
	pods[last] = nil
	return pods[:last]
}

// Generation changes whenever the node or its pods change; plugins that
// keep results across cycles compare it to know what to recompute.
func (ni *NodeInfo) Generation() uint64 { return ni.gen }
