package validatingadmissionpolicystatus

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// The warnings are upstream's TypeChecker's, word for word: kind, CEL's
// error and the caret under the offending token.
func TestSchemaCheckerWarnings(t *testing.T) {
	typo := "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^\n"
	confused := "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n | object.spec.replicas > '1'\n | .....................^\n"
	withMessage := testPolicy("p", 1, "object.spec.replicas > 1")
	withMessage.Spec.Validations[0].MessageExpression = "'too few: ' + object.spec.replicass"
	for _, tc := range []struct {
		name   string
		policy *admissionregistrationv1.ValidatingAdmissionPolicy
		want   []admissionregistrationv1.ExpressionWarning
	}{
		{name: "correct expression", policy: testPolicy("p", 1, "object.spec.replicas > 1")},
		{name: "field the kind lacks", policy: testPolicy("p", 1, "object.spec.replicass > 1"),
			want: []admissionregistrationv1.ExpressionWarning{{FieldRef: "spec.validations[0].expression", Warning: typo}}},
		{name: "only the faulty of several", policy: testPolicy("p", 1, "object.spec.paused", "object.spec.replicas > '1'"),
			want: []admissionregistrationv1.ExpressionWarning{{FieldRef: "spec.validations[1].expression", Warning: confused}}},
		{name: "message expression", policy: withMessage,
			want: []admissionregistrationv1.ExpressionWarning{{FieldRef: "spec.validations[0].messageExpression",
				Warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:26: undefined field 'replicass'\n | 'too few: ' + object.spec.replicass\n | .........................^\n"}}},
		// Nothing to check against is no warning: the policy is not wrong.
		{name: "kind without a schema", policy: testPolicyOn("p", 1, "", "configmaps", "object.data.nothing == 'x'")},
		{name: "resource nobody serves", policy: testPolicyOn("p", 1, "example.com", "widgets", "object.spec.nothing == 'x'")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := testChecker().Check(tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// A schema that could not be fetched is not a clean bill of health: the
// check fails and is retried rather than recorded as warning-free.
func TestSchemaCheckerResolutionFailure(t *testing.T) {
	c := testChecker()
	boom := errors.New("connection refused")
	c.schemas.(*fakeSchemas).fail = boom
	got, err := c.Check(testPolicyOn("p", 1, "", "configmaps", "object.data.x == 'y'"))
	if !errors.Is(err, boom) || got != nil {
		t.Fatalf("Check = %v, %v; want the resolution error", got, err)
	}
	// A failure for one kind fails the policy even if another resolved.
	p := testPolicy("p", 1, "object.spec.replicass > 1")
	p.Spec.MatchConstraints.ResourceRules[0].APIGroups = []string{"", "apps"}
	p.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"configmaps", "deployments"}
	if _, err := c.Check(p); !errors.Is(err, boom) {
		t.Fatalf("Check = %v; want the resolution error", err)
	}
}
