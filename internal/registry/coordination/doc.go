// Package coordination defines coordination.k8s.io/v1 (leases): names, defaults, validation
// and table columns.
package coordination
