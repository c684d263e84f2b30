package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestValidatingAdmissionPolicyStatus creates a policy one of whose
// expressions names a field Deployments lack: the controller manager's
// validatingadmissionpolicy-status-controller, type-checking it against
// the schema the API server publishes, reports upstream's warning for that
// expression alone and, once the typo is fixed, withdraws it for the new
// generation.
func TestValidatingAdmissionPolicyStatus(t *testing.T) {
	ctx := context.Background()
	const name = "vapstatus-typo"
	mustKubectl(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: `+name+`}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: object.spec.replicass > 1
  - expression: object.spec.replicas <= 10
`, "apply", "-f", "-")
	defer runKubectl(t, "", "delete", "validatingadmissionpolicy", name)

	// status waits for the status of the policy's current generation.
	status := func() *admissionregistrationv1.ValidatingAdmissionPolicy {
		t.Helper()
		var p *admissionregistrationv1.ValidatingAdmissionPolicy
		eventually(t, 30*time.Second, func() error {
			var err error
			if p, err = client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{}); err != nil {
				return err
			}
			if p.Status.ObservedGeneration != p.Generation {
				return fmt.Errorf("observedGeneration %d, generation %d", p.Status.ObservedGeneration, p.Generation)
			}
			return nil
		})
		return p
	}

	p := status()
	if p.Status.TypeChecking == nil || len(p.Status.TypeChecking.ExpressionWarnings) != 1 {
		t.Fatalf("status %+v, want one expression warning", p.Status)
	}
	w := p.Status.TypeChecking.ExpressionWarnings[0]
	if w.FieldRef != "spec.validations[0].expression" {
		t.Errorf("warning on %q, want spec.validations[0].expression", w.FieldRef)
	}
	if want := "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^\n"; w.Warning != want {
		t.Errorf("warning %q, want %q", w.Warning, want)
	}
	// As users read it.
	out := mustKubectl(t, "", "get", "validatingadmissionpolicy", name, "-o", "jsonpath={.status.typeChecking.expressionWarnings[*].fieldRef}")
	if out != "spec.validations[0].expression" {
		t.Errorf("kubectl: fieldRefs %q", out)
	}

	// The fix is a new generation, checked anew.
	mustKubectl(t, "", "patch", "validatingadmissionpolicy", name, "--type=json",
		"-p", `[{"op":"replace","path":"/spec/validations/0/expression","value":"object.spec.replicas > 1"}]`)
	p = status()
	if p.Generation < 2 {
		t.Fatalf("generation %d after the fix, want it to have moved", p.Generation)
	}
	if tc := p.Status.TypeChecking; tc != nil && len(tc.ExpressionWarnings) != 0 {
		var refs []string
		for _, w := range tc.ExpressionWarnings {
			refs = append(refs, w.FieldRef)
		}
		t.Errorf("warnings after the fix on %s", strings.Join(refs, ", "))
	}
}
