package admissionregistration

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// mutatingadmissionpolicyTable prints mutatingadmissionpolicies as
// upstream's `kubectl get` does.
var mutatingadmissionpolicyTable = &registry.Table{
	Columns: policyColumns("Mutations", "Mutation indicates the number of mutations rules defined in this configuration"),
	Row: registry.TypedRow(func(p *admissionregistrationv1.MutatingAdmissionPolicy, now time.Time) []any {
		return []any{int64(len(p.Spec.Mutations)), paramKindCell(p.Spec.ParamKind), printers.TranslateTimestampSince(p.CreationTimestamp, now)}
	}),
}
