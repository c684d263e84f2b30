// Package netpol enforces NetworkPolicies on one node, in nftables, for
// the pods that run on it: a policy that selects a pod isolates it in the
// directions its policyTypes name, and then only the connections some
// selecting policy allows get through, as the NetworkPolicy API defines.
//
// The rules are a pure function of plain data (Build: the node's pods,
// every pod's address and labels, the namespaces' labels, the policies),
// golden-tested; nftplan applies the difference from the last rule set
// as one transaction, and Run feeds Build from informers.
//
// Where traffic is judged:
//
//   - In the forward hook, after the service proxy's DNAT: a connection
//     to a Service is judged by the endpoint it was sent to, as upstream
//     implementations judge it. Both ends are checked, the source pod's
//     egress on its node and the destination pod's ingress on its node;
//     a connection between two pods of one node is checked for both there.
//   - Only the first packet of a connection: established and related
//     traffic passes, so replies need no rule, and a connection allowed
//     when it began is not cut by a later policy change.
//   - Traffic between a pod and its own node is always allowed, in both
//     directions, as the API specifies (probes, the kubelet, host-network
//     pods on the node): it never crosses the forward hook.
//   - Queries to the cluster DNS service pass whatever the egress
//     policies say. Orca's cluster DNS is served by the servers
//     themselves rather than by pods a policy could select, so the usual
//     "allow DNS to kube-system" rule of a default-deny namespace could
//     not allow it.
//   - Denied packets are dropped, as most implementations do: the client
//     sees a timeout.
package netpol

import (
	"slices"

	v1 "k8s.io/api/core/v1"
)

// Pod is what the rules need of a pod.
type Pod struct {
	Namespace, Name string
	// IP is the pod's IPv4 address; pods without one are left out.
	IP     string
	Labels map[string]string
	// Ports are the containers' named ports, for policies that name
	// them.
	Ports []NamedPort
	// Local says the pod runs on this node.
	Local bool
}

// NamedPort is a container port with a name.
type NamedPort struct {
	Name     string
	Protocol v1.Protocol
	Port     int32
}

// Key is namespace/name.
func (p *Pod) Key() string { return p.Namespace + "/" + p.Name }

// PodOf is the Pod of a pod object, seen from node; ok is false for a
// pod the policies do not concern: one on the host's network (its
// address is the node's), one without an address yet, and one that has
// finished (its address may belong to another pod already).
func PodOf(p *v1.Pod, node string) (pod Pod, ok bool) {
	if p.Spec.HostNetwork || p.Status.PodIP == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
		return Pod{}, false
	}
	pod = Pod{Namespace: p.Namespace, Name: p.Name, IP: p.Status.PodIP, Labels: p.Labels, Local: p.Spec.NodeName == node}
	for _, cs := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range cs {
			for _, cp := range c.Ports {
				if cp.Name == "" {
					continue
				}
				proto := cp.Protocol
				if proto == "" {
					proto = v1.ProtocolTCP
				}
				pod.Ports = append(pod.Ports, NamedPort{Name: cp.Name, Protocol: proto, Port: cp.ContainerPort})
			}
		}
	}
	return pod, true
}

// port is the number of the pod's port named name for proto.
func (p *Pod) port(name string, proto v1.Protocol) (int32, bool) {
	i := slices.IndexFunc(p.Ports, func(np NamedPort) bool { return np.Name == name && np.Protocol == proto })
	if i < 0 {
		return 0, false
	}
	return p.Ports[i].Port, true
}
