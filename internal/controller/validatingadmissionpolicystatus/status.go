package validatingadmissionpolicystatus

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// upToDate reports whether p's status already describes its spec. Only a
// spec change moves the generation, so a policy whose observedGeneration
// has caught up is not type-checked again: its schemas are not watched,
// exactly as upstream.
func upToDate(p *admissionregistrationv1.ValidatingAdmissionPolicy) bool {
	return p.Generation <= p.Status.ObservedGeneration
}

// statusFor is the status p should carry once its expressions type-checked
// with warnings. typeChecking is sent even without warnings, as upstream
// sends it: a first clean check shows typeChecking: {}. A check that clears
// earlier warnings leaves no typeChecking at all, because apply removes
// the emptied field its manager owned; observedGeneration, not
// typeChecking, is what says a generation was checked. The conditions are
// not the controller's and are left out.
func statusFor(p *admissionregistrationv1.ValidatingAdmissionPolicy, warnings []admissionregistrationv1.ExpressionWarning) admissionregistrationv1.ValidatingAdmissionPolicyStatus {
	tc := &admissionregistrationv1.TypeChecking{}
	if len(warnings) > 0 {
		tc.ExpressionWarnings = append([]admissionregistrationv1.ExpressionWarning(nil), warnings...)
	}
	return admissionregistrationv1.ValidatingAdmissionPolicyStatus{
		ObservedGeneration: p.Generation,
		TypeChecking:       tc,
	}
}
