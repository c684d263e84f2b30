package namespace

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// The conditions the namespace controller maintains, with upstream's
// reasons and messages for the healthy state: kubectl describe and
// tooling that waits on namespaces read them.
var (
	conditionTypes = []corev1.NamespaceConditionType{
		corev1.NamespaceDeletionDiscoveryFailure,
		corev1.NamespaceDeletionGVParsingFailure,
		corev1.NamespaceDeletionContentFailure,
		corev1.NamespaceContentRemaining,
		corev1.NamespaceFinalizersRemaining,
	}
	okMessages = map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionDiscoveryFailure: "All resources successfully discovered",
		corev1.NamespaceDeletionGVParsingFailure: "All legacy kube types successfully parsed",
		corev1.NamespaceDeletionContentFailure:   "All content successfully deleted, may be waiting on finalization",
		corev1.NamespaceContentRemaining:         "All content successfully removed",
		corev1.NamespaceFinalizersRemaining:      "All content-preserving finalizers finished",
	}
	okReasons = map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionDiscoveryFailure: "ResourcesDiscovered",
		corev1.NamespaceDeletionGVParsingFailure: "ParsedGroupVersions",
		corev1.NamespaceDeletionContentFailure:   "ContentDeleted",
		corev1.NamespaceContentRemaining:         "ContentRemoved",
		corev1.NamespaceFinalizersRemaining:      "ContentHasNoFinalizers",
	}
)

// report is what one pass over a namespace's content found.
type report struct {
	// discoveryErr is set when some API groups could not be discovered.
	discoveryErr error
	failedGroups int
	// deleteErrs are the resource types whose content could not be deleted.
	deleteErrs []error
	// remaining counts objects still present per resource, and
	// finalizers how many of them each finalizer holds back.
	remaining  map[schema.GroupVersionResource]int
	finalizers map[string]int
}

// empty reports whether the pass found nothing left and nothing failing.
func (r report) empty() bool {
	if len(r.deleteErrs) > 0 {
		return false
	}
	for _, n := range r.remaining {
		if n > 0 {
			return false
		}
	}
	return true
}

// failureConditions turns a report into the conditions that are not in
// their healthy state, with upstream's reasons and messages.
func failureConditions(r report, now metav1.Time) []corev1.NamespaceCondition {
	var out []corev1.NamespaceCondition
	if r.discoveryErr != nil {
		out = append(out, corev1.NamespaceCondition{
			Type: corev1.NamespaceDeletionDiscoveryFailure, Status: corev1.ConditionTrue, LastTransitionTime: now,
			Reason: "DiscoveryFailed", Message: fmt.Sprintf("Discovery failed for some groups, %d failing: %v", r.failedGroups, r.discoveryErr),
		})
	}
	if len(r.deleteErrs) > 0 {
		out = append(out, corev1.NamespaceCondition{
			Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionTrue, LastTransitionTime: now,
			Reason: "ContentDeletionFailed", Message: fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(r.deleteErrs), utilerrors.NewAggregate(r.deleteErrs)),
		})
	}
	var remaining []string
	for gvr, n := range r.remaining {
		if n > 0 {
			remaining = append(remaining, fmt.Sprintf("%s.%s has %d resource instances", gvr.Resource, gvr.Group, n))
		}
	}
	if len(remaining) > 0 {
		sort.Strings(remaining)
		out = append(out, corev1.NamespaceCondition{
			Type: corev1.NamespaceContentRemaining, Status: corev1.ConditionTrue, LastTransitionTime: now,
			Reason: "SomeResourcesRemain", Message: "Some resources are remaining: " + strings.Join(remaining, ", "),
		})
	}
	var byFinalizer []string
	for f, n := range r.finalizers {
		if n > 0 {
			byFinalizer = append(byFinalizer, fmt.Sprintf("%s in %d resource instances", f, n))
		}
	}
	if len(byFinalizer) > 0 {
		sort.Strings(byFinalizer)
		out = append(out, corev1.NamespaceCondition{
			Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionTrue, LastTransitionTime: now,
			Reason: "SomeFinalizersRemain", Message: "Some content in the namespace has finalizers remaining: " + strings.Join(byFinalizer, ", "),
		})
	}
	return out
}

// mergeConditions computes a namespace's next conditions: every
// maintained type is present, in its failing state when failures names it
// and healthy otherwise; a condition that did not change keeps its
// transition time so that writing it again is a no-op. Conditions set by
// others are kept.
func mergeConditions(current, failures []corev1.NamespaceCondition, now metav1.Time) []corev1.NamespaceCondition {
	byType := map[corev1.NamespaceConditionType]corev1.NamespaceCondition{}
	for _, c := range failures {
		if _, dup := byType[c.Type]; !dup {
			byType[c.Type] = c
		}
	}
	var out []corev1.NamespaceCondition
	maintained := map[corev1.NamespaceConditionType]bool{}
	for _, t := range conditionTypes {
		maintained[t] = true
		next, ok := byType[t]
		if !ok {
			next = corev1.NamespaceCondition{Type: t, Status: corev1.ConditionFalse, LastTransitionTime: now, Reason: okReasons[t], Message: okMessages[t]}
		}
		for _, cur := range current {
			if cur.Type == t && cur.Status == next.Status && cur.Reason == next.Reason && cur.Message == next.Message {
				next.LastTransitionTime = cur.LastTransitionTime
			}
		}
		out = append(out, next)
	}
	for _, cur := range current {
		if !maintained[cur.Type] {
			out = append(out, cur)
		}
	}
	return out
}

// withoutFinalizer is spec.finalizers with the "kubernetes" finalizer
// removed; ok is false when it was not there (nothing left to do).
func withoutFinalizer(fs []corev1.FinalizerName) (out []corev1.FinalizerName, ok bool) {
	for _, f := range fs {
		if f == corev1.FinalizerKubernetes {
			ok = true
			continue
		}
		out = append(out, f)
	}
	return out, ok
}
