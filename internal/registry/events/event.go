package events

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Events is the events resource.
var Events = &registry.Resource{
	Group: "events.k8s.io", Version: "v1", Name: "events", Singular: "event", Kind: "Event",
	Namespaced:     true,
	ShortNames:     []string{"ev"},
	New:            func() runtime.Object { return &eventsv1.Event{} },
	NewList:        func() runtime.Object { return &eventsv1.EventList{} },
	Default:        registry.Typed(defaultEvent),
	Validate:       registry.TypedValidate(validateEvent),
	ValidateUpdate: registry.TypedValidateUpdate(validateEventUpdate),
	Table:          eventTable,
	Fields:         eventFields,
	StoredAs:       storedAsCore,
}

// Length limits on the free-form fields, from upstream.
const (
	reportingInstanceLengthLimit = 128
	actionLengthLimit            = 128
	reasonLengthLimit            = 128
	noteLengthLimit              = 1024
)

// Upstream defines no defaults for events.k8s.io Events.
func defaultEvent(obj *eventsv1.Event) {}

// validateEvent applies the strict rules upstream uses for events written
// through events.k8s.io/v1. Upstream validates the core Event these
// convert to, so error paths use the core field names: "involvedObject"
// for regarding, "message" for note, "source", "firstTimestamp",
// "lastTimestamp" and "count" for the deprecated fields. They are kept so
// that errors read as they do against a real cluster.
func validateEvent(obj *eventsv1.Event) field.ErrorList {
	var allErrs field.ErrorList
	if obj.EventTime.IsZero() {
		// Without an eventTime upstream judges the event by the older
		// core/v1 rules (and reports the missing time below) rather than
		// demanding the fields newer clients set.
		if obj.Regarding.Namespace == "" {
			if obj.Namespace != metav1.NamespaceNone && obj.Namespace != metav1.NamespaceDefault {
				allErrs = append(allErrs, field.Invalid(field.NewPath("involvedObject", "namespace"), obj.Regarding.Namespace, "does not match event.namespace"))
			}
		} else if obj.Namespace != obj.Regarding.Namespace {
			allErrs = append(allErrs, field.Invalid(field.NewPath("involvedObject", "namespace"), obj.Regarding.Namespace, "does not match event.namespace"))
		}
	} else {
		allErrs = append(allErrs, validateReportedEvent(obj)...)
	}

	allErrs = append(allErrs, validateEventSeries(obj)...)
	if obj.EventTime.IsZero() {
		allErrs = append(allErrs, field.Required(field.NewPath("eventTime"), ""))
	}
	if obj.Type != corev1.EventTypeNormal && obj.Type != corev1.EventTypeWarning {
		allErrs = append(allErrs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", obj.Type)))
	}
	// The deprecated fields exist for round-tripping core/v1 events; a
	// client of this API must use the series instead.
	if !obj.DeprecatedFirstTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !obj.DeprecatedLastTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if obj.DeprecatedCount != 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if obj.DeprecatedSource.Component != "" || obj.DeprecatedSource.Host != "" {
		allErrs = append(allErrs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return allErrs
}

// validateReportedEvent checks the reporting fields a client of the
// events API must fill in.
func validateReportedEvent(obj *eventsv1.Event) field.ErrorList {
	var allErrs field.ErrorList
	// Events about cluster-scoped objects live in default (or
	// kube-system), so only those are exempt from naming a namespace.
	if obj.Regarding.Namespace == "" && obj.Namespace != metav1.NamespaceDefault && obj.Namespace != metav1.NamespaceSystem {
		allErrs = append(allErrs, field.Invalid(field.NewPath("involvedObject", "namespace"), obj.Regarding.Namespace, "does not match event.namespace"))
	}
	if len(obj.ReportingController) == 0 {
		allErrs = append(allErrs, field.Required(field.NewPath("reportingController"), ""))
	}
	for _, msg := range utilvalidation.IsQualifiedName(obj.ReportingController) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("reportingController"), obj.ReportingController, msg))
	}
	allErrs = append(allErrs, validateRequiredBounded(obj.ReportingInstance, reportingInstanceLengthLimit, field.NewPath("reportingInstance"))...)
	allErrs = append(allErrs, validateRequiredBounded(obj.Action, actionLengthLimit, field.NewPath("action"))...)
	allErrs = append(allErrs, validateRequiredBounded(obj.Reason, reasonLengthLimit, field.NewPath("reason"))...)
	if len(obj.Note) > noteLengthLimit {
		allErrs = append(allErrs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", noteLengthLimit)))
	}
	return allErrs
}

func validateRequiredBounded(value string, limit int, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(value) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, ""))
	}
	if len(value) > limit {
		allErrs = append(allErrs, field.Invalid(fldPath, "", fmt.Sprintf("can have at most %v characters", limit)))
	}
	return allErrs
}

// A series exists only once an event recurs, so it starts at two.
func validateEventSeries(obj *eventsv1.Event) field.ErrorList {
	if obj.Series == nil {
		return nil
	}
	var allErrs field.ErrorList
	if obj.Series.Count < 2 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
	}
	if obj.Series.LastObservedTime.IsZero() {
		allErrs = append(allErrs, field.Required(field.NewPath("series.lastObservedTime"), ""))
	}
	return allErrs
}

// An event is a record of something that happened: only its series (and
// metadata) may move as it recurs.
func validateEventUpdate(obj, old *eventsv1.Event) field.ErrorList {
	immutable := func(newVal, oldVal any, name string) field.ErrorList {
		return apimachineryvalidation.ValidateImmutableField(newVal, oldVal, field.NewPath(name))
	}
	var allErrs field.ErrorList
	allErrs = append(allErrs, immutable(obj.Regarding, old.Regarding, "involvedObject")...)
	allErrs = append(allErrs, immutable(obj.Reason, old.Reason, "reason")...)
	allErrs = append(allErrs, immutable(obj.Note, old.Note, "message")...)
	allErrs = append(allErrs, immutable(obj.DeprecatedSource, old.DeprecatedSource, "source")...)
	allErrs = append(allErrs, immutable(obj.DeprecatedFirstTimestamp, old.DeprecatedFirstTimestamp, "firstTimestamp")...)
	allErrs = append(allErrs, immutable(obj.DeprecatedLastTimestamp, old.DeprecatedLastTimestamp, "lastTimestamp")...)
	allErrs = append(allErrs, immutable(obj.DeprecatedCount, old.DeprecatedCount, "count")...)
	allErrs = append(allErrs, immutable(obj.Type, old.Type, "type")...)
	// Clients that serialize at microsecond precision (as the API does)
	// must be able to send back what they read.
	if !obj.EventTime.Truncate(time.Microsecond).Equal(old.EventTime.Truncate(time.Microsecond)) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("eventTime"), obj.EventTime, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	allErrs = append(allErrs, immutable(obj.Action, old.Action, "action")...)
	allErrs = append(allErrs, immutable(obj.Related, old.Related, "related")...)
	allErrs = append(allErrs, immutable(obj.ReportingController, old.ReportingController, "reportingController")...)
	allErrs = append(allErrs, immutable(obj.ReportingInstance, old.ReportingInstance, "reportingInstance")...)
	return allErrs
}
