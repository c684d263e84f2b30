package apps

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// daemonsetTable prints daemonsets as upstream's `kubectl get` does.
var daemonsetTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Desired", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]},
		{Name: "Current", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]},
		{Name: "Ready", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]},
		{Name: "Up-to-date", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]},
		{Name: "Available", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]},
		{Name: "Node Selector", Type: "string", Description: corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]},
		printers.AgeColumn(),
		printers.ContainersColumn(),
		printers.ImagesColumn(),
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"]},
	},
	Row: registry.TypedRow(func(ds *appsv1.DaemonSet, now time.Time) []any {
		names, images := printers.LayoutContainerCells(ds.Spec.Template.Spec.Containers)
		return []any{
			int64(ds.Status.DesiredNumberScheduled),
			int64(ds.Status.CurrentNumberScheduled),
			int64(ds.Status.NumberReady),
			int64(ds.Status.UpdatedNumberScheduled),
			int64(ds.Status.NumberAvailable),
			labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
			printers.TranslateTimestampSince(ds.CreationTimestamp, now),
			names,
			images,
			metav1.FormatLabelSelector(ds.Spec.Selector),
		}
	}),
}

// daemonsetFields lists the fields a field selector over daemonsets may name.
var daemonsetFields func(runtime.Object) fields.Set
