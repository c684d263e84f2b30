package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// limitrangeTable prints limitranges as upstream's `kubectl get` does.
// Upstream has no printer for them and falls back to the apiserver's
// default NAME / CREATED AT table.
var limitrangeTable = &registry.Table{
	Columns: printers.CreatedAtColumns(),
	Row: registry.TypedRow(func(lr *corev1.LimitRange, now time.Time) []any {
		return printers.CreatedAtRow(lr, now)
	}),
}

// limitrangeFields lists the fields a field selector over limitranges may name.
var limitrangeFields func(runtime.Object) fields.Set
