package events

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every field has a place in the core Event, so an events.k8s.io Event
// survives being stored as one, and reads back under its core names.
func TestConvertRoundTrip(t *testing.T) {
	at := metav1.NewMicroTime(time.Unix(1505828956, 0))
	ev := &eventsv1.Event{
		ObjectMeta:               metav1.ObjectMeta{Name: "e", Namespace: "ns", Labels: map[string]string{"a": "b"}, ResourceVersion: "7"},
		EventTime:                at,
		Series:                   &eventsv1.EventSeries{Count: 3, LastObservedTime: at},
		ReportingController:      "ctl",
		ReportingInstance:        "node",
		Action:                   "Do",
		Reason:                   "Test",
		Regarding:                corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p"},
		Related:                  &corev1.ObjectReference{Kind: "Node", Name: "n"},
		Note:                     "note",
		Type:                     corev1.EventTypeWarning,
		DeprecatedSource:         corev1.EventSource{Component: "old", Host: "h"},
		DeprecatedFirstTimestamp: metav1.Unix(1, 0),
		DeprecatedLastTimestamp:  metav1.Unix(2, 0),
		DeprecatedCount:          4,
	}
	core := toCore(ev)
	want := &corev1.Event{
		ObjectMeta:          ev.ObjectMeta,
		InvolvedObject:      ev.Regarding,
		Reason:              "Test",
		Message:             "note",
		Source:              ev.DeprecatedSource,
		FirstTimestamp:      ev.DeprecatedFirstTimestamp,
		LastTimestamp:       ev.DeprecatedLastTimestamp,
		Count:               4,
		Type:                corev1.EventTypeWarning,
		EventTime:           at,
		Series:              &corev1.EventSeries{Count: 3, LastObservedTime: at},
		Action:              "Do",
		Related:             ev.Related,
		ReportingController: "ctl",
		ReportingInstance:   "node",
	}
	want.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Event"))
	if !equality.Semantic.DeepEqual(core, want) {
		t.Fatalf("toCore:\n got %+v\nwant %+v", core, want)
	}
	back := fromCore(core)
	ev.SetGroupVersionKind(eventsv1.SchemeGroupVersion.WithKind("Event"))
	if !equality.Semantic.DeepEqual(back, ev) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", back, ev)
	}
	core.Labels["a"] = "changed"
	if ev.Labels["a"] != "b" {
		t.Error("toCore shares maps with its input")
	}
}
