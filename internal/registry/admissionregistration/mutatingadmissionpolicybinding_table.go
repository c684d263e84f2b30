package admissionregistration

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// mutatingadmissionpolicybindingTable prints mutatingadmissionpolicybindings as upstream's `kubectl get` does.
var mutatingadmissionpolicybindingTable = &registry.Table{
	Columns: bindingColumns(),
	Row: registry.TypedRow(func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding, now time.Time) []any {
		return []any{b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), printers.TranslateTimestampSince(b.CreationTimestamp, now)}
	}),
}
