package events

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/orca-project/orca/internal/registry/printers"
	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

var tableNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestEventColumnsMatchCore(t *testing.T) {
	if !reflect.DeepEqual(eventTable.Columns, printers.EventColumns()) {
		t.Errorf("events.k8s.io columns differ from the core event columns")
	}
}

func TestEventRow(t *testing.T) {
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "web.1"},
		EventTime:           metav1.NewMicroTime(tableNow.Add(-20 * time.Minute)),
		Series:              &eventsv1.EventSeries{Count: 12, LastObservedTime: metav1.NewMicroTime(tableNow.Add(-40 * time.Second))},
		ReportingController: "kubelet", ReportingInstance: "node-1",
		Action: "Pulling", Reason: "BackOff", Type: "Warning",
		Regarding: corev1.ObjectReference{Kind: "Pod", Name: "web", FieldPath: "spec.containers{app}"},
		Note:      "Back-off pulling image\n",
	}
	printerstest.CheckRow(t, eventTable, ev, tableNow, []any{
		"40s", "Warning", "BackOff", "pod/web", "spec.containers{app}", "kubelet, node-1", "Back-off pulling image", "20m", int64(12), "web.1",
	})

	legacy := &eventsv1.Event{
		ObjectMeta:               metav1.ObjectMeta{Name: "old"},
		Regarding:                corev1.ObjectReference{Kind: "Node", Name: "n1"},
		DeprecatedSource:         corev1.EventSource{Component: "kubelet", Host: "n1"},
		DeprecatedFirstTimestamp: metav1.NewTime(tableNow.Add(-2 * time.Hour)),
		DeprecatedLastTimestamp:  metav1.NewTime(tableNow.Add(-time.Hour)),
		DeprecatedCount:          3,
		ReportingController:      "ignored",
	}
	printerstest.CheckRow(t, eventTable, legacy, tableNow, []any{
		"60m", "", "", "node/n1", "", "kubelet, n1", "", "120m", int64(3), "old",
	})
}

func TestEventFields(t *testing.T) {
	ev := &eventsv1.Event{
		Regarding: corev1.ObjectReference{
			Kind: "Pod", Namespace: "ns", Name: "p", UID: "u", APIVersion: "v1", ResourceVersion: "9", FieldPath: "f",
		},
		Reason: "Started", Type: "Normal", ReportingController: "kubelet",
	}
	want := fields.Set{
		"regarding.kind": "Pod", "regarding.namespace": "ns", "regarding.name": "p", "regarding.uid": "u",
		"regarding.apiVersion": "v1", "regarding.resourceVersion": "9", "regarding.fieldPath": "f",
		"reason": "Started", "reportingController": "kubelet", "source": "kubelet", "type": "Normal",
	}
	if got := eventFields(ev); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	ev.DeprecatedSource.Component = "legacy"
	if got := eventFields(ev)["source"]; got != "legacy" {
		t.Errorf("source = %q", got)
	}
}
