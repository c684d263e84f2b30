package replicaset

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Status computes a ReplicaSet's status from its active pods (claimed,
// not terminating), its terminating pods and the error, if any, of this
// round's creations or deletions, as upstream's calculateStatus.
func Status(rs *appsv1.ReplicaSet, active []*v1.Pod, terminating int32, manageErr error, now time.Time) appsv1.ReplicaSetStatus {
	st := *rs.Status.DeepCopy()
	tmpl := labels.Set(rs.Spec.Template.Labels)
	var fully, ready, available int32
	for _, p := range active {
		// Fully labelled: every template label is on the pod, so the pod
		// is what the template would create now.
		if labels.SelectorFromSet(tmpl).Matches(labels.Set(p.Labels)) {
			fully++
		}
		if controllerutil.IsPodReady(p) {
			ready++
			if controllerutil.IsPodAvailable(p, rs.Spec.MinReadySeconds, now) {
				available++
			}
		}
	}
	st.Replicas = int32(len(active))
	st.FullyLabeledReplicas = fully
	st.ReadyReplicas = ready
	st.AvailableReplicas = available
	st.TerminatingReplicas = &terminating

	failed := condition(st.Conditions, appsv1.ReplicaSetReplicaFailure)
	switch {
	case manageErr != nil && failed == nil:
		reason := ""
		if diff := len(active) - int(replicas(rs)); diff < 0 {
			reason = "FailedCreate"
		} else if diff > 0 {
			reason = "FailedDelete"
		}
		st.Conditions = append(st.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetReplicaFailure, Status: v1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now), Reason: reason, Message: manageErr.Error(),
		})
	case manageErr == nil && failed != nil:
		var keep []appsv1.ReplicaSetCondition
		for _, c := range st.Conditions {
			if c.Type != appsv1.ReplicaSetReplicaFailure {
				keep = append(keep, c)
			}
		}
		st.Conditions = keep
	}
	return st
}

// AvailabilityRecheck is how long after now the ReplicaSet must be looked
// at again so that pods turning available after minReadySeconds are
// counted: zero when nothing is pending.
func AvailabilityRecheck(rs *appsv1.ReplicaSet, active []*v1.Pod, now time.Time) time.Duration {
	if rs.Spec.MinReadySeconds <= 0 {
		return 0
	}
	min := time.Duration(rs.Spec.MinReadySeconds) * time.Second
	var next time.Duration
	for _, p := range active {
		if !controllerutil.IsPodReady(p) || controllerutil.IsPodAvailable(p, rs.Spec.MinReadySeconds, now) {
			continue
		}
		wait := min
		if t := readyTime(p); !t.IsZero() {
			wait = t.Add(min).Sub(now) + time.Second
		}
		if wait <= 0 {
			wait = time.Second
		}
		if next == 0 || wait < next {
			next = wait
		}
	}
	return next
}

func condition(cs []appsv1.ReplicaSetCondition, t appsv1.ReplicaSetConditionType) *appsv1.ReplicaSetCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

func replicas(rs *appsv1.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}
