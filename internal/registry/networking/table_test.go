package networking

import (
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

var tableNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestServiceCIDRTable(t *testing.T) {
	printerstest.CheckColumns(t, servicecidrTable, []printerstest.Column{printerstest.Col("CIDRs", "string", 0), printerstest.Col("Age", "string", 0)})
	sc := serviceCIDR("10.43.0.0/16", "fd00:43::/108")
	sc.CreationTimestamp = metav1.NewTime(tableNow.Add(-2 * time.Hour))
	printerstest.CheckRow(t, servicecidrTable, sc, tableNow, []any{"10.43.0.0/16,fd00:43::/108", "120m"})
	printerstest.CheckRow(t, servicecidrTable, serviceCIDR(), tableNow, []any{"", "<unknown>"})
}

func TestIPAddressTable(t *testing.T) {
	printerstest.CheckColumns(t, ipaddressTable, []printerstest.Column{printerstest.Col("ParentRef", "string", 0)})
	tests := []struct {
		ref  *networkingv1.ParentReference
		want string
	}{
		{&networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "kubernetes"}, "services/default/kubernetes"},
		{&networkingv1.ParentReference{Group: "MyGroup", Resource: "MyResources", Name: "bar"}, "myresources.mygroup/bar"},
		{nil, "<none>"},
	}
	for _, tc := range tests {
		printerstest.CheckRow(t, ipaddressTable, ipAddress(tc.ref), tableNow, []any{tc.want})
	}
}
