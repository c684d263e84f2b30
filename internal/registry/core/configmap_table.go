package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// configmapTable prints configmaps as upstream's `kubectl get` does.
var configmapTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		// Upstream types DATA as a string yet fills it with an integer.
		{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(cm *corev1.ConfigMap, now time.Time) []any {
		return []any{int64(len(cm.Data) + len(cm.BinaryData)), printers.TranslateTimestampSince(cm.CreationTimestamp, now)}
	}),
}

// configmapFields lists the fields a field selector over configmaps may name.
var configmapFields func(runtime.Object) fields.Set
