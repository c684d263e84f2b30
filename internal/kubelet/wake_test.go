package kubelet

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStatusOnly(t *testing.T) {
	now := metav1.Now()
	pod := func(phase v1.PodPhase, deleting bool) *v1.Pod {
		p := &v1.Pod{Status: v1.PodStatus{Phase: phase}}
		if deleting {
			p.DeletionTimestamp = &now
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want bool
	}{
		{"running pod: status alone", pod(v1.PodRunning, false), true},
		{"pending pod: status alone", pod(v1.PodPending, false), true},
		{"gone from the API: sync removes it", nil, false},
		{"being deleted: sync stops it", pod(v1.PodRunning, true), false},
		{"succeeded: sync keeps it stopped", pod(v1.PodSucceeded, false), false},
		{"failed: sync keeps it stopped", pod(v1.PodFailed, false), false},
	} {
		if got := statusOnly(tc.pod); got != tc.want {
			t.Errorf("%s: statusOnly = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestNotOlder(t *testing.T) {
	rv := func(v string) *v1.Pod { return &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: v}} }
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"100", "100", true},
		{"100", "101", true},
		{"101", "100", false},
		// Compared as strings, "99" would be the later one.
		{"99", "100", true},
		{"100", "99", false},
		{"", "5", true},
		{"5", "x", true},
	} {
		if got := notOlder(rv(tc.a), rv(tc.b)); got != tc.want {
			t.Errorf("notOlder(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
