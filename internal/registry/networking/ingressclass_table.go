package networking

import (
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// ingressclassTable prints ingressclasses as upstream's `kubectl get`
// does. Upstream marks the default class in its NAME cell, so the table
// places the name itself, in a column declared as the server's own.
var ingressclassTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Controller", Type: "string", Description: "Controller that is responsible for handling this class"},
		{Name: "Parameters", Type: "string", Description: "A reference to a resource with additional parameters"},
		printers.AgeColumn(),
	},
	OwnName: true,
	Row: registry.TypedRow(func(ic *networkingv1.IngressClass, now time.Time) []any {
		name := ic.Name
		if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			name += " (default)"
		}
		parameters := "<none>"
		if p := ic.Spec.Parameters; p != nil {
			parameters = p.Kind
			if p.APIGroup != nil {
				parameters += "." + *p.APIGroup
			}
			parameters += "/" + p.Name
		}
		return []any{name, ic.Spec.Controller, parameters, printers.TranslateTimestampSince(ic.CreationTimestamp, now)}
	}),
}
