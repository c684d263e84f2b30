package coordination

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

func TestLeaseTable(t *testing.T) {
	tableNow := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	printerstest.CheckColumns(t, leaseTable, []printerstest.Column{printerstest.Col("Holder", "string", 0), printerstest.Col("Age", "string", 0)})
	holder := "kube-controller-manager_abc"
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(tableNow.Add(-5 * time.Second))},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
	}
	printerstest.CheckRow(t, leaseTable, l, tableNow, []any{holder, "5s"})
	printerstest.CheckRow(t, leaseTable, &coordinationv1.Lease{}, tableNow, []any{"", "<unknown>"})
}
