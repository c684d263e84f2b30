package storagemigration

import (
	"testing"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
	"github.com/orca-project/orca/internal/registry/registrytest"
)

type wantErr = registrytest.WantErr

// migration is the object of upstream's conformance test: a resource no
// one serves, in the core group.
func migration(group, resource string) *svmv1.StorageVersionMigration {
	return &svmv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "test"},
		Spec:       svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}},
	}
}

func TestValidateMigration(t *testing.T) {
	for _, tc := range []struct {
		name            string
		group, resource string
		want            []wantErr
	}{
		{"conformance migration", "", "foo", nil},
		{"grouped resource", "apps", "deployments", nil},
		{"no resource", "apps", "", []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.resource.resource", Detail: "resource is required to be set"}}},
		{"resource not a DNS-1035 label", "", "1pods", []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.resource.resource"}}},
		{"group not a subdomain", "Apps_", "deployments", []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.resource.group"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			registrytest.CheckErrs(t, validateMigration(migration(tc.group, tc.resource)), tc.want)
		})
	}
	old := migration("", "foo")
	relabelled := old.DeepCopy()
	relabelled.Labels = map[string]string{"test.storagemigration.example.com": "test"}
	registrytest.CheckErrs(t, validateMigrationUpdate(relabelled, old), nil)
	registrytest.CheckErrs(t, validateMigrationUpdate(migration("", "bar"), old),
		[]wantErr{{Type: field.ErrorTypeInvalid, Field: "spec", Detail: "field is immutable"}})
}

func cond(t svmv1.MigrationConditionType, status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: status, Reason: "Test", Message: "m", LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
}

func TestValidateMigrationStatus(t *testing.T) {
	status := func(rv string, conds ...metav1.Condition) svmv1.StorageVersionMigrationStatus {
		return svmv1.StorageVersionMigrationStatus{ResourceVersion: rv, Conditions: conds}
	}
	for _, tc := range []struct {
		name      string
		old, next svmv1.StorageVersionMigrationStatus
		want      []wantErr
	}{
		{name: "conformance condition", next: status("", metav1.Condition{Type: "TestCondition", Status: metav1.ConditionTrue, Reason: "TestReason", Message: "TestMessage",
			LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})},
		{name: "running from a resource version", next: status("42", cond(svmv1.MigrationRunning, metav1.ConditionTrue))},
		{name: "not a resource version", next: status("forty-two"),
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "status.resourceVersion"}}},
		{name: "resource version changed", old: status("42"), next: status("43"),
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "status.resourceVersion", Detail: "field is immutable"}}},
		{name: "condition without reason", next: status("", metav1.Condition{Type: "Running", Status: metav1.ConditionTrue, LastTransitionTime: metav1.Now()}),
			want: []wantErr{{Type: field.ErrorTypeRequired, Field: "status.conditions[0].reason"}}},
		{name: "succeeded and failed", next: status("42", cond(svmv1.MigrationSucceeded, metav1.ConditionTrue), cond(svmv1.MigrationFailed, metav1.ConditionTrue)),
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "status.conditions", Detail: "Both success and failed conditions cannot be true at the same time"}}},
		{name: "success undone", old: status("42", cond(svmv1.MigrationSucceeded, metav1.ConditionTrue)), next: status("42", cond(svmv1.MigrationSucceeded, metav1.ConditionFalse)),
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "status.conditions", Detail: "Success condition cannot be set to false once it is true"}}},
		{name: "failure undone", old: status("42", cond(svmv1.MigrationFailed, metav1.ConditionTrue)), next: status("42"),
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "status.conditions", Detail: "Failed condition cannot be set to false once it is true"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, next := migration("", "foo"), migration("", "foo")
			old.Status, next.Status = tc.old, tc.next
			registrytest.CheckErrs(t, validateMigrationStatus(next, old), tc.want)
		})
	}
}

func TestMigrationTable(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	col := printerstest.Col
	printerstest.CheckColumns(t, migrationTable, []printerstest.Column{col("Resource", "string", 0), col("Status", "string", 0)})
	m := migration("", "foo")
	printerstest.CheckRow(t, migrationTable, m, now, []any{"foo", "Unknown"})
	m = migration("apps", "deployments")
	m.Status.Conditions = []metav1.Condition{cond(svmv1.MigrationRunning, metav1.ConditionFalse), cond(svmv1.MigrationSucceeded, metav1.ConditionTrue), {Type: "Other", Status: metav1.ConditionTrue}}
	printerstest.CheckRow(t, migrationTable, m, now, []any{"deployments.apps", "Succeeded"})
}
