package core

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func TestEventTable(t *testing.T) {
	checkTableColumns(t, eventTable, []tableCol{
		{"Last Seen", "string", 0}, {"Type", "string", 0}, {"Reason", "string", 0}, {"Object", "string", 0},
		{"Subobject", "string", 1}, {"Source", "string", 1}, {"Message", "string", 0},
		{"First Seen", "string", 1}, {"Count", "string", 1}, {"Name", "string", 1},
	})
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.17a"},
		InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Name: "web-5d"},
		Reason:         "SuccessfulCreate", Message: "Created pod: web-5d-x", Type: "Normal",
		Source:         corev1.EventSource{Component: "replicaset-controller"},
		FirstTimestamp: tableAgo(5 * time.Minute), LastTimestamp: tableAgo(5 * time.Minute), Count: 1,
	}
	want := []any{"5m", "Normal", "SuccessfulCreate", "replicaset/web-5d", "", "replicaset-controller", "Created pod: web-5d-x", "5m", int64(1), "web.17a"}
	if got := tableRow(t, eventTable, ev); !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
}

func TestEventFields(t *testing.T) {
	ev := &corev1.Event{
		InvolvedObject: corev1.ObjectReference{
			Kind: "Pod", Namespace: "ns", Name: "p", UID: "u1", APIVersion: "v1", ResourceVersion: "42", FieldPath: "spec.containers{c}",
		},
		Reason: "BackOff", Type: "Warning", ReportingController: "kubelet",
	}
	want := fields.Set{
		"involvedObject.kind": "Pod", "involvedObject.namespace": "ns", "involvedObject.name": "p",
		"involvedObject.uid": "u1", "involvedObject.apiVersion": "v1", "involvedObject.resourceVersion": "42",
		"involvedObject.fieldPath": "spec.containers{c}", "reason": "BackOff", "reportingComponent": "kubelet",
		"source": "kubelet", "type": "Warning",
	}
	if got := eventFields(ev); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	ev.Source.Component = "legacy"
	if got := eventFields(ev)["source"]; got != "legacy" {
		t.Errorf("source = %q", got)
	}
}
