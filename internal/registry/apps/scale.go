package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// selectorString renders a label selector as the Scale subresource reports
// it; an invalid selector reports as empty, which selects nothing useful
// but keeps the scale readable.
func selectorString(sel *metav1.LabelSelector) string {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return ""
	}
	return s.String()
}

func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

var deploymentScale = &registry.Scale{
	Get: func(obj runtime.Object) (int32, int32, string) {
		d := obj.(*appsv1.Deployment)
		return replicas(d.Spec.Replicas), d.Status.Replicas, selectorString(d.Spec.Selector)
	},
	Set: func(obj runtime.Object, n int32) { obj.(*appsv1.Deployment).Spec.Replicas = &n },
}

var replicasetScale = &registry.Scale{
	Get: func(obj runtime.Object) (int32, int32, string) {
		rs := obj.(*appsv1.ReplicaSet)
		return replicas(rs.Spec.Replicas), rs.Status.Replicas, selectorString(rs.Spec.Selector)
	},
	Set: func(obj runtime.Object, n int32) { obj.(*appsv1.ReplicaSet).Spec.Replicas = &n },
}

var statefulsetScale = &registry.Scale{
	Get: func(obj runtime.Object) (int32, int32, string) {
		s := obj.(*appsv1.StatefulSet)
		return replicas(s.Spec.Replicas), s.Status.Replicas, selectorString(s.Spec.Selector)
	},
	Set: func(obj runtime.Object, n int32) { obj.(*appsv1.StatefulSet).Spec.Replicas = &n },
}
