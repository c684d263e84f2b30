package policy

import (
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// poddisruptionbudgetTable prints budgets as upstream's `kubectl get pdb`.
var poddisruptionbudgetTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
		{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
		{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(pdb *policyv1.PodDisruptionBudget, now time.Time) []any {
		minAvailable, maxUnavailable := "N/A", "N/A"
		if pdb.Spec.MinAvailable != nil {
			minAvailable = pdb.Spec.MinAvailable.String()
		}
		if pdb.Spec.MaxUnavailable != nil {
			maxUnavailable = pdb.Spec.MaxUnavailable.String()
		}
		return []any{minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), printers.TranslateTimestampSince(pdb.CreationTimestamp, now)}
	}),
}
