package printers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestTranslateTimestampSince(t *testing.T) {
	for _, tc := range []struct {
		ago  time.Duration
		zero bool
		want string
	}{
		{zero: true, want: "<unknown>"},
		{ago: 0, want: "0s"},
		{ago: 90 * time.Second, want: "90s"},
		{ago: 2 * time.Minute, want: "2m"},
		{ago: 5*time.Minute + 7*time.Second, want: "5m7s"},
		{ago: 3*time.Hour + 5*time.Minute, want: "3h5m"},
		{ago: 26 * time.Hour, want: "26h"},
		{ago: 50 * time.Hour, want: "2d2h"},
		{ago: 400 * 24 * time.Hour, want: "400d"},
		{ago: -10 * time.Second, want: "<invalid>"},
	} {
		ts := metav1.NewTime(now.Add(-tc.ago))
		if tc.zero {
			ts = metav1.Time{}
		}
		if got := TranslateTimestampSince(ts, now); got != tc.want {
			t.Errorf("TranslateTimestampSince(-%v) = %q, want %q", tc.ago, got, tc.want)
		}
		mts := metav1.NewMicroTime(ts.Time)
		if tc.zero {
			mts = metav1.MicroTime{}
		}
		if got := TranslateMicroTimestampSince(mts, now); got != tc.want {
			t.Errorf("TranslateMicroTimestampSince(-%v) = %q, want %q", tc.ago, got, tc.want)
		}
	}
}

func TestCreatedAt(t *testing.T) {
	cols := CreatedAtColumns()
	if len(cols) != 1 || cols[0].Name != "Created At" || cols[0].Type != "date" || cols[0].Priority != 0 {
		t.Fatalf("columns = %+v", cols)
	}
	meta := &metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)))}
	if got := CreatedAtRow(meta, now); len(got) != 1 || got[0] != "2026-01-02T02:04:05Z" {
		t.Errorf("CreatedAtRow = %v", got)
	}
}

func TestLayoutContainerCells(t *testing.T) {
	names, images := LayoutContainerCells([]corev1.Container{{Name: "a", Image: "nginx"}, {Name: "b", Image: "busybox:1"}})
	if names != "a,b" || images != "nginx,busybox:1" {
		t.Errorf("got %q %q", names, images)
	}
	names, images = LayoutContainerCells(nil)
	if names != "" || images != "" {
		t.Errorf("got %q %q", names, images)
	}
}

func TestBoolPtrAndList(t *testing.T) {
	yes, no := true, false
	if BoolPtr(nil) != "<unset>" || BoolPtr(&yes) != "True" || BoolPtr(&no) != "False" {
		t.Error("BoolPtr")
	}
	if got := ListWithMore(nil, false, 0, 3); got != "<unset>" {
		t.Errorf("empty = %q", got)
	}
	if got := ListWithMore([]string{"a", "b", "c"}, true, 5, 3); got != "a,b,c + 2 more..." {
		t.Errorf("more = %q", got)
	}
}

func TestEventRow(t *testing.T) {
	first := metav1.NewTime(now.Add(-10 * time.Minute))
	last := metav1.NewTime(now.Add(-30 * time.Second))
	for _, tc := range []struct {
		name string
		ev   Event
		want []any
	}{
		{
			name: "legacy event",
			ev: Event{
				Name: "web.1", InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", FieldPath: "spec.containers{app}"},
				Reason: "Pulled", Message: " pulled \n", Source: corev1.EventSource{Component: "kubelet", Host: "node-1"},
				FirstTimestamp: first, LastTimestamp: last, Count: 4, Type: "Normal",
			},
			want: []any{"30s", "Normal", "Pulled", "pod/web", "spec.containers{app}", "kubelet, node-1", "pulled", "10m", int64(4), "web.1"},
		},
		{
			name: "new API singleton",
			ev: Event{
				Name: "n.2", InvolvedObject: corev1.ObjectReference{Kind: "Node"},
				EventTime: metav1.NewMicroTime(now.Add(-5 * time.Second)), Type: "Warning", Reason: "X",
				ReportingController: "ctrl", ReportingInstance: "ctrl-0",
			},
			want: []any{"5s", "Warning", "X", "node", "", "ctrl, ctrl-0", "", "5s", int64(1), "n.2"},
		},
		{
			name: "series",
			ev: Event{
				Name: "s", InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Name: "d"},
				EventTime: metav1.NewMicroTime(now.Add(-time.Hour)),
				Series:    &corev1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(now.Add(-3 * time.Second))},
				Source:    corev1.EventSource{Component: "deployment-controller"},
			},
			want: []any{"3s", "", "", "deployment/d", "", "deployment-controller", "", "60m", int64(7), "s"},
		},
		{
			name: "no times at all",
			ev:   Event{Name: "z"},
			want: []any{"<unknown>", "", "", "", "", "", "", "<unknown>", int64(1), "z"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := EventRow(tc.ev, now)
			if len(got) != len(EventColumns()) {
				t.Fatalf("%d cells for %d columns", len(got), len(EventColumns()))
			}
			for i := range tc.want {
				if got[i] != tc.want[i] {
					t.Errorf("cell %d (%s) = %#v, want %#v", i, EventColumns()[i].Name, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestEventColumns(t *testing.T) {
	want := []struct {
		name     string
		priority int32
	}{
		{"Last Seen", 0}, {"Type", 0}, {"Reason", 0}, {"Object", 0}, {"Subobject", 1},
		{"Source", 1}, {"Message", 0}, {"First Seen", 1}, {"Count", 1}, {"Name", 1},
	}
	cols := EventColumns()
	if len(cols) != len(want) {
		t.Fatalf("got %d columns", len(cols))
	}
	for i, w := range want {
		if cols[i].Name != w.name || cols[i].Priority != w.priority || cols[i].Description == "" {
			t.Errorf("column %d = %+v, want %s/%d", i, cols[i], w.name, w.priority)
		}
	}
}
