package integration

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/watch"
)

// TestEventsAPILifecycle follows "Events API should ensure that an event
// can be fetched, patched, deleted, and listed" and "should delete a
// collection of events": events.k8s.io/v1 Events are the core Events, so
// each API sees what the other writes.
func TestEventsAPILifecycle(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "eventsapi")
	evs := client.EventsV1().Events(ns)
	newEvent := func(name, label string) *eventsv1.Event {
		return &eventsv1.Event{
			ObjectMeta:          metav1.ObjectMeta{Name: name, Labels: map[string]string{label: "true"}},
			Regarding:           corev1.ObjectReference{Namespace: ns},
			EventTime:           metav1.MicroTime{Time: time.Unix(1505828956, 0)},
			Note:                "This is " + name,
			Action:              "Do",
			Reason:              "Test",
			Type:                "Normal",
			ReportingController: "test-controller",
			ReportingInstance:   "test-node",
		}
	}
	if _, err := evs.Create(ctx, newEvent("event-test", "testevent-constant"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	found := func(c interface {
		List(context.Context, metav1.ListOptions) (*eventsv1.EventList, error)
	}) bool {
		l, err := c.List(ctx, metav1.ListOptions{LabelSelector: "testevent-constant=true"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range l.Items {
			if e.Name == "event-test" && e.Namespace == ns {
				return true
			}
		}
		return false
	}
	if !found(client.EventsV1().Events("")) || !found(evs) {
		t.Fatal("created event not listed")
	}
	core, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "source=test-controller"})
	if err != nil || len(core.Items) != 1 || core.Items[0].Name != "event-test" || core.Items[0].Message != "This is event-test" {
		t.Fatalf("core/v1 list by source: %v %+v", err, core)
	}
	filtered, err := evs.List(ctx, metav1.ListOptions{FieldSelector: "reportingController=test-controller"})
	if err != nil || len(filtered.Items) != 1 || filtered.Items[0].Name != "event-test" {
		t.Fatalf("list by reportingController: %v %+v", err, filtered)
	}

	testEvent, err := evs.Get(ctx, "event-test", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldData, _ := json.Marshal(testEvent)
	next := testEvent.DeepCopy()
	series := &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.MicroTime{Time: time.Unix(1505828951, 0)}}
	next.Series = series
	newData, _ := json.Marshal(next)
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, eventsv1.Event{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := evs.Patch(ctx, "event-test", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ev, err := evs.Get(ctx, "event-test", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev.ResourceVersion, testEvent.ResourceVersion = "", ""
	ev.ManagedFields, testEvent.ManagedFields = nil, nil
	testEvent.Series = series
	if !apiequality.Semantic.DeepEqual(testEvent, ev) {
		t.Fatalf("patched event:\n got %+v\nwant %+v", ev, testEvent)
	}

	testEvent.Series = &eventsv1.EventSeries{Count: 100, LastObservedTime: metav1.MicroTime{Time: time.Unix(1505828956, 0)}}
	if _, err := evs.Update(ctx, testEvent, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev, err = evs.Get(ctx, "event-test", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev.ResourceVersion, ev.ManagedFields = "", nil
	if !apiequality.Semantic.DeepEqual(testEvent, ev) {
		t.Fatalf("updated event:\n got %+v\nwant %+v", ev, testEvent)
	}
	if err := evs.Delete(ctx, "event-test", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if found(client.EventsV1().Events("")) || found(evs) {
		t.Fatal("deleted event still listed")
	}
	if _, err := client.CoreV1().Events(ns).Get(ctx, "event-test", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("core/v1 get after delete: %v", err)
	}

	for _, name := range []string{"test-event-1", "test-event-2", "test-event-3"} {
		if _, err := evs.Create(ctx, newEvent(name, "testevent-set"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if l, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{LabelSelector: "testevent-set=true"}); err != nil || len(l.Items) != 3 {
		t.Fatalf("core/v1 list of the set: %v %d", err, len(l.Items))
	}
	if err := evs.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "testevent-set=true"}); err != nil {
		t.Fatal(err)
	}
	if l, err := evs.List(ctx, metav1.ListOptions{LabelSelector: "testevent-set=true"}); err != nil || len(l.Items) != 0 {
		t.Fatalf("after deletecollection: %v %d", err, len(l.Items))
	}
}

// TestCoreEventLifecycle follows "Events should manage the lifecycle of an
// event": core/v1 Events may change their message, and the events.k8s.io
// view sees it as the note.
func TestCoreEventLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "coreevent")
	evs := client.CoreV1().Events(ns)
	w, err := client.EventsV1().Events(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	_, err = evs.Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "event-test", Labels: map[string]string{"testevent-constant": "true"}},
		Message:        "This is a test event",
		Reason:         "Test",
		Type:           "Normal",
		Count:          1,
		InvolvedObject: corev1.ObjectReference{Namespace: ns},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if e, ok := ev.Object.(*eventsv1.Event); !ok || ev.Type != watch.Added || e.Name != "event-test" || e.Note != "This is a test event" {
			t.Fatalf("events.k8s.io watch: %s %+v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("events.k8s.io watch saw nothing")
	}
	l, err := client.CoreV1().Events("").List(ctx, metav1.ListOptions{LabelSelector: "testevent-constant=true"})
	if err != nil || !hasCoreEvent(l.Items, ns, "event-test") {
		t.Fatalf("list in all namespaces: %v", err)
	}
	if _, err := evs.Patch(ctx, "event-test", types.StrategicMergePatchType, []byte(`{"message":"This is a test event - patched"}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ev, err := evs.Get(ctx, "event-test", metav1.GetOptions{})
	if err != nil || ev.Message != "This is a test event - patched" {
		t.Fatalf("patched message: %v %q", err, ev.Message)
	}
	v1ev, err := client.EventsV1().Events(ns).Get(ctx, "event-test", metav1.GetOptions{})
	if err != nil || v1ev.Note != ev.Message || v1ev.DeprecatedCount != 1 || v1ev.Regarding.Namespace != ns {
		t.Fatalf("events.k8s.io view: %v %+v", err, v1ev)
	}
	ev.Series = &corev1.EventSeries{Count: 100, LastObservedTime: metav1.MicroTime{Time: time.Unix(1505828956, 0)}}
	if _, err := evs.Update(ctx, ev, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := evs.Delete(ctx, "event-test", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err = client.CoreV1().Events("").List(ctx, metav1.ListOptions{LabelSelector: "testevent-constant=true"})
	if err != nil || hasCoreEvent(l.Items, ns, "event-test") {
		t.Fatalf("deleted event still listed: %v", err)
	}
}

func hasCoreEvent(items []corev1.Event, ns, name string) bool {
	for _, e := range items {
		if e.Namespace == ns && e.Name == name {
			return true
		}
	}
	return false
}
