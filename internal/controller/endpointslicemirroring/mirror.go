// Package endpointslicemirroring mirrors the Endpoints objects users keep
// for Services without a selector into EndpointSlices, as upstream's
// endpointslicemirroring controller does, so that slice consumers (the
// service proxy, DNS) see them too.
package endpointslicemirroring

import (
	"net"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orca-project/orca/internal/controller/endpointslice"
)

const (
	// ControllerName is the value of the managed-by label on mirrored
	// slices.
	ControllerName = "endpointslicemirroring-controller.k8s.io"
	// MaxEndpointsPerSubset is upstream's default
	// --mirroring-max-endpoints-per-subset: addresses beyond it in one
	// subset are not mirrored.
	MaxEndpointsPerSubset = 1000
	// leaderAnnotation marks Endpoints used as a leader-election lock,
	// which are not endpoints at all.
	leaderAnnotation = "control-plane.alpha.kubernetes.io/leader"
)

// ShouldMirror reports whether an Endpoints object is mirrored: not when
// it opts out with endpointslice.kubernetes.io/skip-mirror=true, nor when
// it is a leader-election lock.
func ShouldMirror(ep *v1.Endpoints) bool {
	if ep == nil || ep.Labels[discoveryv1.LabelSkipMirror] == "true" {
		return false
	}
	_, leader := ep.Annotations[leaderAnnotation]
	return !leader
}

var endpointsGVK = schema.GroupVersionKind{Version: "v1", Kind: "Endpoints"}

// Owner describes the slices mirrored from ep: its labels with the
// service name and manager set, its annotations but the trigger time and
// kubectl's last-applied configuration, owned by the Endpoints object.
func Owner(ep *v1.Endpoints) endpointslice.Owner {
	labels := map[string]string{}
	for k, v := range ep.Labels {
		labels[k] = v
	}
	labels[discoveryv1.LabelServiceName] = ep.Name
	labels[discoveryv1.LabelManagedBy] = ControllerName
	annotations := map[string]string{}
	for k, v := range ep.Annotations {
		if k == v1.EndpointsLastChangeTriggerTime || k == v1.LastAppliedConfigAnnotation {
			continue
		}
		annotations[k] = v
	}
	return endpointslice.Owner{Namespace: ep.Namespace, Name: ep.Name, Labels: labels, Annotations: annotations,
		Ref: *metav1.NewControllerRef(ep, endpointsGVK)}
}

// Desired groups ep's addresses by address type and ports. Invalid IPs
// are skipped; so are addresses beyond MaxEndpointsPerSubset in a subset
// (ready ones are kept first). It reports whether anything was skipped for
// that reason.
func Desired(ep *v1.Endpoints) (map[discoveryv1.AddressType]map[string]*endpointslice.Group, bool) {
	out := map[discoveryv1.AddressType]map[string]*endpointslice.Group{}
	truncated := false
	for _, s := range ep.Subsets {
		ports := make([]discoveryv1.EndpointPort, 0, len(s.Ports))
		for _, p := range s.Ports {
			name, proto, port := p.Name, p.Protocol, p.Port
			ports = append(ports, discoveryv1.EndpointPort{Name: &name, Protocol: &proto, Port: &port, AppProtocol: p.AppProtocol})
		}
		key := endpointslice.PortsKey(ports)
		n := 0
		add := func(a v1.EndpointAddress, ready bool) {
			t, ok := addressType(a.IP)
			if !ok {
				return
			}
			if n >= MaxEndpointsPerSubset {
				truncated = true
				return
			}
			n++
			if out[t] == nil {
				out[t] = map[string]*endpointslice.Group{}
			}
			g := out[t][key]
			if g == nil {
				g = &endpointslice.Group{Ports: ports, Endpoints: map[string]discoveryv1.Endpoint{}}
				out[t][key] = g
			}
			e := addressToEndpoint(a, ready)
			g.Endpoints[endpointslice.EndpointKey(e)] = e
		}
		for _, a := range s.Addresses {
			add(a, true)
		}
		for _, a := range s.NotReadyAddresses {
			add(a, false)
		}
	}
	return out, truncated
}

func addressType(ip string) (discoveryv1.AddressType, bool) {
	p := net.ParseIP(ip)
	switch {
	case p == nil:
		return "", false
	case p.To4() != nil:
		return discoveryv1.AddressTypeIPv4, true
	default:
		return discoveryv1.AddressTypeIPv6, true
	}
}

func addressToEndpoint(a v1.EndpointAddress, ready bool) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{
		Addresses:  []string{a.IP},
		Conditions: discoveryv1.EndpointConditions{Ready: &ready},
		TargetRef:  a.TargetRef,
		NodeName:   a.NodeName,
	}
	if a.Hostname != "" {
		h := a.Hostname
		e.Hostname = &h
	}
	return e
}
