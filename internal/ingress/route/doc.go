// Package route holds the routing decision of Orca's ingress controller:
// for the networking.k8s.io/v1 Ingresses of one IngressClass, which
// backend serves a request for a host and path, and which certificate
// answers a TLS server name.
//
// The package is pure. Build is a function of the objects it is handed:
// no clients, informers, clocks or random sources, so each rule of the
// Ingress specification is pinned by a table test, and a Table can be
// rebuilt from scratch and swapped whenever an informer reports a change.
// The caller does the I/O; its loop looks like this:
//
//	for range changed {
//		table, problems := route.Build(route.Input{Class: "orca", ...}) // from the informer caches
//		current.Store(table) // an atomic.Pointer[route.Table] the proxy reads
//		for _, p := range problems {
//			recorder.Event(ingress(p.Ingress), corev1.EventTypeWarning, "Routing", p.Message)
//		}
//	}
//
// and the proxy, for each request:
//
//	m, ok := current.Load().Route(hostWithoutPort, r.URL.Path)
//	if !ok {
//		// 404: no rule and no default backend
//	}
//	b := m.PickByHeader(r.Header.Get, rand.Float64())
//	if len(b.Endpoints) == 0 {
//		// 503: the backend exists but nothing is ready to serve it
//	}
//
// and for each TLS handshake, Certificate(hello.ServerName).
//
// A Table is read-only once built and safe for concurrent use; the
// Matches, Backends and certificates it hands out are shared and must not
// be modified.
//
// # Choices where the specification leaves room
//
//   - Hosts: the most specific rule host is chosen, an exact host over a
//     wildcard (which covers exactly one DNS label). Only that host's
//     paths are tried, then those of the rules without a host, then the
//     default backend. The specification goes from the host's paths
//     straight to the default backend; Orca lets catch-all rules serve as
//     well, so that a host-specific Ingress does not hide a cluster-wide
//     catch-all one.
//   - Hosts compare case-insensitively and without a trailing dot, as
//     nginx does. Route takes a host without its port: the caller strips
//     it from the Host header (net.SplitHostPort), as a TLS server name
//     never has one.
//   - Paths are matched as given: the caller decides whether to clean
//     them first. ImplementationSpecific paths match as Prefix paths, as
//     Traefik and others do, and an empty one as "/". Precedence goes to
//     the longest path, a Prefix path counted without its trailing slash,
//     then to Exact over Prefix.
//   - The same host, path and matching (Exact, or Prefix for both Prefix
//     and ImplementationSpecific) in two Ingresses is a conflict: the
//     oldest Ingress (by creation, then namespace and name) keeps it, as
//     in ingress-nginx, and the other gets a Problem. So does a second
//     default backend, and a second certificate for one TLS host.
//   - Backends resolve to ready endpoint addresses, not the cluster IP.
//     A missing Service or port gives a Problem and a Backend with no
//     endpoints, which the proxy answers with 503, as for a Service with
//     no ready endpoint. An ExternalName Service is one endpoint, its
//     external name and service port, for the proxy to resolve.
//   - Canaries follow ingress-nginx's annotations: canary, canary-weight,
//     canary-weight-total, canary-by-header and canary-by-header-value.
//     canary-by-header-pattern and canary-by-cookie are reported and
//     ignored. A canary contributes only alternative backends for paths
//     of main Ingresses; its default backend and TLS section are ignored.
//   - TLS: an entry without hosts gives the default certificate, served
//     for any name no entry lists, as the specification's "wildcard host
//     of the load balancer". An entry without secretName asks for the
//     controller's own default certificate, which Orca does not have: it
//     is reported and ignored.
package route
