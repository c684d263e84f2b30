package job

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
)

// matchSuccessPolicy applies an Indexed Job's success policy to its
// succeeded indexes, as upstream: the first rule met wins — all of its
// succeededIndexes (or succeededCount of them), or succeededCount indexes
// at all when it lists none.
func matchSuccessPolicy(policy *batchv1.SuccessPolicy, completions int, succeeded indexSet) (string, bool) {
	if policy == nil || len(succeeded) == 0 {
		return "", false
	}
	for i, rule := range policy.Rules {
		switch {
		case rule.SucceededIndexes != nil:
			required := parseIndexes(*rule.SucceededIndexes, completions)
			if len(required) == 0 {
				continue
			}
			n := 0
			for ix := range required {
				if succeeded[ix] {
					n++
				}
			}
			if (rule.SucceededCount == nil && n == len(required)) || (rule.SucceededCount != nil && n >= int(*rule.SucceededCount)) {
				return fmt.Sprintf("Matched rules at index %d", i), true
			}
		case rule.SucceededCount != nil && len(succeeded) >= int(*rule.SucceededCount):
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}
