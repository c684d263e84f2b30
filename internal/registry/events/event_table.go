package events

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// eventTable prints events as upstream's `kubectl get` does. Upstream prints
// events.k8s.io events with the core event printer (both versions share one
// storage), so the columns and cells are the core ones, read through the
// same field mapping as upstream's conversion to the internal type.
var eventTable = &registry.Table{
	Columns: printers.EventColumns(),
	OwnName: true,
	Row: registry.TypedRow(func(e *eventsv1.Event, now time.Time) []any {
		var series *corev1.EventSeries
		if e.Series != nil {
			series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
		}
		return printers.EventRow(printers.Event{
			Name:                e.Name,
			InvolvedObject:      e.Regarding,
			Reason:              e.Reason,
			Message:             e.Note,
			Source:              e.DeprecatedSource,
			FirstTimestamp:      e.DeprecatedFirstTimestamp,
			LastTimestamp:       e.DeprecatedLastTimestamp,
			Count:               e.DeprecatedCount,
			Type:                e.Type,
			EventTime:           e.EventTime,
			Series:              series,
			ReportingController: e.ReportingController,
			ReportingInstance:   e.ReportingInstance,
		}, now)
	}),
}

// eventFields lists the fields a field selector over events may name. These
// are the names upstream's events.k8s.io/v1 accepts (its field label
// conversion maps them onto the core ones); the core spellings such as
// involvedObject.name are not accepted in this group.
var eventFields = registry.TypedFields(func(e *eventsv1.Event) fields.Set {
	// There is no source in this version, but upstream still accepts it and
	// matches it against the legacy source or the reporting controller.
	source := e.DeprecatedSource.Component
	if source == "" {
		source = e.ReportingController
	}
	return fields.Set{
		"regarding.kind":            e.Regarding.Kind,
		"regarding.namespace":       e.Regarding.Namespace,
		"regarding.name":            e.Regarding.Name,
		"regarding.uid":             string(e.Regarding.UID),
		"regarding.apiVersion":      e.Regarding.APIVersion,
		"regarding.resourceVersion": e.Regarding.ResourceVersion,
		"regarding.fieldPath":       e.Regarding.FieldPath,
		"reason":                    e.Reason,
		"reportingController":       e.ReportingController,
		"source":                    source,
		"type":                      e.Type,
	}
})
