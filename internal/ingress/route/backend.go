package route

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
)

// resolveService resolves a Service backend of an Ingress in namespace
// to its ready endpoints. The proxy goes to the endpoints directly rather
// than through the cluster IP, so that it balances and retries over pods
// itself. problem is empty unless the Service or its port is missing;
// the Backend is returned either way, so that the path answers 503
// rather than falling through to another rule.
func resolveService(in *Input, namespace string, sb *networkingv1.IngressServiceBackend) (be Backend, problem string) {
	be = Backend{
		Service: types.NamespacedName{Namespace: namespace, Name: sb.Name},
		Port:    portLabel(sb.Port),
	}
	svc := in.Services[be.Service]
	if svc == nil {
		return be, fmt.Sprintf("service %s not found", be.Service)
	}
	sp, found := servicePort(svc, sb.Port)
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return externalName(be, svc, sp, found)
	}
	if !found {
		return be, fmt.Sprintf("service %s has no port %s", be.Service, be.Port)
	}
	be.Endpoints = readyEndpoints(in.Endpoints[be.Service], sp.Name)
	return be, ""
}

// externalName resolves a backend on an ExternalName Service, which is a
// DNS alias with no endpoints: its clients reach the external name on the
// service port, so that is the one endpoint, for the proxy to resolve. A
// port by number needs no listing in the Service, as those often list
// none; a port by name does.
func externalName(be Backend, svc *corev1.Service, sp corev1.ServicePort, found bool) (Backend, string) {
	port := int(sp.Port)
	if !found {
		if port, _ = strconv.Atoi(be.Port); port == 0 {
			return be, fmt.Sprintf("service %s has no port %s", be.Service, be.Port)
		}
	}
	be.Endpoints = []string{net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port)))}
	return be, ""
}

// portLabel is the service port as the Ingress names it.
func portLabel(p networkingv1.ServiceBackendPort) string {
	if p.Name != "" {
		return p.Name
	}
	return strconv.Itoa(int(p.Number))
}

// servicePort finds the port an Ingress backend names: by name, or by
// service port number (not target port).
func servicePort(svc *corev1.Service, p networkingv1.ServiceBackendPort) (corev1.ServicePort, bool) {
	for _, sp := range svc.Spec.Ports {
		if (p.Name != "" && sp.Name == p.Name) || (p.Name == "" && sp.Port == p.Number) {
			return sp, true
		}
	}
	return corev1.ServicePort{}, false
}

// readyEndpoints are the "ip:port" addresses, in address order and once
// each, that serve the service port named portName. The EndpointSlice
// controller names a slice's ports after the service ports and resolves
// each target port, named or numbered, into the slice's port number, so
// the name is all that links them.
func readyEndpoints(eps []*discoveryv1.EndpointSlice, portName string) []string {
	var addrs []netip.AddrPort
	for _, sl := range eps {
		port, ok := slicePort(sl, portName)
		if !ok || sl.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		for _, e := range sl.Endpoints {
			if !ready(e) {
				continue
			}
			// All addresses of an endpoint are the same pod; upstream's
			// consumers use the first.
			addr, err := netip.ParseAddr(e.Addresses[0])
			if err != nil || !addr.Is4() {
				continue
			}
			addrs = append(addrs, netip.AddrPortFrom(addr, port))
		}
	}
	// In address order, not as strings, where 10.0.0.10 precedes 10.0.0.2.
	slices.SortFunc(addrs, netip.AddrPort.Compare)
	var out []string
	for _, a := range slices.Compact(addrs) {
		out = append(out, a.String())
	}
	return out
}

// slicePort is the port number the slice gives the service port named
// name; an unnamed port matches the Service's single unnamed one.
func slicePort(sl *discoveryv1.EndpointSlice, name string) (uint16, bool) {
	for _, p := range sl.Ports {
		pname := ""
		if p.Name != nil {
			pname = *p.Name
		}
		if pname == name && p.Port != nil && *p.Port > 0 && *p.Port <= 65535 {
			return uint16(*p.Port), true
		}
	}
	return 0, false
}

// ready reports whether an endpoint takes new requests: an unset ready
// condition means ready, as upstream's consumers read it, and a
// terminating endpoint does not, whatever its other conditions say.
func ready(e discoveryv1.Endpoint) bool {
	c := e.Conditions
	return len(e.Addresses) > 0 &&
		(c.Ready == nil || *c.Ready) &&
		(c.Terminating == nil || !*c.Terminating)
}

// ServiceBackend resolves a Service port, by number, of namespace/name to
// its ready endpoints, as for an Ingress backend; the Gateway API's
// backendRefs name ports this way. problem is empty unless the Service
// or its port is missing.
func ServiceBackend(services map[types.NamespacedName]*corev1.Service, endpoints map[types.NamespacedName][]*discoveryv1.EndpointSlice, namespace, name string, port int32) (Backend, string) {
	in := &Input{Services: services, Endpoints: endpoints}
	return resolveService(in, namespace, &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: port}})
}
