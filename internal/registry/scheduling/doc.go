// Package scheduling defines scheduling.k8s.io/v1 (priority classes): names, defaults, validation
// and table columns.
package scheduling
