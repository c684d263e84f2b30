// Package networking defines networking.k8s.io/v1: Ingresses, which route
// HTTP to services, the IngressClasses that say which controller serves
// them, NetworkPolicies, ServiceCIDRs, the ranges service cluster IPs come
// from, and IPAddresses, one per allocated address. It holds their names,
// defaults, validation (upstream's, translated onto the v1 types) and
// table columns, and the names upstream's allocator and controllers give
// to the objects they own, which Orca's allocator and controllers share.
package networking
