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

// statefulsetTable prints statefulsets as upstream's `kubectl get` does.
var statefulsetTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		printers.AgeColumn(),
		printers.ContainersColumn(),
		printers.ImagesColumn(),
	},
	Row: registry.TypedRow(func(ss *appsv1.StatefulSet, now time.Time) []any {
		names, images := printers.LayoutContainerCells(ss.Spec.Template.Spec.Containers)
		return []any{
			fmt.Sprintf("%d/%d", ss.Status.ReadyReplicas, printers.Replicas(ss.Spec.Replicas)),
			printers.TranslateTimestampSince(ss.CreationTimestamp, now),
			names,
			images,
		}
	}),
}

// statefulsetFields lists the fields a field selector over statefulsets may name.
var statefulsetFields func(runtime.Object) fields.Set
