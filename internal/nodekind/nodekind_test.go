package nodekind

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSimulated(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		want   bool
	}{
		{nil, false},
		{map[string]string{SimulatedLabel: "true"}, true},
		{map[string]string{SimulatedLabel: "false"}, false},
		{map[string]string{"kubernetes.io/hostname": "n1"}, false},
	} {
		if got := Simulated(&v1.Node{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}}); got != tc.want {
			t.Errorf("labels %v: %v, want %v", tc.labels, got, tc.want)
		}
	}
}
