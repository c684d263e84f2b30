package apps

import (
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// replicasetTable prints replicasets as upstream's `kubectl get` does.
var replicasetTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Desired", Type: "integer", Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]},
		{Name: "Current", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]},
		{Name: "Ready", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]},
		printers.AgeColumn(),
		printers.ContainersColumn(),
		printers.ImagesColumn(),
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["selector"]},
	},
	Row: registry.TypedRow(func(rs *appsv1.ReplicaSet, now time.Time) []any {
		names, images := printers.LayoutContainerCells(rs.Spec.Template.Spec.Containers)
		return []any{
			int64(printers.Replicas(rs.Spec.Replicas)),
			int64(rs.Status.Replicas),
			int64(rs.Status.ReadyReplicas),
			printers.TranslateTimestampSince(rs.CreationTimestamp, now),
			names,
			images,
			metav1.FormatLabelSelector(rs.Spec.Selector),
		}
	}),
}

// replicasetFields lists the fields a field selector over replicasets may name.
var replicasetFields = registry.TypedFields(func(rs *appsv1.ReplicaSet) fields.Set {
	return fields.Set{"status.replicas": strconv.Itoa(int(rs.Status.Replicas))}
})
