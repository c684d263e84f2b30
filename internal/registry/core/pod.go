package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Pods is the pods resource.
var Pods = &registry.Resource{
	Group: "", Version: "v1", Name: "pods", Singular: "pod", Kind: "Pod",
	Namespaced:       true,
	ShortNames:       []string{"po"},
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	New:              func() runtime.Object { return &corev1.Pod{} },
	NewList:          func() runtime.Object { return &corev1.PodList{} },
	Default:          registry.Typed(defaultPod),
	Validate:         registry.TypedValidate(validatePod),
	ValidateUpdate:   registry.TypedValidateUpdate(validatePodUpdate),
	Table:            podTable,
	Fields:           podFields,
}

func defaultPod(obj *corev1.Pod) {}

func validatePod(obj *corev1.Pod) field.ErrorList { return nil }

func validatePodUpdate(obj, old *corev1.Pod) field.ErrorList { return nil }
