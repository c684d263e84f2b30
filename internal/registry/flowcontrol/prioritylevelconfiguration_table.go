package flowcontrol

import (
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// prioritylevelconfigurationTable prints levels as upstream's `kubectl
// get` does; an exempt level, or one that rejects rather than queues,
// shows <none> where it has no value. Upstream types the numeric
// columns as strings.
var prioritylevelconfigurationTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Type", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]},
		{Name: "NominalConcurrencyShares", Type: "string", Description: flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]},
		{Name: "Queues", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queues"]},
		{Name: "HandSize", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["handSize"]},
		{Name: "QueueLengthLimit", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queueLengthLimit"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(pl *flowcontrolv1.PriorityLevelConfiguration, now time.Time) []any {
		var shares, queues, handSize, limit any = "<none>", "<none>", "<none>", "<none>"
		if l := pl.Spec.Limited; l != nil {
			shares = int64(0)
			if l.NominalConcurrencyShares != nil {
				shares = int64(*l.NominalConcurrencyShares)
			}
			if q := l.LimitResponse.Queuing; q != nil {
				queues, handSize, limit = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
			}
		}
		return []any{string(pl.Spec.Type), shares, queues, handSize, limit, printers.TranslateTimestampSince(pl.CreationTimestamp, now)}
	}),
}
