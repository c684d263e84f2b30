package networking

import (
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// servicecidrTable prints servicecidrs as upstream's `kubectl get` does.
var servicecidrTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "CIDRs", Type: "string", Description: networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(sc *networkingv1.ServiceCIDR, now time.Time) []any {
		return []any{strings.Join(sc.Spec.CIDRs, ","), printers.TranslateTimestampSince(sc.CreationTimestamp, now)}
	}),
}
