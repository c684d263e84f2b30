package serviceaccount

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNeedsDefault(t *testing.T) {
	now := metav1.Now()
	active := &corev1.Namespace{Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	deleting := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}
	terminating := &corev1.Namespace{Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	for _, tt := range []struct {
		name string
		ns   *corev1.Namespace
		has  bool
		want bool
	}{
		{"active without", active, false, true},
		{"active with", active, true, false},
		{"deleting", deleting, false, false},
		{"terminating", terminating, false, false},
	} {
		if got := NeedsDefault(tt.ns, tt.has); got != tt.want {
			t.Errorf("%s: NeedsDefault = %v, want %v", tt.name, got, tt.want)
		}
	}
}
