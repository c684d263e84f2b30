package apiserver

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestGCFinalizers(t *testing.T) {
	const orphan, fg = metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents
	cases := []struct {
		name    string
		have    []string
		opts    metav1.DeleteOptions
		want    []string
		changed bool
	}{
		{"background adds nothing", nil, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}, nil, false},
		{"no options adds nothing", []string{"x"}, metav1.DeleteOptions{}, []string{"x"}, false},
		{"foreground", []string{"x"}, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}, []string{"x", fg}, true},
		{"orphan", nil, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}, []string{orphan}, true},
		{"orphanDependents", nil, metav1.DeleteOptions{OrphanDependents: ptr.To(true)}, []string{orphan}, true},
		{"orphanDependents=false removes orphan", []string{orphan}, metav1.DeleteOptions{OrphanDependents: ptr.To(false)}, nil, true},
		{"explicit option replaces the other finalizer", []string{fg}, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}, []string{orphan}, true},
		{"present finalizer stands without an option", []string{fg}, metav1.DeleteOptions{}, []string{fg}, false},
		{"background removes foreground", []string{fg, "x"}, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}, []string{"x"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Finalizers: c.have}}
			got, changed := gcFinalizers(cm, &c.opts)
			if changed != c.changed || strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("got %v changed=%v, want %v changed=%v", got, changed, c.want, c.changed)
			}
		})
	}
}

func TestPrefixFromUserAgent(t *testing.T) {
	for ua, want := range map[string]string{
		"kubectl/v1.37.2 (linux/amd64) kubernetes/abc": "kubectl",
		"kube-controller-manager/v1.37.2":              "kube-controller-manager",
		"no-slash":                                     "no-slash",
		"bad\x01char/1":                                "badchar",
		strings.Repeat("a", 200) + "/1":                strings.Repeat("a", 128),
	} {
		if got := prefixFromUserAgent(ua); got != want {
			t.Errorf("prefixFromUserAgent(%q) = %q, want %q", ua, got, want)
		}
	}
}
