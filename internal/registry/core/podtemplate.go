package core

import (
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Podtemplates is the podtemplates resource: a stored pod template that
// nothing runs by itself, checked as the templates of workloads are.
var Podtemplates = &registry.Resource{
	Group: "", Version: "v1", Name: "podtemplates", Singular: "podtemplate", Kind: "PodTemplate",
	Namespaced:       true,
	New:              func() runtime.Object { return &corev1.PodTemplate{} },
	NewList:          func() runtime.Object { return &corev1.PodTemplateList{} },
	Default:          registry.Typed(defaultPodTemplate),
	PrepareForCreate: registry.Typed(preparePodTemplateForCreate),
	PrepareForUpdate: registry.Typed2(preparePodTemplateForUpdate),
	Validate:         registry.TypedValidate(validatePodTemplate),
	Table:            podtemplateTable,
}

func defaultPodTemplate(pt *corev1.PodTemplate) {
	DefaultPodTemplateSpec(&pt.Template)
}

// A PodTemplate keeps its template under .template, not .spec, so the
// server's spec-based generation tracking cannot see it; upstream counts
// template changes in metadata.generation all the same.
func preparePodTemplateForCreate(pt *corev1.PodTemplate) {
	pt.Generation = 1
}

func preparePodTemplateForUpdate(pt, old *corev1.PodTemplate) {
	if !apiequality.Semantic.DeepEqual(pt.Template, old.Template) {
		pt.Generation = old.Generation + 1
	}
}

// validatePodTemplate checks the template as upstream's
// ValidatePodTemplate does: the template rules every workload's template
// follows, at "template", and no more (any restart policy is allowed,
// since nothing here runs the pods).
func validatePodTemplate(pt *corev1.PodTemplate) field.ErrorList {
	return ValidatePodTemplateSpec(&pt.Template, field.NewPath("template"))
}
