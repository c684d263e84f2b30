// Package discovery defines discovery.k8s.io/v1 (endpoint slices): names, defaults, validation
// and table columns.
package discovery
