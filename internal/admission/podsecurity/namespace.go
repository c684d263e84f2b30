package podsecurity

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/orca-project/orca/internal/admission"
)

// maxPodsToCheck bounds the existing pods a namespace update is checked
// against, as upstream, so that a large namespace cannot stall the write.
const maxPodsToCheck = 3000

// Namespace decides a namespace's create or update: its labels must be
// valid (unless they were already invalid in the same way). When an
// update sets or tightens enforce, it returns the new level, against
// which the caller checks the namespace's pods (ExistingPods).
func (c *Checker) Namespace(a *admission.Attributes) (Decision, *api.LevelVersion) {
	if a.Subresource != "" {
		return Decision{}, nil
	}
	ns, ok := a.Object.(*corev1.Namespace)
	if !ok {
		return Decision{Err: apierrors.NewBadRequest("failed to decode namespace")}, nil
	}
	newPolicy, newErrs := c.Policy(ns.Labels)
	switch a.Operation {
	case admission.Create:
		if len(newErrs) > 0 {
			return Decision{Err: apierrors.NewInvalid(a.Kind.GroupKind(), a.Name, newErrs)}, nil
		}
		return c.exemptNamespaceWarning(ns, newPolicy), nil
	case admission.Update:
		old, ok := a.OldObject.(*corev1.Namespace)
		if !ok {
			return Decision{Err: apierrors.NewBadRequest("failed to decode old namespace")}, nil
		}
		oldPolicy, oldErrs := c.Policy(old.Labels)
		if len(newErrs) > 0 && (len(oldErrs) == 0 || !reflect.DeepEqual(newErrs, oldErrs)) {
			return Decision{Err: apierrors.NewInvalid(a.Kind.GroupKind(), a.Name, newErrs)}, nil
		}
		// Existing pods matter only when enforce becomes stricter or
		// moves to another version, and never in an exempt namespace.
		switch {
		case newPolicy.Enforce == oldPolicy.Enforce,
			newPolicy.Enforce.Level == api.LevelPrivileged,
			newPolicy.Enforce.Version == oldPolicy.Enforce.Version && api.CompareLevels(newPolicy.Enforce.Level, oldPolicy.Enforce.Level) < 1:
			return Decision{}, nil
		}
		if c.exemptNamespace(ns.Name) {
			return c.exemptNamespaceWarning(ns, newPolicy), nil
		}
		return Decision{}, &newPolicy.Enforce
	}
	return Decision{}, nil
}

func (c *Checker) exemptNamespace(name string) bool {
	return c.exemptRequest(&admission.Attributes{Namespace: name}) == "namespace"
}

// exemptNamespaceWarning tells whoever labels an exempt namespace that
// its labels are ignored, naming the modes they set.
func (c *Checker) exemptNamespaceWarning(ns *corev1.Namespace, p api.Policy) Decision {
	if !c.exemptNamespace(ns.Name) || p.FullyPrivileged() || p.Equivalent(&c.defaults) {
		return Decision{}
	}
	var modes []string
	for _, m := range []struct {
		name, level, version string
		lv                   api.LevelVersion
	}{
		{"enforce", api.EnforceLevelLabel, api.EnforceVersionLabel, p.Enforce},
		{"audit", api.AuditLevelLabel, api.AuditVersionLabel, p.Audit},
		{"warn", api.WarnLevelLabel, api.WarnVersionLabel, p.Warn},
	} {
		_, hasLevel := ns.Labels[m.level]
		_, hasVersion := ns.Labels[m.version]
		if m.lv.Level != api.LevelPrivileged && (hasLevel || hasVersion) {
			modes = append(modes, m.name+"="+m.lv.String())
		}
	}
	return Decision{Warnings: []string{fmt.Sprintf("namespace %q is exempt from Pod Security, and the policy (%s) will be ignored", ns.Name, strings.Join(modes, ", "))}}
}

// ExistingPods checks a namespace's pods against a new enforce level and
// returns upstream's warnings: one line per distinct set of violations,
// naming the first pod by name and how many others share it. Pods of one
// controller after the first are checked last, pods of an exempt runtime
// class not at all; checking stops at maxPodsToCheck pods or when ctx
// ends, and the warnings then say how many were checked.
func (c *Checker) ExistingPods(ctx context.Context, namespace string, enforce api.LevelVersion, pods []*corev1.Pod) []string {
	pods = c.prioritizePods(pods)
	total := len(pods)
	if len(pods) > maxPodsToCheck {
		pods = pods[:maxPodsToCheck]
	}
	type count struct {
		first string
		n     int
	}
	var (
		reasons []string
		counts  = map[string]count{}
		checked = len(pods)
	)
	for i, pod := range pods {
		r := policy.AggregateCheckResults(c.evaluator.EvaluatePod(enforce, &pod.ObjectMeta, &pod.Spec))
		if !r.Allowed {
			reason := r.ForbiddenReason()
			cnt, seen := counts[reason]
			if !seen {
				cnt.first = pod.Name
				reasons = append(reasons, reason)
			} else if pod.Name < cnt.first {
				cnt.first = pod.Name
			}
			cnt.n++
			counts[reason] = cnt
		}
		if ctx.Err() != nil {
			checked = i + 1
			break
		}
	}
	var warnings []string
	if checked < total {
		warnings = append(warnings, fmt.Sprintf("new PodSecurity enforce level only checked against the first %d of %d existing pods", checked, total))
	}
	if len(reasons) > 0 {
		warnings = append(warnings, fmt.Sprintf("existing pods in namespace %q violate the new PodSecurity enforce level %q", namespace, enforce.String()))
	}
	for i, reason := range reasons {
		switch cnt := counts[reason]; cnt.n {
		case 1:
			reasons[i] = fmt.Sprintf("%s: %s", cnt.first, reason)
		case 2:
			reasons[i] = fmt.Sprintf("%s (and 1 other pod): %s", cnt.first, reason)
		default:
			reasons[i] = fmt.Sprintf("%s (and %d other pods): %s", cnt.first, cnt.n-1, reason)
		}
	}
	sort.Strings(reasons)
	return append(warnings, reasons...)
}

// prioritizePods drops pods of exempt runtime classes and puts every pod
// whose controller already has a pod in the list at the end, so that the
// first pods checked are as varied as possible.
func (c *Checker) prioritizePods(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	var later []*corev1.Pod
	seen := map[types.UID]bool{}
	for _, pod := range pods {
		if c.exemptRuntimeClass(pod.Spec.RuntimeClassName) {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		switch {
		case ref == nil:
			out = append(out, pod)
		case seen[ref.UID]:
			later = append(later, pod)
		default:
			seen[ref.UID] = true
			out = append(out, pod)
		}
	}
	return append(out, later...)
}
