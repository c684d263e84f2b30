// Package gateway holds the Gateway API decisions of Orca's ingress: for
// the GatewayClasses of Orca's controller, their Gateways, the HTTPRoutes
// attached to them and the ReferenceGrants that let them reach across
// namespaces, Build works out the routing table the nodes serve and the
// status every one of those objects should carry.
//
// Like package route (Ingresses), the package is pure: Build is a
// function of the objects it is handed, without clients, clocks or
// random sources, so every rule of the specification is pinned by a
// table test. The nodes build the table to serve it; the ingress
// publisher builds the same to write the status; both from the same
// informer caches.
//
// # Choices where the specification leaves room
//
//   - Orca's Gateways are served by the same listeners as its Ingresses,
//     on every node: port 80 for HTTP listeners and 443 for HTTPS ones.
//     A listener on another port, or of another protocol, is not
//     accepted (PortUnavailable, UnsupportedProtocol). The Gateways of
//     a cluster share those ports and the addresses of the orca-ingress
//     Service, which are every Gateway's status.addresses: their routes
//     are merged per port, as implementations that merge Gateways do,
//     and a request is matched against every attached route of its
//     port. Gateway routes come before Ingress rules on a port.
//   - HTTPS listeners terminate TLS with their certificateRefs (Secrets
//     of type kubernetes.io/tls, another namespace's with a
//     ReferenceGrant); the certificate is chosen by SNI among the
//     listeners' hostnames, exact before wildcard, then an HTTPS
//     listener without hostname.
//   - Paths match as the specification says (Exact; PathPrefix by path
//     element); RegularExpression paths, headers and query parameters
//     match with Go's RE2 syntax over the whole value.
//   - Filters: RequestHeaderModifier, ResponseHeaderModifier (on rules
//     and on backends), RequestRedirect and URLRewrite. Others
//     (RequestMirror, CORS, ExternalAuth, ExtensionRef) make the rule
//     not accepted (UnsupportedValue), and its requests get 500.
//   - A rule whose backends are all invalid, or that has none and no
//     redirect, answers 500, as the specification requires; an invalid
//     backend among valid ones takes its share of requests as 500s.
package gateway
