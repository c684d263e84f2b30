package core

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// endpointsTable prints endpoints as upstream's `kubectl get` does.
var endpointsTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(ep *corev1.Endpoints, now time.Time) []any {
		return []any{formatEndpoints(ep), printers.TranslateTimestampSince(ep.CreationTimestamp, now)}
	}),
}

// endpointsFields lists the fields a field selector over endpoints may name.
var endpointsFields func(runtime.Object) fields.Set

// formatEndpoints lists the first three ip:port pairs and counts the rest,
// as upstream's formatEndpoints does with every port selected.
func formatEndpoints(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	const max = 3
	list := []string{}
	more := false
	count := 0
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			// Headless services may have addresses without ports.
			count += len(ss.Addresses)
			for _, addr := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, addr.IP)
			}
			continue
		}
		for _, port := range ss.Ports {
			count += len(ss.Addresses)
			for _, addr := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, net.JoinHostPort(addr.IP, strconv.Itoa(int(port.Port))))
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	return ret
}
