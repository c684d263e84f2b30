package disruption

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	pdbhelper "k8s.io/component-helpers/apps/poddisruptionbudget"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// DeletionTimeout is how long a pod the eviction subresource recorded in
// status.disruptedPods is taken to be on its way out. A pod still not
// marked for deletion after that was not deleted after all (the delete
// failed) and counts again.
const DeletionTimeout = 2 * time.Minute

// staleConditionTimeout is how long a pod may carry a DisruptionTarget
// condition without being deleted before the condition is reset.
const staleConditionTimeout = 2 * time.Minute

// Owner is a pod's controller as far as a budget cares: who it is and
// how many pods it wants.
type Owner struct {
	UID   types.UID
	Scale int32
}

// OwnerFinder resolves a pod's controller reference: nil, nil when the
// reference names nothing live; an error when the owner cannot be asked.
type OwnerFinder func(ref *metav1.OwnerReference, namespace string) (*Owner, error)

// needsScale reports whether a budget counts its pods by their owners'
// scale rather than by the pods that exist: maxUnavailable, and a
// percentage minAvailable, are relative to what the owners want.
func needsScale(spec policyv1.PodDisruptionBudgetSpec) bool {
	if spec.MaxUnavailable != nil {
		return true
	}
	return spec.MinAvailable != nil && spec.MinAvailable.Type == intstr.String
}

// ExpectedScale adds up the scale of the pods' distinct controllers.
// Pods with no controller are returned by name (the budget's numbers are
// then unreliable, which an event says); a controller that cannot be
// found at all is an error.
func ExpectedScale(pods []*v1.Pod, find OwnerFinder) (expected int32, unmanaged []string, err error) {
	scales := map[types.UID]int32{}
	for _, pod := range pods {
		ref := metav1.GetControllerOf(pod)
		if ref == nil {
			unmanaged = append(unmanaged, pod.Name)
			continue
		}
		if _, ok := scales[ref.UID]; ok {
			continue
		}
		owner, err := find(ref, pod.Namespace)
		if err != nil {
			return 0, nil, err
		}
		if owner == nil {
			return 0, nil, fmt.Errorf("found no controllers for pod %q", pod.Name)
		}
		scales[owner.UID] = owner.Scale
	}
	for _, n := range scales {
		expected += n
	}
	return expected, unmanaged, nil
}

// Desired is the number of healthy pods a budget wants, and the number of
// pods it expects, given the pods that exist and (for budgets that
// needScale) their owners' total scale. Percentages round up, as
// upstream: minAvailable 50% of 3 wants 2; maxUnavailable 50% of 3 lets 2
// go.
func Desired(spec policyv1.PodDisruptionBudgetSpec, podCount, scale int32) (expected, desiredHealthy int32, err error) {
	switch {
	case spec.MaxUnavailable != nil:
		maxUnavailable, err := intstr.GetScaledValueFromIntOrPercent(spec.MaxUnavailable, int(scale), true)
		if err != nil {
			return 0, 0, err
		}
		return scale, max(scale-int32(maxUnavailable), 0), nil
	case spec.MinAvailable != nil && spec.MinAvailable.Type == intstr.Int:
		return podCount, spec.MinAvailable.IntVal, nil
	case spec.MinAvailable != nil:
		minAvailable, err := intstr.GetScaledValueFromIntOrPercent(spec.MinAvailable, int(scale), true)
		if err != nil {
			return 0, 0, err
		}
		return scale, int32(minAvailable), nil
	}
	return 0, 0, nil
}

// DisruptedPods keeps the entries of status.disruptedPods still in
// flight: pods that exist, are not yet marked for deletion, and were
// evicted less than DeletionTimeout ago. recheck is when the earliest of
// them expires (nil when none is left); overdue lists the pods whose
// entries expired without their deletion being seen.
func DisruptedPods(pods []*v1.Pod, recorded map[string]metav1.Time, now time.Time) (kept map[string]metav1.Time, recheck *time.Time, overdue []*v1.Pod) {
	kept = map[string]metav1.Time{}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		at, ok := recorded[pod.Name]
		if !ok {
			continue
		}
		expires := at.Add(DeletionTimeout)
		if expires.Before(now) {
			overdue = append(overdue, pod)
			continue
		}
		if recheck == nil || expires.Before(*recheck) {
			recheck = &expires
		}
		kept[pod.Name] = at
	}
	return kept, recheck, overdue
}

// CountHealthy counts the ready pods that are not on their way out.
func CountHealthy(pods []*v1.Pod, disrupted map[string]metav1.Time, now time.Time) int32 {
	var n int32
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if at, ok := disrupted[pod.Name]; ok && at.Add(DeletionTimeout).After(now) {
			continue
		}
		if controllerutil.IsPodReady(pod) {
			n++
		}
	}
	return n
}

// Status is the status a budget should have, and whether it differs from
// what it has. A budget that expects no pods allows no disruption, so
// that one whose first pods appear before this controller has seen them
// is safe.
func Status(pdb *policyv1.PodDisruptionBudget, currentHealthy, desiredHealthy, expected int32, disrupted map[string]metav1.Time) (policyv1.PodDisruptionBudgetStatus, bool) {
	allowed := currentHealthy - desiredHealthy
	if expected <= 0 || allowed <= 0 {
		allowed = 0
	}
	s := pdb.Status
	if s.CurrentHealthy == currentHealthy && s.DesiredHealthy == desiredHealthy && s.ExpectedPods == expected &&
		s.DisruptionsAllowed == allowed && apiequality.Semantic.DeepEqual(s.DisruptedPods, disrupted) &&
		s.ObservedGeneration == pdb.Generation && pdbhelper.ConditionsAreUpToDate(pdb) {
		return s, false
	}
	next := pdb.DeepCopy()
	next.Status = policyv1.PodDisruptionBudgetStatus{
		CurrentHealthy: currentHealthy, DesiredHealthy: desiredHealthy, ExpectedPods: expected,
		DisruptionsAllowed: allowed, DisruptedPods: disrupted, ObservedGeneration: pdb.Generation,
		Conditions: next.Status.Conditions,
	}
	pdbhelper.UpdateDisruptionAllowedCondition(next)
	return next.Status, true
}

// FailSafe is the status of a budget whose sync failed: no disruptions
// allowed, and why, so that evictions are refused rather than admitted
// on numbers nobody computed.
func FailSafe(pdb *policyv1.PodDisruptionBudget, err error) policyv1.PodDisruptionBudgetStatus {
	s := *pdb.Status.DeepCopy()
	s.DisruptionsAllowed = 0
	if s.Conditions == nil {
		s.Conditions = []metav1.Condition{}
	}
	apimeta.SetStatusCondition(&s.Conditions, metav1.Condition{
		Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse,
		Reason: policyv1.SyncFailedReason, Message: err.Error(), ObservedGeneration: s.ObservedGeneration,
	})
	return s
}

// StaleDisruptionTarget reports whether pod carries a DisruptionTarget
// condition nobody acted on (the pod is not being deleted), and how long
// until it is old enough to reset. The kubelet's own condition, and any
// on a finished pod, are never stale.
func StaleDisruptionTarget(pod *v1.Pod, now time.Time) (bool, time.Duration) {
	if pod.DeletionTimestamp != nil || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return false, 0
	}
	for _, c := range pod.Status.Conditions {
		if c.Type != v1.DisruptionTarget {
			continue
		}
		if c.Status != v1.ConditionTrue || c.Reason == v1.PodReasonTerminationByKubelet {
			return false, 0
		}
		return true, max(staleConditionTimeout-now.Sub(c.LastTransitionTime.Time), 0)
	}
	return false, 0
}
