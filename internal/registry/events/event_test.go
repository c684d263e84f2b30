package events

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry/registrytest"
)

// wantErr and checkErrs are the shared validation-test helpers.
type wantErr = registrytest.WantErr

var checkErrs = registrytest.CheckErrs

var eventTime = metav1.NewMicroTime(time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC))

func validEvent() *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "web.1", Namespace: "default"},
		EventTime:           eventTime,
		ReportingController: "kubernetes.io/kubelet",
		ReportingInstance:   "kubelet-node-1",
		Action:              "Pulling",
		Reason:              "Pulling",
		Regarding:           corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"},
		Note:                "Pulling image nginx",
		Type:                corev1.EventTypeNormal,
	}
}

func TestValidateEvent(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*eventsv1.Event)
		want   []wantErr
	}{{
		name:   "valid",
		mutate: func(*eventsv1.Event) {},
	}, {
		name: "cluster-scoped subject in default",
		mutate: func(e *eventsv1.Event) {
			e.Regarding = corev1.ObjectReference{Kind: "Node", Name: "node-1"}
		},
	}, {
		name: "cluster-scoped subject elsewhere",
		mutate: func(e *eventsv1.Event) {
			e.Namespace = "apps"
			e.Regarding = corev1.ObjectReference{Kind: "Node", Name: "node-1"}
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "involvedObject.namespace", Detail: "does not match event.namespace"}},
	}, {
		name: "missing reporting fields",
		mutate: func(e *eventsv1.Event) {
			e.ReportingController = ""
			e.ReportingInstance = ""
			e.Action = ""
			e.Reason = ""
		},
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "reportingController", Detail: ""},
			// Upstream also runs the empty name through the qualified-name
			// check, which has two complaints about it.
			{Type: field.ErrorTypeInvalid, Field: "reportingController", Detail: "name part must be non-empty"},
			{Type: field.ErrorTypeInvalid, Field: "reportingController", Detail: ""},
			{Type: field.ErrorTypeRequired, Field: "reportingInstance", Detail: ""},
			{Type: field.ErrorTypeRequired, Field: "action", Detail: ""},
			{Type: field.ErrorTypeRequired, Field: "reason", Detail: ""},
		},
	}, {
		name: "overlong fields",
		mutate: func(e *eventsv1.Event) {
			e.ReportingController = "not a qualified name"
			e.ReportingInstance = strings.Repeat("i", 129)
			e.Action = strings.Repeat("a", 129)
			e.Reason = strings.Repeat("r", 129)
			e.Note = strings.Repeat("n", 1025)
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "reportingController", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "reportingInstance", Detail: "can have at most 128 characters"},
			{Type: field.ErrorTypeInvalid, Field: "action", Detail: "can have at most 128 characters"},
			{Type: field.ErrorTypeInvalid, Field: "reason", Detail: "can have at most 128 characters"},
			{Type: field.ErrorTypeInvalid, Field: "message", Detail: "can have at most 1024 characters"},
		},
	}, {
		name: "missing event time falls back to the old rules",
		mutate: func(e *eventsv1.Event) {
			e.EventTime = metav1.MicroTime{}
			e.Action = ""
			e.Regarding.Namespace = "other"
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "involvedObject.namespace", Detail: "does not match event.namespace"},
			{Type: field.ErrorTypeRequired, Field: "eventTime", Detail: ""},
		},
	}, {
		name:   "bad type",
		mutate: func(e *eventsv1.Event) { e.Type = "Error" },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "type", Detail: "has invalid value: Error"}},
	}, {
		name: "deprecated fields set",
		mutate: func(e *eventsv1.Event) {
			e.DeprecatedFirstTimestamp = metav1.Now()
			e.DeprecatedLastTimestamp = metav1.Now()
			e.DeprecatedCount = 3
			e.DeprecatedSource = corev1.EventSource{Component: "kubelet"}
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "firstTimestamp", Detail: "needs to be unset"},
			{Type: field.ErrorTypeInvalid, Field: "lastTimestamp", Detail: "needs to be unset"},
			{Type: field.ErrorTypeInvalid, Field: "count", Detail: "needs to be unset"},
			{Type: field.ErrorTypeInvalid, Field: "source", Detail: "needs to be unset"},
		},
	}, {
		name:   "series",
		mutate: func(e *eventsv1.Event) { e.Series = &eventsv1.EventSeries{Count: 1} },
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "series.count", Detail: "should be at least 2"},
			{Type: field.ErrorTypeRequired, Field: "series.lastObservedTime", Detail: ""},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := validEvent()
			tc.mutate(e)
			checkErrs(t, validateEvent(e), tc.want)
		})
	}
}

func TestValidateEventUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*eventsv1.Event)
		want   []wantErr
	}{{
		name: "series grows",
		mutate: func(e *eventsv1.Event) {
			e.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NowMicro()}
			e.Labels = map[string]string{"seen": "twice"}
		},
	}, {
		name:   "sub-microsecond event time drift",
		mutate: func(e *eventsv1.Event) { e.EventTime = metav1.NewMicroTime(eventTime.Truncate(time.Microsecond)) },
	}, {
		name: "record rewritten",
		mutate: func(e *eventsv1.Event) {
			e.Regarding.Name = "other"
			e.Reason = "Pulled"
			e.Note = "done"
			e.Type = corev1.EventTypeWarning
			e.EventTime = metav1.NewMicroTime(eventTime.Add(time.Second))
			e.Action = "Pulled"
			e.Related = &corev1.ObjectReference{Name: "x"}
			e.ReportingController = "example.com/other"
			e.ReportingInstance = "other"
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "involvedObject", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "reason", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "message", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "type", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "eventTime", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "action", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "related", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "reportingController", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "reportingInstance", Detail: "field is immutable"},
		},
	}, {
		name: "deprecated fields",
		mutate: func(e *eventsv1.Event) {
			e.DeprecatedSource.Host = "node-1"
			e.DeprecatedFirstTimestamp = metav1.Now()
			e.DeprecatedLastTimestamp = metav1.Now()
			e.DeprecatedCount = 1
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "source", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "firstTimestamp", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "lastTimestamp", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "count", Detail: "field is immutable"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validEvent()
			e := old.DeepCopy()
			tc.mutate(e)
			checkErrs(t, validateEventUpdate(e, old), tc.want)
		})
	}
}
