package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// NameLabel marks the Service made for a Gateway with the Gateway's name,
// the label the specification asks of resources generated for a Gateway.
const NameLabel = "gateway.networking.k8s.io/gateway-name"

// ServiceName is the name of the Service that gives the Gateway named
// gateway addresses of its own, in the Gateway's namespace: orca-gateway-
// and the name, cut and completed by a hash of the whole name when that
// would pass the 63 characters of a Service name.
func ServiceName(gateway string) string {
	const prefix, limit = "orca-gateway-", 63
	name := prefix + gateway
	if len(name) <= limit {
		return name
	}
	sum := sha256.Sum256([]byte(gateway))
	hash := hex.EncodeToString(sum[:4])
	return name[:limit-len(hash)-1] + "-" + hash
}

// OwnAddresses are the addresses of the Gateway named gateway that are
// its alone: the load balancer addresses of its Service (svc, nil when
// missing or not the Gateway's) that the shared ones do not include (a
// pool's address; without a pool the Service gets the nodes', which are
// shared), then its cluster IP. IPv4 only, as the nodes find a
// connection's original destination for IPv4 alone.
func OwnAddresses(svc *corev1.Service, gateway string, shared []string) []string {
	if svc == nil || svc.Labels[NameLabel] != gateway || svc.DeletionTimestamp != nil {
		return nil
	}
	var out []string
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if ip, err := netip.ParseAddr(in.IP); err == nil && ip.Is4() && !slices.Contains(shared, in.IP) && !slices.Contains(out, in.IP) {
			out = append(out, in.IP)
		}
	}
	if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil && ip.Is4() && !slices.Contains(out, ip.String()) {
		out = append(out, ip.String())
	}
	return out
}
