package core

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Namespaces is the namespaces resource.
var Namespaces = &registry.Resource{
	Group: "", Version: "v1", Name: "namespaces", Singular: "namespace", Kind: "Namespace",
	Namespaced:       false,
	ShortNames:       []string{"ns"},
	Status:           true,
	New:              func() runtime.Object { return &corev1.Namespace{} },
	NewList:          func() runtime.Object { return &corev1.NamespaceList{} },
	PrepareForCreate: registry.Typed(prepareNamespaceForCreate),
	PrepareForUpdate: registry.Typed2(prepareNamespaceForUpdate),
	Default:          registry.Typed(defaultNamespace),
	// A namespace's name is a DNS label: it becomes part of service names.
	ValidateName:   apivalidation.ValidateNamespaceName,
	Validate:       registry.TypedValidate(validateNamespace),
	ValidateUpdate: registry.TypedValidateUpdate(validateNamespaceUpdate),
	Table:          namespaceTable,
	Fields:         namespaceFields,
}

// prepareNamespaceForCreate starts a namespace Active with the "kubernetes"
// finalizer, which keeps it around until its contents are gone. This is not
// a default because the finalizer is later removed (through /finalize) and
// must then stay removed.
func prepareNamespaceForCreate(ns *corev1.Namespace) {
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return
		}
	}
	ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
}

// prepareNamespaceForUpdate keeps spec.finalizers: only the /finalize
// subresource changes them.
func prepareNamespaceForUpdate(ns, old *corev1.Namespace) {
	ns.Spec.Finalizers = old.Spec.Finalizers
}

// defaultNamespace labels the namespace with its own name, so that
// namespace selectors can pick namespaces by name, and fills in the phase.
func defaultNamespace(ns *corev1.Namespace) {
	// A generateName namespace has no name yet; the server names it first.
	if ns.Name != "" {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

func validateNamespace(ns *corev1.Namespace) field.ErrorList {
	var allErrs field.ErrorList
	for i := range ns.Spec.Finalizers {
		// Upstream reports these without the index.
		allErrs = append(allErrs, validateFinalizerName(string(ns.Spec.Finalizers[i]), field.NewPath("spec", "finalizers"))...)
	}
	return allErrs
}

var standardFinalizers = sets.New(string(corev1.FinalizerKubernetes), metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents)

// validateFinalizerName: a finalizer is qualified, or one of the few
// standard unprefixed ones.
func validateFinalizerName(name string, fldPath *field.Path) field.ErrorList {
	allErrs := apivalidation.ValidateFinalizerName(name, fldPath)
	if !strings.Contains(name, "/") && !standardFinalizers.Has(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, "name is neither a standard finalizer name nor is it fully qualified"))
	}
	return allErrs
}

// validateNamespaceUpdate has nothing to add: upstream checks only the
// metadata of a namespace update.
func validateNamespaceUpdate(ns, old *corev1.Namespace) field.ErrorList { return nil }
