package networking

import (
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orca-project/orca/internal/registry"
)

// ipaddressTable prints ipaddresses as upstream's `kubectl get` does.
// Upstream's printer also fills an age cell that no column declares,
// which kubectl drops; the row here stops at the declared columns.
var ipaddressTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "ParentRef", Type: "string", Description: networkingv1.IPAddressSpec{}.SwaggerDoc()["parentRef"]},
	},
	Row: registry.TypedRow(func(ip *networkingv1.IPAddress, _ time.Time) []any {
		return []any{parentRefString(ip.Spec.ParentRef)}
	}),
}

// parentRefString is "services/default/kubernetes": the lower-cased
// group resource, then the namespace if any, then the name.
func parentRefString(ref *networkingv1.ParentReference) string {
	if ref == nil {
		return "<none>"
	}
	s := strings.ToLower(schema.GroupResource{Group: ref.Group, Resource: ref.Resource}.String())
	if ref.Namespace != "" {
		s += "/" + ref.Namespace
	}
	return s + "/" + ref.Name
}
