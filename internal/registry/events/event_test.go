package events

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

type wantErr struct {
	typ    field.ErrorType
	field  string
	detail string
}

func checkErrs(t *testing.T, got field.ErrorList, want []wantErr) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Type != w.typ || g.Field != w.field || (w.detail != "" && g.Detail != w.detail) {
			t.Errorf("error %d: got %s %q (%q), want %s %q (%q)", i, g.Type, g.Field, g.Detail, w.typ, w.field, w.detail)
		}
	}
}

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
		want: []wantErr{{field.ErrorTypeInvalid, "involvedObject.namespace", "does not match event.namespace"}},
	}, {
		name: "missing reporting fields",
		mutate: func(e *eventsv1.Event) {
			e.ReportingController = ""
			e.ReportingInstance = ""
			e.Action = ""
			e.Reason = ""
		},
		want: []wantErr{
			{field.ErrorTypeRequired, "reportingController", ""},
			// Upstream also runs the empty name through the qualified-name
			// check, which has two complaints about it.
			{field.ErrorTypeInvalid, "reportingController", "name part must be non-empty"},
			{field.ErrorTypeInvalid, "reportingController", ""},
			{field.ErrorTypeRequired, "reportingInstance", ""},
			{field.ErrorTypeRequired, "action", ""},
			{field.ErrorTypeRequired, "reason", ""},
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
			{field.ErrorTypeInvalid, "reportingController", ""},
			{field.ErrorTypeInvalid, "reportingInstance", "can have at most 128 characters"},
			{field.ErrorTypeInvalid, "action", "can have at most 128 characters"},
			{field.ErrorTypeInvalid, "reason", "can have at most 128 characters"},
			{field.ErrorTypeInvalid, "message", "can have at most 1024 characters"},
		},
	}, {
		name: "missing event time falls back to the old rules",
		mutate: func(e *eventsv1.Event) {
			e.EventTime = metav1.MicroTime{}
			e.Action = ""
			e.Regarding.Namespace = "other"
		},
		want: []wantErr{
			{field.ErrorTypeInvalid, "involvedObject.namespace", "does not match event.namespace"},
			{field.ErrorTypeRequired, "eventTime", ""},
		},
	}, {
		name:   "bad type",
		mutate: func(e *eventsv1.Event) { e.Type = "Error" },
		want:   []wantErr{{field.ErrorTypeInvalid, "type", "has invalid value: Error"}},
	}, {
		name: "deprecated fields set",
		mutate: func(e *eventsv1.Event) {
			e.DeprecatedFirstTimestamp = metav1.Now()
			e.DeprecatedLastTimestamp = metav1.Now()
			e.DeprecatedCount = 3
			e.DeprecatedSource = corev1.EventSource{Component: "kubelet"}
		},
		want: []wantErr{
			{field.ErrorTypeInvalid, "firstTimestamp", "needs to be unset"},
			{field.ErrorTypeInvalid, "lastTimestamp", "needs to be unset"},
			{field.ErrorTypeInvalid, "count", "needs to be unset"},
			{field.ErrorTypeInvalid, "source", "needs to be unset"},
		},
	}, {
		name:   "series",
		mutate: func(e *eventsv1.Event) { e.Series = &eventsv1.EventSeries{Count: 1} },
		want: []wantErr{
			{field.ErrorTypeInvalid, "series.count", "should be at least 2"},
			{field.ErrorTypeRequired, "series.lastObservedTime", ""},
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
			{field.ErrorTypeInvalid, "involvedObject", "field is immutable"},
			{field.ErrorTypeInvalid, "reason", "field is immutable"},
			{field.ErrorTypeInvalid, "message", "field is immutable"},
			{field.ErrorTypeInvalid, "type", "field is immutable"},
			{field.ErrorTypeInvalid, "eventTime", "field is immutable"},
			{field.ErrorTypeInvalid, "action", "field is immutable"},
			{field.ErrorTypeInvalid, "related", "field is immutable"},
			{field.ErrorTypeInvalid, "reportingController", "field is immutable"},
			{field.ErrorTypeInvalid, "reportingInstance", "field is immutable"},
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
			{field.ErrorTypeInvalid, "source", "field is immutable"},
			{field.ErrorTypeInvalid, "firstTimestamp", "field is immutable"},
			{field.ErrorTypeInvalid, "lastTimestamp", "field is immutable"},
			{field.ErrorTypeInvalid, "count", "field is immutable"},
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
