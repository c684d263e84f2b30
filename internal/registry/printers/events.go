package printers

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EventColumns are upstream's event columns. Upstream serves core/v1 and
// events.k8s.io/v1 events from one storage of the internal core type, so both
// groups print with these columns and core/v1's field docs.
//
// Upstream's event table has no leading NAME column: the name is the last,
// wide column, so event tables set registry.Table.OwnName.
func EventColumns() []metav1.TableColumnDefinition {
	ev := corev1.Event{}.SwaggerDoc()
	ref := corev1.ObjectReference{}.SwaggerDoc()
	return []metav1.TableColumnDefinition{
		{Name: "Last Seen", Type: "string", Description: ev["lastTimestamp"]},
		{Name: "Type", Type: "string", Description: ev["type"]},
		{Name: "Reason", Type: "string", Description: ev["reason"]},
		{Name: "Object", Type: "string", Description: ev["involvedObject"]},
		{Name: "Subobject", Type: "string", Priority: 1, Description: ref["fieldPath"]},
		{Name: "Source", Type: "string", Priority: 1, Description: ev["source"]},
		{Name: "Message", Type: "string", Description: ev["message"]},
		{Name: "First Seen", Type: "string", Priority: 1, Description: ev["firstTimestamp"]},
		// Upstream types COUNT as a string yet fills it with an integer.
		{Name: "Count", Type: "string", Priority: 1, Description: ev["count"]},
		{Name: "Name", Type: "string", Priority: 1, Description: objectMetaDocs["name"]},
	}
}

// Event is what an event row needs, in the terms of upstream's internal
// core Event, to which both served versions convert.
type Event struct {
	Name                string
	InvolvedObject      corev1.ObjectReference
	Reason              string
	Message             string
	Source              corev1.EventSource
	FirstTimestamp      metav1.Time
	LastTimestamp       metav1.Time
	Count               int32
	Type                string
	EventTime           metav1.MicroTime
	Series              *corev1.EventSeries
	ReportingController string
	ReportingInstance   string
}

// EventRow is upstream's printEvent.
func EventRow(e Event, now time.Time) []any {
	firstTimestamp := TranslateTimestampSince(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		// Events written through the new API carry only eventTime.
		firstTimestamp = TranslateMicroTimestampSince(e.EventTime, now)
	}
	lastTimestamp := TranslateTimestampSince(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		lastTimestamp = firstTimestamp
	}
	count := e.Count
	if e.Series != nil {
		lastTimestamp = TranslateMicroTimestampSince(e.Series.LastObservedTime, now)
		count = e.Series.Count
	} else if count == 0 {
		// Singleton events have no count in the new API.
		count = 1
	}

	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target = fmt.Sprintf("%s/%s", target, e.InvolvedObject.Name)
	}

	return []any{
		lastTimestamp,
		e.Type,
		e.Reason,
		target,
		e.InvolvedObject.FieldPath,
		formatEventSource(e.Source, e.ReportingController, e.ReportingInstance),
		strings.TrimSpace(e.Message),
		firstTimestamp,
		int64(count),
		e.Name,
	}
}

// formatEventSource prefers the legacy source and falls back to the
// reporting controller and instance that newer clients fill instead.
func formatEventSource(es corev1.EventSource, reportingController, reportingInstance string) string {
	component, instance := es.Component, es.Host
	if component == "" {
		component = reportingController
	}
	if instance == "" {
		instance = reportingInstance
	}
	if instance == "" {
		return component
	}
	return component + ", " + instance
}
