package storageclass

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// storageclassTable prints storageclasses as upstream's `kubectl get` does,
// except for one thing: upstream appends " (default)" to the NAME cell of
// the default class (annotation storageclass.kubernetes.io/is-default-class,
// or its beta form, set to "true"). The server writes the NAME cell itself,
// so a Row cannot reproduce that suffix.
var storageclassTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Provisioner", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["provisioner"]},
		{Name: "ReclaimPolicy", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"]},
		{Name: "VolumeBindingMode", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"]},
		// Upstream types this as a string yet fills it with a bool.
		{Name: "AllowVolumeExpansion", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(sc *storagev1.StorageClass, now time.Time) []any {
		// Unset fields print as the values they default to.
		reclaimPolicy := string(corev1.PersistentVolumeReclaimDelete)
		if sc.ReclaimPolicy != nil {
			reclaimPolicy = string(*sc.ReclaimPolicy)
		}
		bindingMode := string(storagev1.VolumeBindingImmediate)
		if sc.VolumeBindingMode != nil {
			bindingMode = string(*sc.VolumeBindingMode)
		}
		allowExpansion := sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
		return []any{sc.Provisioner, reclaimPolicy, bindingMode, allowExpansion, printers.TranslateTimestampSince(sc.CreationTimestamp, now)}
	}),
}

// storageclassFields lists the fields a field selector over storageclasses may name.
var storageclassFields func(runtime.Object) fields.Set
