// Package proxy is the node's service proxy (kube-proxy's role): it turns
// Services and EndpointSlices into an nftables table that DNATs service
// addresses to endpoints, following upstream kube-proxy's nftables mode.
// The rules are a pure function of plain data (Build); Syncer applies the
// difference between two rule sets as one nftables transaction, and
// Proxier feeds it from informers.
package proxy

import (
	"fmt"
	"time"
)

// ServicePort is one port of one Service, as the proxy needs it.
type ServicePort struct {
	Namespace, Name string
	// PortName is the service port's name ("" for a single unnamed port).
	PortName string
	Protocol string // "tcp", "udp" or "sctp"
	// ClusterIP is empty for services the proxy does not route by cluster
	// IP (headless ones are dropped before they get here).
	ClusterIP       string
	Port            int32
	NodePort        int32
	ExternalIPs     []string
	LoadBalancerIPs []string
	// ExternalLocal and InternalLocal are the Local traffic policies.
	ExternalLocal, InternalLocal bool
	// AffinityTimeout is non-zero for sessionAffinity ClientIP.
	AffinityTimeout time.Duration
	// PreferClose asks for same-node endpoints when any exists.
	PreferClose         bool
	HealthCheckNodePort int32
	// SourceRanges are the IPv4 blocks a load balancer IP may be reached
	// from (loadBalancerSourceRanges); none means anyone.
	SourceRanges []string
	Endpoints    []Endpoint
}

// Key names the service port as upstream does: namespace/name:port.
func (s *ServicePort) Key() string {
	return fmt.Sprintf("%s/%s:%s", s.Namespace, s.Name, s.PortName)
}

// chainBase is upstream's servicePortChainNameBase input.
func (s *ServicePort) chainBase() string {
	return s.Namespace + "/" + s.Name + "/" + s.Protocol + "/" + s.PortName
}

// Endpoint is one address of a service port.
type Endpoint struct {
	IP   string
	Port int32
	// Local is true when the endpoint runs on this node (its nodeName);
	// Near also when a forNodes hint names this node (for PreferClose).
	Local, Near                 bool
	Ready, Serving, Terminating bool
}

func (e Endpoint) String() string { return fmt.Sprintf("%s:%d", e.IP, e.Port) }

// Config is what the rules depend on besides the services.
type Config struct {
	// ClusterCIDR is the pod range: traffic to a service from outside it
	// is masqueraded (upstream's masquerade-all off with a local detector).
	ClusterCIDR string
	// ServiceCIDR, when set, drops traffic to unallocated cluster IPs.
	ServiceCIDR string
	// NodeIP is the node's address: a load balancer whose source ranges
	// cover it also lets in traffic from the node itself.
	NodeIP string
}
