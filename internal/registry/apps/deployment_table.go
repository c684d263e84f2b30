package apps

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// deploymentTable prints deployments as upstream's `kubectl get` does.
var deploymentTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		// Upstream types these two as strings yet fills them with integers.
		{Name: "Up-to-date", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]},
		{Name: "Available", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]},
		printers.AgeColumn(),
		printers.ContainersColumn(),
		printers.ImagesColumn(),
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DeploymentSpec{}.SwaggerDoc()["selector"]},
	},
	Row: registry.TypedRow(func(d *appsv1.Deployment, now time.Time) []any {
		// Unlike the other workloads, upstream prints a deployment's
		// selector in its parsed form and flags one that does not parse.
		selector := "<invalid>"
		if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
			selector = s.String()
		}
		names, images := printers.LayoutContainerCells(d.Spec.Template.Spec.Containers)
		return []any{
			fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, printers.Replicas(d.Spec.Replicas)),
			int64(d.Status.UpdatedReplicas),
			int64(d.Status.AvailableReplicas),
			printers.TranslateTimestampSince(d.CreationTimestamp, now),
			names,
			images,
			selector,
		}
	}),
}

// deploymentFields lists the fields a field selector over deployments may name.
var deploymentFields func(runtime.Object) fields.Set
