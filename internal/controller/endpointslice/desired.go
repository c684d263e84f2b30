// Package endpointslice keeps, for every Service with a selector, the
// discovery.k8s.io/v1 EndpointSlices listing the pods it selects, as
// upstream's endpointslice controller does: at most MaxEndpointsPerSlice
// endpoints per slice, one set of slices per distinct set of resolved
// ports, updated in place so that a change to one pod rewrites one slice.
package endpointslice

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/orca-project/orca/internal/controller/controllerutil"
	"github.com/orca-project/orca/internal/controller/endpoints"
)

const (
	// ControllerName is the value of the managed-by label on the slices
	// this controller owns.
	ControllerName = "endpointslice-controller.k8s.io"
	// MaxEndpointsPerSlice is upstream's default --max-endpoints-per-slice.
	MaxEndpointsPerSlice = 100
)

// Group is the desired endpoints sharing one set of resolved ports, keyed
// by EndpointKey.
type Group struct {
	Ports     []discoveryv1.EndpointPort
	Endpoints map[string]discoveryv1.Endpoint
}

// AddressTypes are the slice address types a service gets, one per IP
// family.
func AddressTypes(svc *v1.Service) []discoveryv1.AddressType {
	fams := svc.Spec.IPFamilies
	if len(fams) == 0 {
		fams = []v1.IPFamily{endpoints.IPFamily(svc)}
	}
	var out []discoveryv1.AddressType
	for _, f := range fams {
		if f == v1.IPv6Protocol {
			out = append(out, discoveryv1.AddressTypeIPv6)
		} else {
			out = append(out, discoveryv1.AddressTypeIPv4)
		}
	}
	return out
}

// DesiredEndpoints groups the endpoints of svc's pods of one address type
// by their resolved ports (PortsKey). zone gives a node's
// topology.kubernetes.io/zone label ("" when unknown).
func DesiredEndpoints(svc *v1.Service, pods []*v1.Pod, addressType discoveryv1.AddressType, zone func(node string) string) map[string]*Group {
	family := v1.IPv4Protocol
	if addressType == discoveryv1.AddressTypeIPv6 {
		family = v1.IPv6Protocol
	}
	groups := map[string]*Group{}
	for _, pod := range pods {
		// Terminating pods stay, marked terminating, so that clients can
		// drain them.
		if !endpoints.ShouldPodBeInEndpoints(pod, true) {
			continue
		}
		ip := endpoints.PodIP(pod, family)
		if ip == "" {
			continue
		}
		ports := endpointPorts(svc, pod)
		key := PortsKey(ports)
		g := groups[key]
		if g == nil {
			g = &Group{Ports: ports, Endpoints: map[string]discoveryv1.Endpoint{}}
			groups[key] = g
		}
		ep := podToEndpoint(pod, svc, ip, zone)
		g.Endpoints[EndpointKey(ep)] = ep
	}
	return groups
}

func podToEndpoint(pod *v1.Pod, svc *v1.Service, ip string, zone func(string) string) discoveryv1.Endpoint {
	serving := controllerutil.IsPodReady(pod)
	terminating := pod.DeletionTimestamp != nil
	// Ready is never true for a terminating pod unless the service
	// publishes not-ready addresses.
	ready := svc.Spec.PublishNotReadyAddresses || (serving && !terminating)
	ep := discoveryv1.Endpoint{
		Addresses:  []string{ip},
		Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
		TargetRef:  &v1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
	}
	if pod.Spec.NodeName != "" {
		n := pod.Spec.NodeName
		ep.NodeName = &n
		if z := zone(n); z != "" {
			ep.Zone = &z
		}
	}
	if endpoints.ShouldSetHostname(pod, svc) {
		h := pod.Spec.Hostname
		ep.Hostname = &h
	}
	return ep
}

func endpointPorts(svc *v1.Service, pod *v1.Pod) []discoveryv1.EndpointPort {
	out := []discoveryv1.EndpointPort{}
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		n, err := endpoints.FindPort(pod, sp)
		if err != nil {
			continue
		}
		name, proto, num := sp.Name, sp.Protocol, int32(n)
		out = append(out, discoveryv1.EndpointPort{Name: &name, Port: &num, Protocol: &proto, AppProtocol: sp.AppProtocol})
	}
	return out
}

// PortsKey identifies a set of ports regardless of order.
func PortsKey(ports []discoveryv1.EndpointPort) string {
	keys := make([]string, 0, len(ports))
	for _, p := range ports {
		keys = append(keys, fmt.Sprintf("%s/%d/%s/%s", deref(p.Name), deref(p.Port), deref(p.Protocol), deref(p.AppProtocol)))
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

// EndpointKey identifies an endpoint across syncs, as upstream's endpoint
// hash does: by addresses, hostname and target pod, not by conditions, so
// that a readiness change updates the endpoint in place.
func EndpointKey(ep discoveryv1.Endpoint) string {
	ref := ""
	if ep.TargetRef != nil {
		ref = ep.TargetRef.Namespace + "/" + ep.TargetRef.Name
	}
	addrs := slices.Clone(ep.Addresses)
	slices.Sort(addrs)
	return strings.Join(addrs, ",") + "|" + deref(ep.Hostname) + "|" + ref
}

// Labels are the labels svc's slices carry: the service's own, the
// service name, the manager and, for headless services, the headless
// label.
func Labels(svc *v1.Service) map[string]string {
	l := maps.Clone(svc.Labels)
	if l == nil {
		l = map[string]string{}
	}
	delete(l, v1.IsHeadlessService)
	if endpoints.IsHeadless(svc) {
		l[v1.IsHeadlessService] = ""
	}
	l[discoveryv1.LabelServiceName] = svc.Name
	l[discoveryv1.LabelManagedBy] = ControllerName
	return l
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func sortEndpoints(eps []discoveryv1.Endpoint) {
	slices.SortFunc(eps, func(a, b discoveryv1.Endpoint) int { return cmp.Compare(EndpointKey(a), EndpointKey(b)) })
}
