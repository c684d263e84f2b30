package flowcontrol

import (
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

var tableNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestFlowSchemaTable(t *testing.T) {
	col := printerstest.Col
	printerstest.CheckColumns(t, flowschemaTable, []printerstest.Column{
		col("PriorityLevel", "string", 0), col("MatchingPrecedence", "string", 0), col("DistinguisherMethod", "string", 0),
		col("Age", "string", 0), col("MissingPL", "string", 0),
	})
	fs := SuggestedFlowSchemas()[0].DeepCopy()
	fs.CreationTimestamp = metav1.NewTime(tableNow.Add(-2 * time.Hour))
	printerstest.CheckRow(t, flowschemaTable, fs, tableNow, []any{"system", int64(500), "ByUser", "120m", "?"})
	fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "Dangling", Status: flowcontrolv1.ConditionFalse}}
	printerstest.CheckCells(t, flowschemaTable, fs, tableNow, map[string]any{"MissingPL": "False"})
	probes := SuggestedFlowSchemas()[2]
	printerstest.CheckCells(t, flowschemaTable, probes, tableNow, map[string]any{"DistinguisherMethod": "<none>"})

	// Lists print in matching order.
	a, b, c := schema("b", nil), schema("a", nil), schema("z", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 10 })
	if !flowschemaTable.Less(c, a) || !flowschemaTable.Less(b, a) || flowschemaTable.Less(a, b) {
		t.Error("rows are not ordered by matching precedence, then name")
	}
}

func TestPriorityLevelConfigurationTable(t *testing.T) {
	col := printerstest.Col
	printerstest.CheckColumns(t, prioritylevelconfigurationTable, []printerstest.Column{
		col("Type", "string", 0), col("NominalConcurrencyShares", "string", 0), col("Queues", "string", 0),
		col("HandSize", "string", 0), col("QueueLengthLimit", "string", 0), col("Age", "string", 0),
	})
	mand := MandatoryPriorityLevelConfigurations()
	printerstest.CheckRow(t, prioritylevelconfigurationTable, mand[1], tableNow, []any{"Exempt", "<none>", "<none>", "<none>", "<none>", "<unknown>"})
	printerstest.CheckRow(t, prioritylevelconfigurationTable, mand[0], tableNow, []any{"Limited", int64(5), "<none>", "<none>", "<none>", "<unknown>"})
	printerstest.CheckRow(t, prioritylevelconfigurationTable, SuggestedPriorityLevelConfigurations()[2], tableNow, []any{"Limited", int64(10), int64(16), int64(4), int64(50), "<unknown>"})
}
