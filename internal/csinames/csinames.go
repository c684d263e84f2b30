// Package csinames holds upstream's names for what the kubelet and the
// attach/detach controller make for CSI volumes, which both sides (and
// the drivers' sidecars) must compute alike.
package csinames

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// Attachment is the name of the VolumeAttachment of a volume on a node.
func Attachment(volumeID, driver, node string) string {
	sum := sha256.Sum256([]byte(volumeID + driver + node))
	return "csi-" + hex.EncodeToString(sum[:])
}

// StagingPath is a volume's staging directory below the node's CSI root.
func StagingPath(root, driver, volumeID string) string {
	sum := sha256.Sum256([]byte(volumeID))
	return filepath.Join(root, driver, hex.EncodeToString(sum[:]), "globalmount")
}

// InlineVolumeID is the handle of a pod's inline ephemeral volume.
func InlineVolumeID(podUID, volume string) string {
	sum := sha256.Sum256([]byte(podUID + volume))
	return "csi-" + hex.EncodeToString(sum[:])
}
