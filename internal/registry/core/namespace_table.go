package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// namespaceTable prints namespaces as upstream's `kubectl get` does.
var namespaceTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Status", Type: "string", Description: "The status of the namespace"},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(ns *corev1.Namespace, now time.Time) []any {
		return []any{string(ns.Status.Phase), printers.TranslateTimestampSince(ns.CreationTimestamp, now)}
	}),
}

// namespaceFields lists the fields a field selector over namespaces may name.
// Upstream's internal field set also has a legacy "name", but its v1 field
// label conversion rejects it, so it is not selectable here either.
var namespaceFields = registry.TypedFields(func(ns *corev1.Namespace) fields.Set {
	return fields.Set{"status.phase": string(ns.Status.Phase)}
})
