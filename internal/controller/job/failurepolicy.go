package job

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
)

// policyVerdict is what a Job's pod failure policy says about one failed
// pod: whether it counts toward the back-off limit, and, for a FailJob
// rule, the message the Job fails with.
type policyVerdict struct {
	count      bool
	failJob    bool
	message    string
	failIndex  bool
	ruleAction batchv1.PodFailurePolicyAction
}

// matchPodFailurePolicy applies the first rule that matches the failed pod,
// as upstream: exit-code rules look at terminated containers with a
// non-zero code, condition rules at the pod's conditions. With no policy or
// no matching rule the failure counts.
func matchPodFailurePolicy(policy *batchv1.PodFailurePolicy, pod *v1.Pod) policyVerdict {
	if policy == nil {
		return policyVerdict{count: true}
	}
	for i, rule := range policy.Rules {
		var msg string
		matched := false
		if rule.OnExitCodes != nil {
			if cs := matchExitCodes(rule.OnExitCodes, pod); cs != nil {
				matched = true
				msg = fmt.Sprintf("Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d",
					cs.Name, pod.Namespace, pod.Name, cs.State.Terminated.ExitCode, rule.Action, i)
			}
		}
		if !matched && len(rule.OnPodConditions) > 0 {
			if t, ok := matchPodConditions(rule.OnPodConditions, pod); ok {
				matched = true
				msg = fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d",
					pod.Namespace, pod.Name, t, rule.Action, i)
			}
		}
		if !matched {
			continue
		}
		switch rule.Action {
		case batchv1.PodFailurePolicyActionIgnore:
			return policyVerdict{ruleAction: rule.Action}
		case batchv1.PodFailurePolicyActionFailJob:
			return policyVerdict{count: true, failJob: true, message: msg, ruleAction: rule.Action}
		case batchv1.PodFailurePolicyActionFailIndex:
			return policyVerdict{count: true, failIndex: true, ruleAction: rule.Action}
		default:
			return policyVerdict{count: true, ruleAction: rule.Action}
		}
	}
	return policyVerdict{count: true}
}

func matchExitCodes(req *batchv1.PodFailurePolicyOnExitCodesRequirement, pod *v1.Pod) *v1.ContainerStatus {
	for _, list := range [][]v1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range list {
			cs := &list[i]
			if cs.State.Terminated == nil || cs.State.Terminated.ExitCode == 0 {
				continue
			}
			if req.ContainerName != nil && *req.ContainerName != cs.Name {
				continue
			}
			in := slices.Contains(req.Values, cs.State.Terminated.ExitCode)
			if (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) == in {
				return cs
			}
		}
	}
	return nil
}

func matchPodConditions(patterns []batchv1.PodFailurePolicyOnPodConditionsPattern, pod *v1.Pod) (v1.PodConditionType, bool) {
	for _, c := range pod.Status.Conditions {
		for _, p := range patterns {
			status := p.Status
			if status == "" {
				status = v1.ConditionTrue
			}
			if c.Type == p.Type && c.Status == status {
				return c.Type, true
			}
		}
	}
	return "", false
}
