package integration

import (
	"errors"
	"strings"
	"testing"

	svmv1 "k8s.io/api/storagemigration/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
)

// TestStorageVersionMigrationAPI drives storagemigration.k8s.io/v1 as
// upstream's conformance test does, then prints a migration with kubectl.
func TestStorageVersionMigrationAPI(t *testing.T) {
	runCRUD(t, "", crudCase{
		gvr:    svmv1.SchemeGroupVersion.WithResource("storageversionmigrations"),
		object: `{"spec": {"resource": {"group": "", "resource": "foo"}}}`,
		spec:   `{"metadata": {"labels": {"test.storagemigration.example.com": "test"}}}`,
		status: `{"status": {"conditions": [{"type": "TestCondition", "status": "True", "reason": "TestReason", "message": "TestMessage", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}`,
		check: func(st map[string]any) error {
			if c, _ := st["conditions"].([]any); len(c) != 1 {
				return errors.New("no condition")
			}
			return nil
		},
	})

	name := "deployments-" + utilrand.String(5)
	t.Cleanup(func() { runKubectl(t, "", "delete", "storageversionmigration", name, "--ignore-not-found") })
	mustKubectl(t, `
apiVersion: storagemigration.k8s.io/v1
kind: StorageVersionMigration
metadata: {name: `+name+`}
spec: {resource: {group: apps, resource: deployments}}
`, "apply", "-f", "-")
	out := mustKubectl(t, "", "get", "storageversionmigrations", name)
	if h := header(out); h != "NAME RESOURCE STATUS" {
		t.Errorf("header %q, want NAME RESOURCE STATUS", h)
	}
	if row := strings.Join(tableRow(t, out, name)[1:], " "); row != "deployments.apps Unknown" {
		t.Errorf("row %q", row)
	}
	res := runKubectl(t, "", "patch", "storageversionmigration", name, "--type=merge", "-p", `{"spec":{"resource":{"resource":"replicasets"}}}`)
	if want := `The StorageVersionMigration "` + name + `" is invalid: spec: Invalid value:`; res.Code == 0 || !strings.Contains(res.Stderr, want) || !strings.Contains(res.Stderr, "field is immutable") {
		t.Errorf("changing the resource: exit %d, stderr %q", res.Code, res.Stderr)
	}
}
