package defaulttolerationseconds

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/admission"
)

func TestAdmit(t *testing.T) {
	notReady := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}
	unreachable := corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}
	own := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](10)}
	all := corev1.Toleration{Operator: corev1.TolerationOpExists}
	other := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	cases := []struct {
		name string
		in   []corev1.Toleration
		want []corev1.Toleration
	}{
		{"none", nil, []corev1.Toleration{notReady, unreachable}},
		{"unrelated kept", []corev1.Toleration{other}, []corev1.Toleration{other, notReady, unreachable}},
		{"own not-ready kept", []corev1.Toleration{own}, []corev1.Toleration{own, unreachable}},
		{"tolerates everything", []corev1.Toleration{all}, []corev1.Toleration{all}},
		{"no-schedule only does not count", []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule}},
			[]corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule}, notReady, unreachable}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tc.in}}
			if err := New().Admit(context.Background(), &admission.Attributes{Operation: admission.Create, Resource: podsGVR, Object: pod}); err != nil {
				t.Fatal(err)
			}
			if len(pod.Spec.Tolerations) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", pod.Spec.Tolerations, tc.want)
			}
			for i := range tc.want {
				if !pod.Spec.Tolerations[i].MatchToleration(&tc.want[i]) || ptr.Deref(pod.Spec.Tolerations[i].TolerationSeconds, -1) != ptr.Deref(tc.want[i].TolerationSeconds, -1) {
					t.Fatalf("toleration %d: got %+v, want %+v", i, pod.Spec.Tolerations[i], tc.want[i])
				}
			}
		})
	}
}

func TestSubresourceIgnored(t *testing.T) {
	pod := &corev1.Pod{}
	_ = New().Admit(context.Background(), &admission.Attributes{Operation: admission.Update, Resource: podsGVR, Subresource: "status", Object: pod})
	if len(pod.Spec.Tolerations) != 0 {
		t.Fatal("status updates must not change tolerations")
	}
}
