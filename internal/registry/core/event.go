package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Events is the events resource.
var Events = &registry.Resource{
	Group: "", Version: "v1", Name: "events", Singular: "event", Kind: "Event",
	Namespaced: true,
	ShortNames: []string{"ev"},
	New:        func() runtime.Object { return &corev1.Event{} },
	NewList:    func() runtime.Object { return &corev1.EventList{} },
	Default:    registry.Typed(defaultEvent),
	// Upstream does not check the names of core/v1 events beyond what a URL
	// path segment can hold; old clients rely on that.
	ValidateName:   path.ValidatePathSegmentName,
	Validate:       registry.TypedValidate(validateEvent),
	ValidateUpdate: registry.TypedValidateUpdate(validateEventUpdate),
	Table:          eventTable,
	Fields:         eventFields,
}

func defaultEvent(obj *corev1.Event) {}

// Length limits of the newer event fields.
const (
	reportingInstanceLengthLimit = 128
	actionLengthLimit            = 128
	reasonLengthLimit            = 128
	noteLengthLimit              = 1024
)

// validateEvent is upstream's validation for events written through core/v1,
// which is deliberately lenient for old clients. Events without eventTime
// (the old kind) need only agree on the namespace; those with it (written
// by newer clients) must also say who reported them and why.
func validateEvent(ev *corev1.Event) field.ErrorList {
	var allErrs field.ErrorList
	nsPath := field.NewPath("involvedObject", "namespace")
	const mismatch = "does not match event.namespace"
	if ev.EventTime.IsZero() {
		if len(ev.InvolvedObject.Namespace) == 0 {
			// Events about cluster-scoped objects go to "default" (or to no
			// namespace, for old clients).
			if ev.Namespace != metav1.NamespaceNone && ev.Namespace != metav1.NamespaceDefault {
				allErrs = append(allErrs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, mismatch))
			}
		} else if ev.Namespace != ev.InvolvedObject.Namespace {
			allErrs = append(allErrs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, mismatch))
		}
	} else {
		if len(ev.InvolvedObject.Namespace) == 0 && ev.Namespace != metav1.NamespaceDefault && ev.Namespace != metav1.NamespaceSystem {
			allErrs = append(allErrs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, mismatch))
		}
		if len(ev.ReportingController) == 0 {
			allErrs = append(allErrs, field.Required(field.NewPath("reportingController"), ""))
		}
		for _, msg := range validation.IsQualifiedName(ev.ReportingController) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("reportingController"), ev.ReportingController, msg))
		}
		allErrs = append(allErrs, requiredWithLimit(ev.ReportingInstance, reportingInstanceLengthLimit, field.NewPath("reportingInstance"))...)
		allErrs = append(allErrs, requiredWithLimit(ev.Action, actionLengthLimit, field.NewPath("action"))...)
		allErrs = append(allErrs, requiredWithLimit(ev.Reason, reasonLengthLimit, field.NewPath("reason"))...)
		if len(ev.Message) > noteLengthLimit {
			allErrs = append(allErrs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", noteLengthLimit)))
		}
	}
	for _, msg := range validation.IsDNS1123Subdomain(ev.Namespace) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("namespace"), ev.Namespace, msg))
	}
	return allErrs
}

func requiredWithLimit(value string, limit int, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(value) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, ""))
	}
	if len(value) > limit {
		allErrs = append(allErrs, field.Invalid(fldPath, "", fmt.Sprintf("can have at most %v characters", limit)))
	}
	return allErrs
}

// validateEventUpdate adds nothing for core/v1: upstream freezes an event's
// fields only when it is written through events.k8s.io.
func validateEventUpdate(ev, old *corev1.Event) field.ErrorList { return nil }
