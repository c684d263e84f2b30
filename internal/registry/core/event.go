package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Events is the events resource.
var Events = &registry.Resource{
	Group: "", Version: "v1", Name: "events", Singular: "event", Kind: "Event",
	Namespaced:     true,
	ShortNames:     []string{"ev"},
	New:            func() runtime.Object { return &corev1.Event{} },
	NewList:        func() runtime.Object { return &corev1.EventList{} },
	Default:        registry.Typed(defaultEvent),
	Validate:       registry.TypedValidate(validateEvent),
	ValidateUpdate: registry.TypedValidateUpdate(validateEventUpdate),
	Table:          eventTable,
	Fields:         eventFields,
}

func defaultEvent(obj *corev1.Event) {}

func validateEvent(obj *corev1.Event) field.ErrorList { return nil }

func validateEventUpdate(obj, old *corev1.Event) field.ErrorList { return nil }
