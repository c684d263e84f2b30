package csinames

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// The names are upstream's, which external sidecars and other nodes
// compute too; a literal pins the attachment name.
func TestNames(t *testing.T) {
	if got := Attachment("vol-1", "hostpath.csi.k8s.io", "node-1"); got != "csi-a5a2e67339ab5660a390dc86be397e784322823ff01f40cf2c01a72c3cab1374" {
		t.Errorf("Attachment = %s", got)
	}
	sum := sha256.Sum256([]byte("vol-1"))
	if got := StagingPath("/r", "d", "vol-1"); got != "/r/d/"+hex.EncodeToString(sum[:])+"/globalmount" {
		t.Errorf("StagingPath = %s", got)
	}
	if InlineVolumeID("uid", "v") == InlineVolumeID("uid", "w") || InlineVolumeID("uid", "v") != InlineVolumeID("uid", "v") {
		t.Error("inline volume IDs are per pod and volume, and stable")
	}
}
