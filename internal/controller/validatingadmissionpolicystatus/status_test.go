package validatingadmissionpolicystatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func TestUpToDate(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		generation, observed int64
		want                 bool
	}{
		{"never checked", 1, 0, false},
		{"spec changed since the check", 3, 2, false},
		{"checked this generation", 2, 2, true},
		// A status from a namesake's later generation (the policy was
		// recreated): upstream leaves it, and so does Orca.
		{"observed ahead", 1, 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPolicy("p", tc.generation, "true")
			p.Status.ObservedGeneration = tc.observed
			if got := upToDate(p); got != tc.want {
				t.Errorf("upToDate(generation %d, observed %d) = %v, want %v", tc.generation, tc.observed, got, tc.want)
			}
		})
	}
}

func TestStatusFor(t *testing.T) {
	w := func(ref, text string) admissionregistrationv1.ExpressionWarning {
		return admissionregistrationv1.ExpressionWarning{FieldRef: ref, Warning: text}
	}
	for _, tc := range []struct {
		name     string
		status   admissionregistrationv1.ValidatingAdmissionPolicyStatus // what the policy holds
		warnings []admissionregistrationv1.ExpressionWarning
		want     admissionregistrationv1.ValidatingAdmissionPolicyStatus
	}{{
		name: "clean check still reports typeChecking",
		want: admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: 5, TypeChecking: &admissionregistrationv1.TypeChecking{}},
	}, {
		name:     "warnings in the checker's order",
		warnings: []admissionregistrationv1.ExpressionWarning{w("spec.validations[1].expression", "b"), w("spec.validations[0].messageExpression", "a")},
		want: admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: 5, TypeChecking: &admissionregistrationv1.TypeChecking{
			ExpressionWarnings: []admissionregistrationv1.ExpressionWarning{w("spec.validations[1].expression", "b"), w("spec.validations[0].messageExpression", "a")},
		}},
	}, {
		name: "old warnings and conditions are not carried over",
		status: admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: 4,
			TypeChecking: &admissionregistrationv1.TypeChecking{ExpressionWarnings: []admissionregistrationv1.ExpressionWarning{w("spec.validations[0].expression", "old")}}},
		want: admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: 5, TypeChecking: &admissionregistrationv1.TypeChecking{}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPolicy("p", 5, "true")
			p.Status = tc.status
			got := statusFor(p, tc.warnings)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if len(tc.warnings) > 0 {
				tc.warnings[0].Warning = "changed"
				if got.TypeChecking.ExpressionWarnings[0].Warning == "changed" {
					t.Error("the status shares the checker's slice")
				}
			}
		})
	}
}
