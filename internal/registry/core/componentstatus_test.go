package core

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestComponentStatuses(t *testing.T) {
	objs := ComponentStatuses(context.Background(), []ComponentProbe{
		{Name: "scheduler", Check: func(context.Context) error { return nil }},
		{Name: "etcd-0", Check: func(context.Context) error { return errors.New("context deadline exceeded") }},
		{Name: "controller-manager", Check: func(context.Context) error { return nil }},
	})
	want := []struct{ name, status, message, errText string }{
		{"controller-manager", "Healthy", "ok", ""},
		{"etcd-0", "Unhealthy", "", "context deadline exceeded"},
		{"scheduler", "Healthy", "ok", ""},
	}
	if len(objs) != len(want) {
		t.Fatalf("%d objects, want %d", len(objs), len(want))
	}
	for i, w := range want {
		cs := objs[i].(*corev1.ComponentStatus)
		row := Componentstatuses.Table.Row(cs, time.Now())
		if cs.Name != w.name || row[0] != w.status || row[1] != w.message || row[2] != w.errText {
			t.Errorf("row %d: %s %v, want %+v", i, cs.Name, row, w)
		}
		if cs.Kind != "ComponentStatus" || cs.APIVersion != "v1" {
			t.Errorf("%s has kind %q %q", cs.Name, cs.APIVersion, cs.Kind)
		}
	}
	if row := Componentstatuses.Table.Row(&corev1.ComponentStatus{}, time.Now()); row[0] != "Unknown" {
		t.Errorf("a status without a Healthy condition prints %v, want Unknown", row)
	}
}
