// Package storage defines the storage.k8s.io/v1 resources that describe
// CSI drivers and their volumes: CSIDrivers, CSINodes (the drivers
// registered on each node), CSIStorageCapacities, VolumeAttachments and
// VolumeAttributesClasses. It holds their names, defaults, validation
// (upstream's, translated onto the v1 types, with the messages and field
// paths upstream reports) and table columns. StorageClasses, the group's
// first resource, live in internal/registry/storageclass.
package storage
