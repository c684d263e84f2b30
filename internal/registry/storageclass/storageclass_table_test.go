package storageclass

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

func TestStorageClassTable(t *testing.T) {
	tableNow := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tableCol := printerstest.Col
	printerstest.CheckColumns(t, storageclassTable, []printerstest.Column{
		tableCol("Provisioner", "string", 0), tableCol("ReclaimPolicy", "string", 0), tableCol("VolumeBindingMode", "string", 0),
		tableCol("AllowVolumeExpansion", "string", 0), tableCol("Age", "string", 0),
	})
	printerstest.CheckRow(t, storageclassTable, &storagev1.StorageClass{Provisioner: "rancher.io/local-path"}, tableNow,
		[]any{"rancher.io/local-path", "Delete", "Immediate", false, "<unknown>"})

	retain := corev1.PersistentVolumeReclaimRetain
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	yes := true
	sc := &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(tableNow.Add(-30 * 24 * time.Hour))},
		Provisioner:          "ebs.csi.aws.com",
		ReclaimPolicy:        &retain,
		VolumeBindingMode:    &wait,
		AllowVolumeExpansion: &yes,
	}
	printerstest.CheckRow(t, storageclassTable, sc, tableNow, []any{"ebs.csi.aws.com", "Retain", "WaitForFirstConsumer", true, "30d"})
}
