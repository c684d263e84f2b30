package rbac

import (
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

var (
	tableNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tableCol = printerstest.Col
)

var tableBindingColumns = []printerstest.Column{
	tableCol("Role", "string", 0), tableCol("Age", "string", 0),
	tableCol("Users", "string", 1), tableCol("Groups", "string", 1), tableCol("ServiceAccounts", "string", 1),
}

var tableSubjects = []rbacv1.Subject{
	{Kind: rbacv1.UserKind, Name: "alice"},
	{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "default"},
	{Kind: rbacv1.GroupKind, Name: "system:masters"},
	{Kind: rbacv1.UserKind, Name: "bob"},
	{Kind: rbacv1.ServiceAccountKind, Namespace: "ns", Name: "builder"},
	{Kind: "Robot", Name: "r2"},
}

func TestRoleBindingTable(t *testing.T) {
	printerstest.CheckColumns(t, rolebindingTable, tableBindingColumns)
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(tableNow.Add(-90 * time.Minute))},
		RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "edit"},
		Subjects:   tableSubjects,
	}
	printerstest.CheckRow(t, rolebindingTable, rb, tableNow, []any{
		"ClusterRole/edit", "90m", "alice, bob", "system:masters", "kube-system/default, ns/builder",
	})
	printerstest.CheckRow(t, rolebindingTable, &rbacv1.RoleBinding{}, tableNow, []any{"/", "<unknown>", "", "", ""})
}

func TestClusterRoleBindingTable(t *testing.T) {
	printerstest.CheckColumns(t, clusterrolebindingTable, tableBindingColumns)
	if rolebindingTable.Columns[0].Description == clusterrolebindingTable.Columns[0].Description {
		t.Error("the two bindings document roleRef differently upstream")
	}
	crb := &rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"}, Subjects: tableSubjects[2:3]}
	printerstest.CheckRow(t, clusterrolebindingTable, crb, tableNow, []any{"ClusterRole/cluster-admin", "<unknown>", "", "system:masters", ""})
}

func TestRoleTables(t *testing.T) {
	created := metav1.NewTime(time.Date(2025, 12, 31, 23, 59, 59, 0, time.FixedZone("UTC-5", -5*3600)))
	printerstest.CheckColumns(t, roleTable, []printerstest.Column{tableCol("Created At", "date", 0)})
	printerstest.CheckColumns(t, clusterroleTable, []printerstest.Column{tableCol("Created At", "date", 0)})
	printerstest.CheckRow(t, roleTable, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created}}, tableNow, []any{"2026-01-01T04:59:59Z"})
	printerstest.CheckRow(t, clusterroleTable, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created}}, tableNow, []any{"2026-01-01T04:59:59Z"})
}
