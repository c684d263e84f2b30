package route

import (
	"maps"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Table is the routing of one IngressClass, built by Build.
type Table struct {
	// vhosts are the rule hosts, lowercased, exact or wildcard; "" holds
	// the rules without a host.
	vhosts map[string]*vhost
	// fallback is the default backend, nil if no Ingress has one.
	fallback *Match
	// certs are the certificates by TLS host, lowercased; "" holds the
	// default certificate.
	certs map[string]*TLSCert
}

// vhost is the paths of one rule host, merged across Ingresses.
type vhost struct {
	// byRule finds a path's Match while building: to refuse a second
	// claim, and to attach a canary.
	byRule map[pathRule]*Match
	// rules are byRule's keys by precedence, once built.
	rules []pathRule
}

// Match is the routing of a request: the rule that matched and the
// backends it may go to.
type Match struct {
	// Host is the rule's host, lowercased: exact, wildcard, or "" for a
	// rule without a host and for the default backend.
	Host string
	// Path and PathType are the matched path as the main Ingress wrote
	// it; both are empty for the default backend.
	Path     string
	PathType networkingv1.PathType
	// Backends are the main backend, then the canary's if there is one.
	Backends []WeightedBackend
	// CanaryHeader, if set, is the request header that sends a request to
	// the canary or keeps it away, before weights are considered; see
	// PickByHeader. CanaryHeaderValue, if set, is the value that selects
	// the canary in place of "always" and "never".
	CanaryHeader, CanaryHeaderValue string
}

// WeightedBackend is a backend with its share of the requests. The
// weights of a Match add up to the canary's weight total, 100 unless it
// says otherwise; a lone backend has weight 100.
type WeightedBackend struct {
	Backend
	Weight int
}

// Backend is a Service port an Ingress sends requests to, resolved to the
// addresses that serve it.
type Backend struct {
	// Ingress is the Ingress that named the backend.
	Ingress types.NamespacedName
	// Service is the Service, in the Ingress's namespace.
	Service types.NamespacedName
	// Port is the service port as the Ingress names it: a name, or a
	// number in decimal.
	Port string
	// Endpoints are the "ip:port" addresses of the ready endpoints, in
	// address order; none means the proxy answers 503.
	Endpoints []string
}

// fullWeight is the weight of a backend that takes every request.
const fullWeight = 100

func single(b Backend) []WeightedBackend {
	return []WeightedBackend{{Backend: b, Weight: fullWeight}}
}

// Route finds where a request for host and path goes: the paths of the
// most specific rule host (exact, then wildcard), then those of the rules
// without a host, then the default backend. host is without its port;
// path is the request's URL path, "" read as "/". False means no rule
// and no default backend: the proxy answers 404.
func (t *Table) Route(host, path string) (*Match, bool) {
	if path == "" {
		path = "/"
	}
	if vh, ok := lookupHost(t.vhosts, normalizeHost(host)); ok {
		if m := vh.match(path); m != nil {
			return m, true
		}
	}
	if m := t.vhosts[""].match(path); m != nil {
		return m, true
	}
	return t.fallback, t.fallback != nil
}

// match is the Match of the first rule, by precedence, that matches
// path; nil if none does or the vhost is nil.
func (vh *vhost) match(path string) *Match {
	if vh == nil {
		return nil
	}
	for _, r := range vh.rules {
		if r.matches(path) {
			return vh.byRule[r]
		}
	}
	return nil
}

// Hosts are the rule hosts of the table, sorted, wildcards included and
// rules without a host left out.
func (t *Table) Hosts() []string {
	hosts := slices.Sorted(maps.Keys(t.vhosts))
	return slices.DeleteFunc(hosts, func(h string) bool { return h == "" })
}
