package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

func TestPreparePodForStatusUpdate(t *testing.T) {
	cond := func(typ corev1.PodConditionType, gen int64) corev1.PodCondition {
		return corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, ObservedGeneration: gen}
	}
	old := corev1.PodStatus{
		QOSClass:           corev1.PodQOSBurstable,
		ObservedGeneration: 3,
		Conditions: []corev1.PodCondition{
			cond(corev1.PodReady, 3), cond("example.com/gate", 1), cond("example.com/gate", 2),
		},
	}
	cases := []struct {
		name      string
		next, out corev1.PodStatus
	}{{
		name: "left out: kept",
		next: corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodReady, 0)}},
		out: corev1.PodStatus{QOSClass: corev1.PodQOSBurstable, ObservedGeneration: 3,
			Conditions: []corev1.PodCondition{cond(corev1.PodReady, 3)}},
	}, {
		name: "set: taken",
		next: corev1.PodStatus{QOSClass: corev1.PodQOSGuaranteed, ObservedGeneration: 4,
			Conditions: []corev1.PodCondition{cond(corev1.PodReady, 4)}},
		out: corev1.PodStatus{QOSClass: corev1.PodQOSGuaranteed, ObservedGeneration: 4,
			Conditions: []corev1.PodCondition{cond(corev1.PodReady, 4)}},
	}, {
		name: "repeated type: matched in order",
		next: corev1.PodStatus{Conditions: []corev1.PodCondition{
			cond("example.com/gate", 0), cond("example.com/gate", 0), cond("example.com/gate", 0), cond(corev1.PodScheduled, 0)}},
		out: corev1.PodStatus{QOSClass: corev1.PodQOSBurstable, ObservedGeneration: 3, Conditions: []corev1.PodCondition{
			cond("example.com/gate", 1), cond("example.com/gate", 2), cond("example.com/gate", 0), cond(corev1.PodScheduled, 0)}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: c.next}
			preparePodForStatusUpdate(pod, &corev1.Pod{Status: *old.DeepCopy()})
			if !equality.Semantic.DeepEqual(pod.Status, c.out) {
				t.Errorf("got  %+v\nwant %+v", pod.Status, c.out)
			}
		})
	}
}
