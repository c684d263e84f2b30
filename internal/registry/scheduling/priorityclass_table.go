package scheduling

import (
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// priorityclassTable prints priorityclasses as upstream's `kubectl get` does.
var priorityclassTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Value", Type: "integer", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["value"]},
		{Name: "Global-Default", Type: "boolean", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]},
		printers.AgeColumn(),
		// Upstream leaves this at priority 0 although its printer fills it
		// only for wide output; the server always prints wide, so plain
		// `kubectl get` shows it too.
		{Name: "PreemptionPolicy", Type: "string", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"]},
	},
	Row: registry.TypedRow(func(pc *schedulingv1.PriorityClass, now time.Time) []any {
		preemptionPolicy := ""
		if pc.PreemptionPolicy != nil {
			preemptionPolicy = string(*pc.PreemptionPolicy)
		}
		return []any{int64(pc.Value), pc.GlobalDefault, printers.TranslateTimestampSince(pc.CreationTimestamp, now), preemptionPolicy}
	}),
}

// priorityclassFields lists the fields a field selector over priorityclasses may name.
var priorityclassFields func(runtime.Object) fields.Set
