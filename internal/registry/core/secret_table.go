package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// secretTable prints secrets as upstream's `kubectl get` does.
var secretTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Type", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["type"]},
		// Upstream types DATA as a string yet fills it with an integer.
		{Name: "Data", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["data"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(s *corev1.Secret, now time.Time) []any {
		return []any{string(s.Type), int64(len(s.Data)), printers.TranslateTimestampSince(s.CreationTimestamp, now)}
	}),
}

// secretFields lists the fields a field selector over secrets may name.
var secretFields = registry.TypedFields(func(s *corev1.Secret) fields.Set {
	return fields.Set{"type": string(s.Type)}
})
