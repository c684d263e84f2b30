package scheduling

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

func TestPriorityClassTable(t *testing.T) {
	tableNow := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tableCol := printerstest.Col
	printerstest.CheckColumns(t, priorityclassTable, []printerstest.Column{
		tableCol("Value", "integer", 0), tableCol("Global-Default", "boolean", 0), tableCol("Age", "string", 0), tableCol("PreemptionPolicy", "string", 0),
	})
	never := corev1.PreemptNever
	pc := &schedulingv1.PriorityClass{
		ObjectMeta:       metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(tableNow.Add(-time.Hour))},
		Value:            2000001000,
		GlobalDefault:    true,
		PreemptionPolicy: &never,
	}
	printerstest.CheckRow(t, priorityclassTable, pc, tableNow, []any{int64(2000001000), true, "60m", "Never"})
	printerstest.CheckRow(t, priorityclassTable, &schedulingv1.PriorityClass{Value: -5}, tableNow, []any{int64(-5), false, "<unknown>", ""})
}
