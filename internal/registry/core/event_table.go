package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// eventTable prints events as upstream's `kubectl get` does.
var eventTable = &registry.Table{
	Columns: printers.EventColumns(),
	OwnName: true,
	Row: registry.TypedRow(func(e *corev1.Event, now time.Time) []any {
		return printers.EventRow(printers.Event{
			Name:                e.Name,
			InvolvedObject:      e.InvolvedObject,
			Reason:              e.Reason,
			Message:             e.Message,
			Source:              e.Source,
			FirstTimestamp:      e.FirstTimestamp,
			LastTimestamp:       e.LastTimestamp,
			Count:               e.Count,
			Type:                e.Type,
			EventTime:           e.EventTime,
			Series:              e.Series,
			ReportingController: e.ReportingController,
			ReportingInstance:   e.ReportingInstance,
		}, now)
	}),
}

// eventFields lists the fields a field selector over events may name.
var eventFields = registry.TypedFields(func(e *corev1.Event) fields.Set {
	// "source" predates reportingController; events from newer clients
	// only set the latter, and selecting by source should still find them.
	source := e.Source.Component
	if source == "" {
		source = e.ReportingController
	}
	return fields.Set{
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         source,
		"type":                           e.Type,
	}
})
