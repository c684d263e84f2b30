package proxy

import (
	"net"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// ServicePorts turns a Service and its EndpointSlices into the service
// ports the proxy programs, seen from node. Services without a cluster IP
// (headless, ExternalName) give none, as upstream skips them.
func ServicePorts(svc *v1.Service, slices []*discoveryv1.EndpointSlice, node string) []ServicePort {
	if svc.Spec.Type == v1.ServiceTypeExternalName || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == v1.ClusterIPNone {
		return nil
	}
	if net.ParseIP(svc.Spec.ClusterIP).To4() == nil {
		return nil
	}
	var out []ServicePort
	for _, p := range svc.Spec.Ports {
		sp := ServicePort{
			Namespace: svc.Namespace, Name: svc.Name, PortName: p.Name,
			Protocol:  strings.ToLower(string(p.Protocol)),
			ClusterIP: svc.Spec.ClusterIP, Port: p.Port,
			InternalLocal: svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == v1.ServiceInternalTrafficPolicyLocal,
		}
		if sp.Protocol == "" {
			sp.Protocol = "tcp"
		}
		if svc.Spec.Type == v1.ServiceTypeNodePort || svc.Spec.Type == v1.ServiceTypeLoadBalancer {
			sp.NodePort = p.NodePort
		}
		sp.ExternalIPs = ipv4s(svc.Spec.ExternalIPs)
		if svc.Spec.Type == v1.ServiceTypeLoadBalancer {
			for _, in := range svc.Status.LoadBalancer.Ingress {
				// Proxy mode asks that traffic go through the load
				// balancer, which then must not be short-circuited.
				if in.IPMode != nil && *in.IPMode == v1.LoadBalancerIPModeProxy {
					continue
				}
				sp.LoadBalancerIPs = append(sp.LoadBalancerIPs, ipv4s([]string{in.IP})...)
			}
		}
		// The external policy only means something for traffic that can
		// come from outside.
		externally := sp.NodePort != 0 || len(sp.ExternalIPs) > 0 || len(sp.LoadBalancerIPs) > 0
		sp.ExternalLocal = externally && svc.Spec.ExternalTrafficPolicy == v1.ServiceExternalTrafficPolicyLocal
		if sp.ExternalLocal && svc.Spec.Type == v1.ServiceTypeLoadBalancer {
			sp.HealthCheckNodePort = svc.Spec.HealthCheckNodePort
		}
		if len(sp.LoadBalancerIPs) > 0 {
			sp.SourceRanges = sourceRanges(svc)
		}
		if svc.Spec.SessionAffinity == v1.ServiceAffinityClientIP {
			secs := int32(v1.DefaultClientIPServiceAffinitySeconds)
			if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
				secs = *c.ClientIP.TimeoutSeconds
			}
			sp.AffinityTimeout = time.Duration(secs) * time.Second
		}
		if td := svc.Spec.TrafficDistribution; td != nil {
			sp.PreferClose = *td == v1.ServiceTrafficDistributionPreferClose || *td == "PreferSameNode" || *td == "PreferSameZone"
		}
		sp.Endpoints = endpointsFor(&sp, p, slices, node)
		out = append(out, sp)
	}
	return out
}

// endpointsFor collects the port's endpoints from every IPv4 slice, once
// per address and port.
func endpointsFor(sp *ServicePort, p v1.ServicePort, slices []*discoveryv1.EndpointSlice, node string) []Endpoint {
	var out []Endpoint
	seen := map[string]bool{}
	for _, sl := range slices {
		if sl.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		port := int32(0)
		for _, q := range sl.Ports {
			proto := v1.ProtocolTCP
			if q.Protocol != nil {
				proto = *q.Protocol
			}
			if q.Port != nil && deref(q.Name) == p.Name && proto == p.Protocol {
				port = *q.Port
			}
		}
		if port == 0 {
			continue
		}
		for _, e := range sl.Endpoints {
			if len(e.Addresses) == 0 {
				continue
			}
			ep := Endpoint{IP: e.Addresses[0], Port: port}
			if seen[ep.String()] || net.ParseIP(ep.IP).To4() == nil {
				continue
			}
			seen[ep.String()] = true
			// Upstream's defaults for absent conditions.
			ep.Ready = e.Conditions.Ready == nil || *e.Conditions.Ready
			ep.Serving = ep.Ready
			if e.Conditions.Serving != nil {
				ep.Serving = *e.Conditions.Serving
			}
			ep.Terminating = e.Conditions.Terminating != nil && *e.Conditions.Terminating
			ep.Local = e.NodeName != nil && *e.NodeName == node
			ep.Near = ep.Local
			if e.Hints != nil {
				for _, h := range e.Hints.ForNodes {
					ep.Near = ep.Near || h.Name == node
				}
			}
			out = append(out, ep)
		}
	}
	return out
}

// sourceRangesAnnotation is the older way to set the source ranges,
// read when the field is empty, as upstream does.
const sourceRangesAnnotation = "service.beta.kubernetes.io/load-balancer-source-ranges"

// sourceRanges are the service's IPv4 source ranges, canonical.
func sourceRanges(svc *v1.Service) []string {
	ranges := svc.Spec.LoadBalancerSourceRanges
	if len(ranges) == 0 {
		if a := strings.TrimSpace(svc.Annotations[sourceRangesAnnotation]); a != "" {
			ranges = strings.Split(a, ",")
		}
	}
	var out []string
	for _, r := range ranges {
		if _, n, err := net.ParseCIDR(strings.TrimSpace(r)); err == nil && n.IP.To4() != nil {
			out = append(out, n.String())
		}
	}
	return out
}

func ipv4s(ips []string) []string {
	var out []string
	for _, ip := range ips {
		if p := net.ParseIP(ip); p != nil && p.To4() != nil {
			out = append(out, p.String())
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
