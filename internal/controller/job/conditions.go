package job

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Upstream's reasons and messages for the conditions it sets.
const (
	msgBackoffLimit = "Job has reached the specified backoff limit"
	msgDeadline     = "Job was active longer than specified deadline"
	msgCompletions  = "Reached expected number of succeeded pods"
)

func findCondition(conds []batchv1.JobCondition, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func hasTrueCondition(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	c := findCondition(conds, t)
	return c != nil && c.Status == v1.ConditionTrue
}

// isFinished is a Job with a terminal condition; it is never touched again
// except to release its pods' finalizers.
func isFinished(j *batchv1.Job) bool {
	return hasTrueCondition(j.Status.Conditions, batchv1.JobComplete) || hasTrueCondition(j.Status.Conditions, batchv1.JobFailed)
}

// setCondition sets t to status with reason and message, keeping the
// transition time when the status does not change; it reports a change.
func setCondition(conds []batchv1.JobCondition, t batchv1.JobConditionType, status v1.ConditionStatus, reason, message string, now time.Time) ([]batchv1.JobCondition, bool) {
	if c := findCondition(conds, t); c != nil {
		if c.Status == status && c.Reason == reason && c.Message == message {
			return conds, false
		}
		if c.Status != status {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		c.Status, c.Reason, c.Message = status, reason, message
		c.LastProbeTime = metav1.NewTime(now)
		return conds, true
	}
	// A False condition that was never True is not worth recording.
	if status != v1.ConditionTrue {
		return conds, false
	}
	return append(conds, batchv1.JobCondition{
		Type: t, Status: status, Reason: reason, Message: message,
		LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now),
	}), true
}

// terminalFor is the condition a Job ends with once its pods are gone,
// given the interim condition that decided its fate.
func terminalFor(interim batchv1.JobConditionType) batchv1.JobConditionType {
	if interim == batchv1.JobSuccessCriteriaMet {
		return batchv1.JobComplete
	}
	return batchv1.JobFailed
}
