package events

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/core"
)

// storedAsCore keeps events.k8s.io Events as the core Events upstream
// stores them as, so that both APIs list, watch and change the same
// objects.
var storedAsCore = &registry.StoredAs{
	Resource:   core.Events,
	ToStored:   func(obj runtime.Object) runtime.Object { return toCore(obj.(*eventsv1.Event)) },
	FromStored: func(obj runtime.Object) runtime.Object { return fromCore(obj.(*corev1.Event)) },
}

// toCore is upstream's conversion of an events.k8s.io Event to the core
// one: the same fields under the older names.
func toCore(e *eventsv1.Event) *corev1.Event {
	e = e.DeepCopy()
	out := &corev1.Event{
		ObjectMeta:          e.ObjectMeta,
		InvolvedObject:      e.Regarding,
		Reason:              e.Reason,
		Message:             e.Note,
		Source:              e.DeprecatedSource,
		FirstTimestamp:      e.DeprecatedFirstTimestamp,
		LastTimestamp:       e.DeprecatedLastTimestamp,
		Count:               e.DeprecatedCount,
		Type:                e.Type,
		EventTime:           e.EventTime,
		Action:              e.Action,
		Related:             e.Related,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
	}
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	out.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Event"))
	return out
}

// fromCore is the reverse of toCore.
func fromCore(e *corev1.Event) *eventsv1.Event {
	e = e.DeepCopy()
	out := &eventsv1.Event{
		ObjectMeta:               e.ObjectMeta,
		EventTime:                e.EventTime,
		ReportingController:      e.ReportingController,
		ReportingInstance:        e.ReportingInstance,
		Action:                   e.Action,
		Reason:                   e.Reason,
		Regarding:                e.InvolvedObject,
		Related:                  e.Related,
		Note:                     e.Message,
		Type:                     e.Type,
		DeprecatedSource:         e.Source,
		DeprecatedFirstTimestamp: e.FirstTimestamp,
		DeprecatedLastTimestamp:  e.LastTimestamp,
		DeprecatedCount:          e.Count,
	}
	if e.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	out.SetGroupVersionKind(eventsv1.SchemeGroupVersion.WithKind("Event"))
	return out
}
