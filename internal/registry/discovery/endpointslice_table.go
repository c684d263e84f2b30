package discovery

import (
	"strconv"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// endpointsliceTable prints endpointslices as upstream's `kubectl get` does.
var endpointsliceTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "AddressType", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["addressType"]},
		{Name: "Ports", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["ports"]},
		{Name: "Endpoints", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["endpoints"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(es *discoveryv1.EndpointSlice, now time.Time) []any {
		return []any{
			string(es.AddressType),
			formatPorts(es.Ports),
			formatEndpoints(es.Endpoints),
			printers.TranslateTimestampSince(es.CreationTimestamp, now),
		}
	}),
}

// endpointsliceFields lists the fields a field selector over endpointslices may name.
var endpointsliceFields func(runtime.Object) fields.Set

const listMax = 3

// formatPorts lists the first three port numbers; a port without a number
// shows its name, and one with neither matches every port ("*").
func formatPorts(ports []discoveryv1.EndpointPort) string {
	list := []string{}
	more := false
	for _, p := range ports {
		if len(list) < listMax {
			n := "*"
			if p.Port != nil {
				n = strconv.Itoa(int(*p.Port))
			} else if p.Name != nil {
				n = *p.Name
			}
			list = append(list, n)
		} else if len(list) == listMax {
			more = true
		}
	}
	return printers.ListWithMore(list, more, len(ports), listMax)
}

// formatEndpoints lists the first three addresses across all endpoints.
func formatEndpoints(endpoints []discoveryv1.Endpoint) string {
	list := []string{}
	more := false
	count := 0
	for _, e := range endpoints {
		for _, a := range e.Addresses {
			if len(list) < listMax {
				list = append(list, a)
			} else if len(list) == listMax {
				more = true
			}
			count++
		}
	}
	return printers.ListWithMore(list, more, count, listMax)
}
