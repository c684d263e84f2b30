package flowcontrol

import (
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// flowschemaTable prints flowschemas as upstream's `kubectl get` does:
// in the order requests are matched against them, and MISSINGPL from the
// Dangling condition ("?" until the config controller has set it).
// Upstream types MATCHINGPRECEDENCE as a string column holding a number.
var flowschemaTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "PriorityLevel", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]},
		{Name: "MatchingPrecedence", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["matchingPrecedence"]},
		{Name: "DistinguisherMethod", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["distinguisherMethod"]},
		printers.AgeColumn(),
		{Name: "MissingPL", Type: "string", Description: "references a broken or non-existent PriorityLevelConfiguration"},
	},
	Row: registry.TypedRow(func(fs *flowcontrolv1.FlowSchema, now time.Time) []any {
		method := "<none>"
		if fs.Spec.DistinguisherMethod != nil {
			method = string(fs.Spec.DistinguisherMethod.Type)
		}
		missing := "?"
		for _, c := range fs.Status.Conditions {
			if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
				missing = string(c.Status)
				break
			}
		}
		return []any{fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), method,
			printers.TranslateTimestampSince(fs.CreationTimestamp, now), missing}
	}),
	Less: func(a, b runtime.Object) bool {
		return MatchesBefore(a.(*flowcontrolv1.FlowSchema), b.(*flowcontrolv1.FlowSchema))
	},
}

// MatchesBefore is the order in which FlowSchemas are tried: lower
// matching precedence first, then by name.
func MatchesBefore(a, b *flowcontrolv1.FlowSchema) bool {
	if a.Spec.MatchingPrecedence != b.Spec.MatchingPrecedence {
		return a.Spec.MatchingPrecedence < b.Spec.MatchingPrecedence
	}
	return a.Name < b.Name
}
