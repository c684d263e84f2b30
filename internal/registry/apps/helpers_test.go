package apps

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// wantErr is one expected validation error. An empty detail matches any.
type wantErr struct {
	typ    field.ErrorType
	field  string
	detail string
}

func checkErrs(t *testing.T, got field.ErrorList, want []wantErr) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(got), len(want), describe(got))
	}
	for i, w := range want {
		g := got[i]
		if g.Type != w.typ || g.Field != w.field || (w.detail != "" && g.Detail != w.detail) {
			t.Errorf("error %d: got %s %q (%q), want %s %q (%q)", i, g.Type, g.Field, g.Detail, w.typ, w.field, w.detail)
		}
	}
}

func describe(errs field.ErrorList) string {
	s := ""
	for _, e := range errs {
		s += fmt.Sprintf("  %s\n", e.Error())
	}
	return s
}

func podTemplate(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metaWithLabels(labels),
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways,
			DNSPolicy:     corev1.DNSClusterFirst,
			Containers: []corev1.Container{{
				Name:                     "web",
				Image:                    "nginx",
				ImagePullPolicy:          corev1.PullIfNotPresent,
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
		},
	}
}

func metaWithLabels(labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Labels: labels}
}
