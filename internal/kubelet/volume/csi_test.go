package volume

import (
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

func TestCSIDecisions(t *testing.T) {
	driver := func(policy storagev1.FSGroupPolicy, attach *bool, modes ...storagev1.VolumeLifecycleMode) *storagev1.CSIDriver {
		return &storagev1.CSIDriver{Spec: storagev1.CSIDriverSpec{FSGroupPolicy: &policy, AttachRequired: attach, VolumeLifecycleModes: modes}}
	}
	rwo := csiSource{fsType: "ext4", accessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}}
	rwx := csiSource{fsType: "ext4", accessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}}
	noFS := csiSource{accessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}}
	for _, tc := range []struct {
		name   string
		driver *storagev1.CSIDriver
		src    csiSource
		want   bool
	}{
		{"no driver object, rwo with fsType", nil, rwo, true},
		{"default policy, rwx", nil, rwx, false},
		{"default policy, no fsType", nil, noFS, false},
		{"File", driver(storagev1.FileFSGroupPolicy, nil), rwx, true},
		{"None", driver(storagev1.NoneFSGroupPolicy, nil), rwo, false},
	} {
		if got := appliesFSGroup(tc.driver, tc.src); got != tc.want {
			t.Errorf("appliesFSGroup %s = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !attachRequired(nil) || !attachRequired(driver(storagev1.FileFSGroupPolicy, nil)) || attachRequired(driver(storagev1.FileFSGroupPolicy, ptr(false))) {
		t.Error("attachRequired: required without a driver object or a setting, not when false")
	}
	if supportsMode(nil, storagev1.VolumeLifecycleEphemeral) || !supportsMode(nil, storagev1.VolumeLifecyclePersistent) ||
		!supportsMode(driver(storagev1.FileFSGroupPolicy, nil, storagev1.VolumeLifecycleEphemeral), storagev1.VolumeLifecycleEphemeral) {
		t.Error("supportsMode: Persistent by default, Ephemeral when listed")
	}
	for modes, want := range map[string]csipb.VolumeCapability_AccessMode_Mode{
		"ReadWriteOnce":              csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
		"ReadWriteOncePod":           csipb.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER,
		"ReadWriteMany":              csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER,
		"ReadOnlyMany":               csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY,
		"ReadWriteOnce,ReadOnlyMany": csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
	} {
		var src csiSource
		for _, m := range strings.Split(modes, ",") {
			src.accessModes = append(src.accessModes, v1.PersistentVolumeAccessMode(m))
		}
		src.mountFlags = []string{"noatime"}
		c := volumeCapability(src)
		if c.AccessMode.Mode != want || c.GetMount().MountFlags[0] != "noatime" {
			t.Errorf("capability of %s = %v", modes, c)
		}
	}
}
