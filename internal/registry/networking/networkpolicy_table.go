package networking

import (
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// networkpolicyTable prints networkpolicies as upstream's `kubectl get`
// does: an empty pod selector, which selects every pod, prints as
// "<none>".
var networkpolicyTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Pod-Selector", Type: "string", Description: networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(np *networkingv1.NetworkPolicy, now time.Time) []any {
		return []any{metav1.FormatLabelSelector(&np.Spec.PodSelector), printers.TranslateTimestampSince(np.CreationTimestamp, now)}
	}),
}
