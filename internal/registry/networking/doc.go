// Package networking defines the part of networking.k8s.io/v1 Orca serves:
// ServiceCIDRs, the ranges service cluster IPs come from, and IPAddresses,
// one per allocated address. It holds their names, validation and table
// columns, and the names upstream's allocator and controllers give to the
// objects they own, which Orca's allocator and controllers share.
//
// Ingresses, IngressClasses and NetworkPolicies are not served.
package networking
