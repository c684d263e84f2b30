package eviction

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	pdbhelper "k8s.io/component-helpers/apps/poddisruptionbudget"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// MaxDisruptedPods bounds status.disruptedPods: past it, evictions the
// disruption controller has not yet confirmed are too many to admit more.
const MaxDisruptedPods = 2000

// MultipleBudgetsMessage is upstream's refusal when a pod is covered by
// more than one budget.
const MultipleBudgetsMessage = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."

// TooManyRequestsMessage is the message of every 429 a budget answers.
const TooManyRequestsMessage = "Cannot evict pod as it would violate the pod's disruption budget."

var budgetResource = schema.GroupResource{Group: policyv1.GroupName, Resource: "poddisruptionbudget"}

// CanIgnoreBudgets reports whether pod may be deleted without asking its
// budgets: a pod that has finished, has not started, or is already being
// deleted disrupts nothing more by going.
func CanIgnoreBudgets(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return pod.DeletionTimestamp != nil
}

// EnforceResourceVersion reports whether the delete must be conditional
// on the resourceVersion the decision was made on, so that a pod that
// became ready (and so counts for its budget) meanwhile is not deleted.
// Terminal and terminating pods cannot become ready again.
func EnforceResourceVersion(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return false
	}
	return pod.DeletionTimestamp == nil
}

// Covering returns the budgets of pod's namespace whose selector matches
// it. A budget with a malformed selector covers nothing.
func Covering(pdbs []*policyv1.PodDisruptionBudget, pod *corev1.Pod) []*policyv1.PodDisruptionBudget {
	var out []*policyv1.PodDisruptionBudget
	for _, pdb := range pdbs {
		if pdb.Namespace != pod.Namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out
}

// UnhealthyMayGo reports whether pod, not ready, may be deleted without
// taking a disruption from pdb: always under AlwaysAllow; under
// IfHealthyBudget (the default) only while the budget is met, since the
// pod does not count towards it.
func UnhealthyMayGo(pod *corev1.Pod, pdb *policyv1.PodDisruptionBudget) bool {
	if controllerutil.IsPodReady(pod) {
		return false
	}
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
		return true
	}
	return pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0
}

// TooManyRequests is the 429 answered while a budget's status is behind
// its spec (or a conditional delete lost a race): the client retries.
func TooManyRequests(pdbName string) *apierrors.StatusError {
	err := apierrors.NewTooManyRequests(TooManyRequestsMessage, 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdbName),
	})
	return err
}

// TakeDisruption takes one disruption for podName from pdb, in place: it
// lowers disruptionsAllowed (updating the DisruptionAllowed condition when
// none are left) and, unless dryRun, records the pod in disruptedPods at
// now, which tells the disruption controller not to count it as healthy
// while its deletion is under way. It returns upstream's refusal when the
// budget has none to give.
func TakeDisruption(pdb *policyv1.PodDisruptionBudget, podName string, now time.Time, dryRun bool) error {
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return TooManyRequests(pdb.Name)
	}
	if pdb.Status.DisruptionsAllowed < 0 {
		return forbidden(pdb.Name, "pdb disruptions allowed is negative", "pdb disruptions allowed is negative")
	}
	if len(pdb.Status.DisruptedPods) > MaxDisruptedPods {
		return forbidden(pdb.Name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
			"too many pending evictions not confirmed by PDB controller")
	}
	if pdb.Status.DisruptionsAllowed == 0 {
		err := apierrors.NewTooManyRequests(TooManyRequestsMessage, 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type: policyv1.DisruptionBudgetCause, Message: refusal(pdb),
		})
		return err
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptionsAllowed == 0 {
		pdbhelper.UpdateDisruptionAllowedCondition(pdb)
	}
	if dryRun {
		return nil
	}
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[podName] = metav1.NewTime(now)
	return nil
}

// refusal explains a budget with no disruptions left, trusting the counts
// only when the controller's last sync did not fail.
func refusal(pdb *policyv1.PodDisruptionBudget) string {
	c := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	falseWithMessage := c != nil && c.Status == metav1.ConditionFalse && c.Message != ""
	switch {
	case falseWithMessage && c.Reason == policyv1.SyncFailedReason:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, c.Message)
	case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
		return fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
	case falseWithMessage:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, c.Reason, c.Message)
	}
	return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
}

func forbidden(pdbName, reason, detail string) error {
	err := apierrors.NewForbidden(budgetResource, pdbName, errors.New(reason))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: %s", pdbName, detail),
	})
	return err
}

// DisruptionTarget is the condition an evicted pod gets before it is
// deleted, so that its controller and its kubelet know why it goes.
func DisruptionTarget(now time.Time) corev1.PodCondition {
	return corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting",
		LastTransitionTime: metav1.NewTime(now),
	}
}

// SetCondition sets c on pod's status, keeping the transition time when
// the status does not change, as upstream's UpdatePodCondition.
func SetCondition(status *corev1.PodStatus, c corev1.PodCondition) {
	for i := range status.Conditions {
		old := &status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	status.Conditions = append(status.Conditions, c)
}
