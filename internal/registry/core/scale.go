package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

var replicationcontrollerScale = &registry.Scale{
	Get: func(obj runtime.Object) (int32, int32, string) {
		rc := obj.(*corev1.ReplicationController)
		spec := int32(1)
		if rc.Spec.Replicas != nil {
			spec = *rc.Spec.Replicas
		}
		return spec, rc.Status.Replicas, labels.SelectorFromSet(rc.Spec.Selector).String()
	},
	Set: func(obj runtime.Object, replicas int32) {
		obj.(*corev1.ReplicationController).Spec.Replicas = &replicas
	},
}
