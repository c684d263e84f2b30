package core

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// betaStorageClassAnnotation predates spec.storageClassName and still
// overrides it wherever upstream reads a volume's class.
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

// accessModesString abbreviates access modes in a fixed order (RWO, ROX,
// RWX, RWOP) regardless of how they were listed, without duplicates.
func accessModesString(modes []corev1.PersistentVolumeAccessMode) string {
	has := map[corev1.PersistentVolumeAccessMode]bool{}
	for _, m := range modes {
		has[m] = true
	}
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{
		{corev1.ReadWriteOnce, "RWO"},
		{corev1.ReadOnlyMany, "ROX"},
		{corev1.ReadWriteMany, "RWX"},
		{corev1.ReadWriteOncePod, "RWOP"},
	} {
		if has[m.mode] {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}
