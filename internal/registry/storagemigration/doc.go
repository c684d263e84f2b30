// Package storagemigration defines storagemigration.k8s.io/v1 (storage
// version migrations): names, validation and table columns. Upstream's
// v1.37 serves the API by default (StorageVersionMigrator is GA); Orca
// serves it, but runs no controller that performs migrations.
package storagemigration
