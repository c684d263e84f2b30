// Package rbac defines rbac.authorization.k8s.io/v1 roles and bindings: names, defaults, validation
// and table columns.
package rbac
