package core

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/orca-project/orca/internal/registry"
)

// Nodes is the nodes resource.
var Nodes = &registry.Resource{
	Group: "", Version: "v1", Name: "nodes", Singular: "node", Kind: "Node",
	Namespaced:       false,
	ShortNames:       []string{"no"},
	Status:           true,
	New:              func() runtime.Object { return &corev1.Node{} },
	NewList:          func() runtime.Object { return &corev1.NodeList{} },
	PrepareForCreate: registry.Typed(prepareNodeForCreate),
	PrepareForUpdate: registry.Typed2(prepareNodeForUpdate),
	Default:          registry.Typed(defaultNode),
	Validate:         registry.TypedValidate(validateNode),
	ValidateUpdate:   registry.TypedValidateUpdate(validateNodeUpdate),
	Table:            nodeTable,
	Fields:           nodeFields,
}

// prepareNodeForCreate drops the dynamic kubelet config fields, a retired
// feature upstream no longer lets new nodes use.
func prepareNodeForCreate(node *corev1.Node) {
	node.Spec.ConfigSource = nil
	node.Status.Config = nil
}

// prepareNodeForUpdate drops a config source a node did not already use.
func prepareNodeForUpdate(node, old *corev1.Node) {
	if old.Spec.ConfigSource == nil {
		node.Spec.ConfigSource = nil
	}
}

// defaultNode: allocatable defaults to capacity, and the singular and
// plural pod CIDR fields are kept in step, podCIDRs winning, as upstream's
// conversion (which Orca does not have) keeps them.
func defaultNode(node *corev1.Node) {
	st := &node.Status
	if st.Allocatable == nil && st.Capacity != nil {
		st.Allocatable = st.Capacity.DeepCopy()
	}
	roundUpResourceList(st.Capacity)
	roundUpResourceList(st.Allocatable)
	if node.Spec.PodCIDR != "" && len(node.Spec.PodCIDRs) == 0 {
		node.Spec.PodCIDRs = []string{node.Spec.PodCIDR}
	}
	if len(node.Spec.PodCIDRs) > 0 {
		node.Spec.PodCIDR = node.Spec.PodCIDRs[0]
	}
}

func validateNode(node *corev1.Node) field.ErrorList {
	var allErrs field.ErrorList
	if len(node.Spec.Taints) > 0 {
		// Upstream reports taints under metadata; clients see that path.
		allErrs = append(allErrs, validateNodeTaints(node.Spec.Taints, field.NewPath("metadata", "taints"))...)
	}
	allErrs = append(allErrs, validateNodeResources(node)...)
	if len(node.Spec.PodCIDRs) > 0 {
		p := field.NewPath("spec", "podCIDRs")
		for i, v := range node.Spec.PodCIDRs {
			allErrs = append(allErrs, validation.IsValidCIDR(p.Index(i), v)...)
		}
		if len(node.Spec.PodCIDRs) > 1 {
			if dual, err := netutils.IsDualStackCIDRStrings(node.Spec.PodCIDRs); err != nil || !dual || len(node.Spec.PodCIDRs) > 2 {
				allErrs = append(allErrs, field.Invalid(p, node.Spec.PodCIDRs, "may specify no more than one CIDR for each IP family"))
			}
			seen := sets.Set[string]{}
			for i, v := range node.Spec.PodCIDRs {
				if seen.Has(v) {
					allErrs = append(allErrs, field.Duplicate(p.Index(i), v))
				}
				seen.Insert(v)
			}
		}
	}
	return allErrs
}

func validateNodeResources(node *corev1.Node) field.ErrorList {
	var allErrs field.ErrorList
	for k, v := range node.Status.Capacity {
		allErrs = append(allErrs, validateResourceQuantityValue(k, v, field.NewPath("status", "capacity", string(k)))...)
	}
	for k, v := range node.Status.Allocatable {
		allErrs = append(allErrs, validateResourceQuantityValue(k, v, field.NewPath("status", "allocatable", string(k)))...)
	}
	return allErrs
}

// validateNodeTaints: valid key, value and effect, and no two taints with
// the same key and effect.
func validateNodeTaints(taints []corev1.Taint, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	unique := map[corev1.TaintEffect]sets.Set[string]{}
	for i, t := range taints {
		p := fldPath.Index(i)
		allErrs = append(allErrs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
		if errs := validation.IsValidLabelValue(t.Value); len(errs) != 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("value"), t.Value, strings.Join(errs, ";")))
		}
		allErrs = append(allErrs, validateTaintEffect(t.Effect, false, p.Child("effect"))...)
		if unique[t.Effect].Has(t.Key) {
			dup := field.Duplicate(p, t)
			dup.Detail = "taints must be unique by key and effect pair"
			allErrs = append(allErrs, dup)
			continue
		}
		if unique[t.Effect] == nil {
			unique[t.Effect] = sets.Set[string]{}
		}
		unique[t.Effect].Insert(t.Key)
	}
	return allErrs
}

// validateNodeUpdate: the pod CIDRs and provider ID are assigned once (by
// the controller manager or cloud provider) and then fixed; addresses in
// the status are unique.
func validateNodeUpdate(node, old *corev1.Node) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[corev1.NodeAddress]bool{}
	for i, a := range node.Status.Addresses {
		if seen[a] {
			allErrs = append(allErrs, field.Duplicate(field.NewPath("status", "addresses").Index(i), a))
		}
		seen[a] = true
	}
	if len(old.Spec.PodCIDRs) > 0 && !semanticEqual(old.Spec.PodCIDRs, node.Spec.PodCIDRs) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "podCIDRs"), "node updates may not change podCIDR except from \"\" to valid"))
	}
	if len(old.Spec.ProviderID) > 0 && old.Spec.ProviderID != node.Spec.ProviderID {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "providerID"), "node updates may not change providerID except from \"\" to valid"))
	}
	if node.Spec.DoNotUseExternalID != old.Spec.DoNotUseExternalID {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "externalID"), "may not be updated"))
	}
	return allErrs
}
