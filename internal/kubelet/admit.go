package kubelet

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

// Upstream's reason and message when a pod's host ports are taken on the
// node (the NodePorts predicate of the kubelet's admission).
const (
	nodePortsReason  = "NodePorts"
	nodePortsMessage = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
)

// hostPort is one port a pod takes on the node.
type hostPort struct {
	protocol v1.Protocol
	ip       string
	port     int32
}

// hostPorts lists the node ports a pod asks for; a port without a host IP
// takes every address, as 0.0.0.0.
func hostPorts(pod *v1.Pod) []hostPort {
	var out []hostPort
	add := func(cs []v1.Container) {
		for _, c := range cs {
			for _, p := range c.Ports {
				if p.HostPort <= 0 {
					continue
				}
				proto := p.Protocol
				if proto == "" {
					proto = v1.ProtocolTCP
				}
				ip := p.HostIP
				if ip == "" {
					ip = "0.0.0.0"
				}
				out = append(out, hostPort{proto, ip, p.HostPort})
			}
		}
	}
	add(pod.Spec.InitContainers)
	add(pod.Spec.Containers)
	return out
}

// hostPortsConflict reports whether pod asks for a node port one of the
// admitted pods holds: same protocol and port, and the same address or
// either of them on every address.
func hostPortsConflict(pod *v1.Pod, admitted []*v1.Pod) bool {
	want := hostPorts(pod)
	if len(want) == 0 {
		return false
	}
	for _, other := range admitted {
		for _, h := range hostPorts(other) {
			for _, w := range want {
				if w.protocol == h.protocol && w.port == h.port && (w.ip == h.ip || w.ip == "0.0.0.0" || h.ip == "0.0.0.0") {
					return true
				}
			}
		}
	}
	return false
}

// admit is the kubelet's admission of a pod it has not started yet: a pod
// whose host ports another running pod holds, or that Config.Admit
// refuses (node pressure), is rejected, failed with upstream's reason
// and message, so that its controller can place it again. A pod the runtime already holds (a restarted kubelet) was
// admitted before.
func (k *Kubelet) admit(ctx context.Context, pod *v1.Pod, rtp *podRuntime) (rejected bool, again time.Duration) {
	k.mu.Lock()
	if k.admitted[pod.UID] || (rtp != nil && len(rtp.Sandboxes) > 0) {
		k.admitted[pod.UID] = true
		k.mu.Unlock()
		return false, 0
	}
	var others []*v1.Pod
	for uid, p := range k.pods {
		if uid != pod.UID && k.admitted[uid] && p.DeletionTimestamp == nil && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			others = append(others, p)
		}
	}
	conflict := hostPortsConflict(pod, others)
	reason, message := nodePortsReason, nodePortsMessage
	if !conflict && k.cfg.Admit != nil {
		var ok bool
		if ok, reason, message = k.cfg.Admit(pod); !ok {
			conflict = true
		}
	}
	if !conflict {
		k.admitted[pod.UID] = true
	}
	k.mu.Unlock()
	if !conflict {
		return false, 0
	}
	k.event(pod, v1.EventTypeWarning, reason, message)
	k.sendStatus(ctx, pod, false, &podstatus.Failure{Reason: reason, Message: "Pod was rejected: " + message})
	// Until the Failed phase is stored, the next sync comes back here.
	return true, time.Second
}

func (k *Kubelet) forgetAdmission(uid types.UID) {
	k.mu.Lock()
	delete(k.admitted, uid)
	k.mu.Unlock()
}
