package admissionregistration

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// validatingadmissionpolicyTable prints validatingadmissionpolicies as
// upstream's `kubectl get` does.
var validatingadmissionpolicyTable = &registry.Table{
	Columns: policyColumns("Validations", "Validations indicates the number of validation rules defined in this configuration"),
	Row: registry.TypedRow(func(p *admissionregistrationv1.ValidatingAdmissionPolicy, now time.Time) []any {
		return []any{int64(len(p.Spec.Validations)), paramKindCell(p.Spec.ParamKind), printers.TranslateTimestampSince(p.CreationTimestamp, now)}
	}),
}
