// Package storageclass defines storage.k8s.io/v1 (storage classes): names, defaults, validation
// and table columns.
package storageclass
