package resource

import (
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// The tables below print as upstream's `kubectl get` does.

// ageTable is upstream's printer for device classes and claim templates:
// an AGE column after the name (typed string, unlike the default table's).
var ageTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{printers.AgeColumn()},
	Row: func(obj runtime.Object, now time.Time) []any {
		return []any{printers.TranslateTimestampSince(obj.(metav1.Object).GetCreationTimestamp(), now)}
	},
}

var resourceclaimTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "State", Type: "string", Description: "A summary of the current state (allocated, pending, reserved, etc.)."},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(c *resourcev1.ResourceClaim, now time.Time) []any {
		return []any{claimState(c), printers.TranslateTimestampSince(c.CreationTimestamp, now)}
	}),
}

// claimState is upstream's summary: deleted, then pending or allocated
// (and reserved when pods use the claim).
func claimState(c *resourcev1.ResourceClaim) string {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	switch {
	case c.Status.Allocation == nil && c.DeletionTimestamp == nil:
		states = append(states, "pending")
	case c.Status.Allocation != nil:
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	}
	return strings.Join(states, ",")
}

var resourcesliceTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Node", Type: "string", Description: resourcev1.ResourceSliceSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Driver", Type: "string", Description: resourcev1.ResourceSliceSpec{}.SwaggerDoc()["driver"]},
		{Name: "Pool", Type: "string", Description: resourcev1.ResourcePool{}.SwaggerDoc()["name"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(s *resourcev1.ResourceSlice, now time.Time) []any {
		node := ""
		if s.Spec.NodeName != nil {
			node = *s.Spec.NodeName
		}
		return []any{node, s.Spec.Driver, s.Spec.Pool.Name, printers.TranslateTimestampSince(s.CreationTimestamp, now)}
	}),
}

// devicetaintruleTable shows the taint, not the selector, which may be
// long; an administrator names the rule for what it selects.
var devicetaintruleTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Key", Type: "string", Description: resourcev1.DeviceTaint{}.SwaggerDoc()["key"]},
		{Name: "Value", Type: "string", Description: resourcev1.DeviceTaint{}.SwaggerDoc()["value"]},
		{Name: "Effect", Type: "string", Description: resourcev1.DeviceTaint{}.SwaggerDoc()["effect"]},
		{Name: "TimeAdded", Type: "string", Description: resourcev1.DeviceTaint{}.SwaggerDoc()["timeAdded"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(r *resourcev1.DeviceTaintRule, now time.Time) []any {
		added := ""
		if t := r.Spec.Taint.TimeAdded; t != nil {
			added = printers.TranslateTimestampSince(*t, now)
		}
		t := r.Spec.Taint
		return []any{t.Key, t.Value, string(t.Effect), added, printers.TranslateTimestampSince(r.CreationTimestamp, now)}
	}),
}
