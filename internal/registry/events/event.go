package events

import (
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
}

func defaultEvent(obj *eventsv1.Event) {}

func validateEvent(obj *eventsv1.Event) field.ErrorList { return nil }

func validateEventUpdate(obj, old *eventsv1.Event) field.ErrorList { return nil }
