package discovery

import (
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

func tablePtr[T any](v T) *T { return &v }

func TestEndpointSliceTable(t *testing.T) {
	tableNow := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tableCol := printerstest.Col
	printerstest.CheckColumns(t, endpointsliceTable, []printerstest.Column{
		tableCol("AddressType", "string", 0), tableCol("Ports", "string", 0), tableCol("Endpoints", "string", 0), tableCol("Age", "string", 0),
	})
	for _, tc := range []struct {
		name string
		es   discoveryv1.EndpointSlice
		want []any
	}{
		{
			name: "empty",
			es:   discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4},
			want: []any{"IPv4", "<unset>", "<unset>", "<unknown>"},
		},
		{
			name: "named, numbered and wildcard ports",
			es: discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(tableNow.Add(-2 * time.Minute))},
				AddressType: discoveryv1.AddressTypeIPv6,
				Ports:       []discoveryv1.EndpointPort{{Port: tablePtr(int32(443))}, {Name: tablePtr("metrics")}, {}},
				Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"fd00::1"}}, {Addresses: []string{"fd00::2"}}},
			},
			want: []any{"IPv6", "443,metrics,*", "fd00::1,fd00::2", "2m"},
		},
		{
			name: "more than three",
			es: discoveryv1.EndpointSlice{
				AddressType: discoveryv1.AddressTypeIPv4,
				Ports:       []discoveryv1.EndpointPort{{Port: tablePtr(int32(1))}, {Port: tablePtr(int32(2))}, {Port: tablePtr(int32(3))}, {Port: tablePtr(int32(4))}, {Port: tablePtr(int32(5))}},
				Endpoints: []discoveryv1.Endpoint{
					{Addresses: []string{"10.0.0.1", "10.0.0.2"}}, {Addresses: []string{"10.0.0.3"}}, {Addresses: []string{"10.0.0.4"}},
				},
			},
			want: []any{"IPv4", "1,2,3 + 2 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...", "<unknown>"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { printerstest.CheckRow(t, endpointsliceTable, &tc.es, tableNow, tc.want) })
	}
}
