package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// podtemplateTable prints podtemplates as upstream's `kubectl get` does:
// unlike the workloads' wide CONTAINERS and IMAGES columns, these are
// always shown, and there is no AGE.
var podtemplateTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Containers", Type: "string", Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Description: "Images referenced by each container in the template."},
		{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
	},
	Row: registry.TypedRow(func(pt *corev1.PodTemplate, _ time.Time) []any {
		names, images := printers.LayoutContainerCells(pt.Template.Spec.Containers)
		return []any{names, images, labels.FormatLabels(pt.Template.Labels)}
	}),
}
