// Package endpoints keeps, for every Service with a selector, an Endpoints
// object of the same name listing the ready and not-ready addresses of the
// pods it selects, as upstream's endpoints controller does. The pure
// functions here (which pods count, which port a named target port means on
// each pod, how subsets are packed) are shared with the EndpointSlice
// controller.
package endpoints

import (
	"fmt"
	"net"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// ShouldPodBeInEndpoints decides whether a pod is listed at all: it must
// have an IP and not have finished; a pod being deleted is listed only when
// includeTerminating (publishNotReadyAddresses for Endpoints; always for
// slices, which mark it terminating instead).
func ShouldPodBeInEndpoints(pod *v1.Pod, includeTerminating bool) bool {
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return false
	}
	if pod.Status.PodIP == "" && len(pod.Status.PodIPs) == 0 {
		return false
	}
	if !includeTerminating && pod.DeletionTimestamp != nil {
		return false
	}
	return true
}

// ShouldSetHostname reports whether the pod's hostname is published: only
// when its subdomain names this service (which is what makes
// HOSTNAME.SUBDOMAIN.NAMESPACE.svc resolvable).
func ShouldSetHostname(pod *v1.Pod, svc *v1.Service) bool {
	return pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && svc.Namespace == pod.Namespace
}

// FindPort resolves a service port's target port on one pod: a number is
// taken as is, a name is looked up among the container ports (and the
// ports of sidecar init containers) with the same protocol.
func FindPort(pod *v1.Pod, svcPort *v1.ServicePort) (int, error) {
	target := svcPort.TargetPort
	switch target.Type {
	case intstr.String:
		for _, c := range pod.Spec.Containers {
			for _, p := range c.Ports {
				if p.Name == target.StrVal && p.Protocol == svcPort.Protocol {
					return int(p.ContainerPort), nil
				}
			}
		}
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways {
				continue
			}
			for _, p := range c.Ports {
				if p.Name == target.StrVal && p.Protocol == svcPort.Protocol {
					return int(p.ContainerPort), nil
				}
			}
		}
	case intstr.Int:
		return target.IntValue(), nil
	}
	return 0, fmt.Errorf("no suitable port for manifest: %s", pod.UID)
}

// IPFamily is the address family a service's endpoints are drawn from: its
// first IP family, else that of its cluster IP, else IPv4.
func IPFamily(svc *v1.Service) v1.IPFamily {
	if len(svc.Spec.IPFamilies) > 0 {
		return svc.Spec.IPFamilies[0]
	}
	if ip := net.ParseIP(svc.Spec.ClusterIP); ip != nil && ip.To4() == nil {
		return v1.IPv6Protocol
	}
	return v1.IPv4Protocol
}

// PodIP is the pod's address of the given family, or "" when it has none.
func PodIP(pod *v1.Pod, family v1.IPFamily) string {
	ips := []string{pod.Status.PodIP}
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	for _, s := range ips {
		ip := net.ParseIP(s)
		if ip == nil {
			continue
		}
		if (ip.To4() != nil) == (family == v1.IPv4Protocol) {
			return s
		}
	}
	return ""
}

// IsHeadless is a service without a cluster IP.
func IsHeadless(svc *v1.Service) bool {
	return svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == v1.ClusterIPNone
}

// Subsets computes a service's Endpoints subsets from the pods its
// selector matches, repacked, with the number of ready and not-ready
// addresses (counted per port, as upstream logs them).
func Subsets(svc *v1.Service, pods []*v1.Pod) (subsets []v1.EndpointSubset, ready, notReady int) {
	publish := svc.Spec.PublishNotReadyAddresses
	family := IPFamily(svc)
	for _, pod := range pods {
		if !ShouldPodBeInEndpoints(pod, publish) {
			continue
		}
		ip := PodIP(pod, family)
		if ip == "" {
			continue
		}
		addr := v1.EndpointAddress{
			IP:        ip,
			NodeName:  &pod.Spec.NodeName,
			TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		}
		if ShouldSetHostname(pod, svc) {
			addr.Hostname = pod.Spec.Hostname
		}
		isReady := publish || controllerutil.IsPodReady(pod)
		add := func(ports []v1.EndpointPort) {
			s := v1.EndpointSubset{Ports: ports}
			if isReady {
				s.Addresses = []v1.EndpointAddress{addr}
				ready++
			} else {
				s.NotReadyAddresses = []v1.EndpointAddress{addr}
				notReady++
			}
			subsets = append(subsets, s)
		}
		// A headless service may have no ports: its addresses are still
		// published (for DNS).
		if len(svc.Spec.Ports) == 0 {
			if svc.Spec.ClusterIP == v1.ClusterIPNone {
				add([]v1.EndpointPort{})
			}
			continue
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			n, err := FindPort(pod, sp)
			if err != nil {
				continue
			}
			add([]v1.EndpointPort{{Name: sp.Name, Port: int32(n), Protocol: sp.Protocol, AppProtocol: sp.AppProtocol}})
		}
	}
	return RepackSubsets(subsets), ready, notReady
}
