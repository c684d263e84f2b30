package core

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// replicationcontrollerTable prints replicationcontrollers as upstream's `kubectl get` does.
var replicationcontrollerTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Desired", Type: "integer", Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]},
		{Name: "Current", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]},
		{Name: "Ready", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]},
		printers.AgeColumn(),
		printers.ContainersColumn(),
		printers.ImagesColumn(),
		{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"]},
	},
	Row: registry.TypedRow(func(rc *corev1.ReplicationController, now time.Time) []any {
		var containers []corev1.Container
		if rc.Spec.Template != nil {
			containers = rc.Spec.Template.Spec.Containers
		}
		names, images := printers.LayoutContainerCells(containers)
		return []any{
			int64(printers.Replicas(rc.Spec.Replicas)),
			int64(rc.Status.Replicas),
			int64(rc.Status.ReadyReplicas),
			printers.TranslateTimestampSince(rc.CreationTimestamp, now),
			names,
			images,
			labels.FormatLabels(rc.Spec.Selector),
		}
	}),
}

// replicationcontrollerFields lists the fields a field selector over replicationcontrollers may name.
var replicationcontrollerFields = registry.TypedFields(func(rc *corev1.ReplicationController) fields.Set {
	return fields.Set{"status.replicas": strconv.Itoa(int(rc.Status.Replicas))}
})
