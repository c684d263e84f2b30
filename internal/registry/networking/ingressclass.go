package networking

import (
	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
)

// Ingressclasses is the ingressclasses resource. Its controller is fixed
// at creation; the update check runs before the others, as upstream's
// ValidateIngressClassUpdate orders them, so it replaces Validate.
var Ingressclasses = &registry.Resource{
	Group: networkingv1.GroupName, Version: "v1", Name: "ingressclasses", Singular: "ingressclass", Kind: "IngressClass",
	New:                    func() runtime.Object { return &networkingv1.IngressClass{} },
	NewList:                func() runtime.Object { return &networkingv1.IngressClassList{} },
	TracksGeneration:       true,
	Default:                registry.Typed(defaultIngressClass),
	Validate:               registry.TypedValidate(validateIngressClass),
	ValidateUpdate:         registry.TypedValidateUpdate(validateIngressClassUpdate),
	ValidateUpdateReplaces: true,
	Table:                  ingressclassTable,
}

// maxLenIngressClassController is upstream's bound on spec.controller.
const maxLenIngressClassController = 250

// Sorted, as upstream lists them from a set.
var supportedParametersScopes = []string{
	networkingv1.IngressClassParametersReferenceScopeCluster, networkingv1.IngressClassParametersReferenceScopeNamespace,
}

// defaultIngressClass is upstream's SetDefaults_IngressClass: parameters
// with no scope are cluster-scoped.
func defaultIngressClass(ic *networkingv1.IngressClass) {
	if p := ic.Spec.Parameters; p != nil && p.Scope == nil {
		p.Scope = ptr.To(networkingv1.IngressClassParametersReferenceScopeCluster)
	}
}

var ingressClassSpecPath = field.NewPath("spec")

// validateIngressClass is upstream's validateIngressClassSpec: the
// controller is a domain-prefixed path ("example.com/ingress-controller").
func validateIngressClass(ic *networkingv1.IngressClass) field.ErrorList {
	controllerPath := ingressClassSpecPath.Child("controller")
	var errs field.ErrorList
	if len(ic.Spec.Controller) > maxLenIngressClassController {
		errs = append(errs, field.TooLong(controllerPath, "" /*unused*/, maxLenIngressClassController))
	}
	errs = append(errs, utilvalidation.IsDomainPrefixedPath(controllerPath, ic.Spec.Controller)...)
	return append(errs, validateIngressClassParameters(ic.Spec.Parameters, ingressClassSpecPath.Child("parameters"))...)
}

func validateIngressClassUpdate(ic, old *networkingv1.IngressClass) field.ErrorList {
	errs := apimachineryvalidation.ValidateImmutableField(ic.Spec.Controller, old.Spec.Controller, ingressClassSpecPath.Child("controller"))
	return append(errs, validateIngressClass(ic)...)
}

// validateIngressClassParameters is upstream's
// validateIngressClassParametersReference: a namespace goes with the
// Namespace scope and only with it.
func validateIngressClassParameters(params *networkingv1.IngressClassParametersReference, fldPath *field.Path) field.ErrorList {
	if params == nil {
		return nil
	}
	errs := validateTypedReference(fldPath, params.APIGroup, params.Kind, params.Name)
	if params.Scope == nil {
		return append(errs, field.Required(fldPath.Child("scope"), ""))
	}
	nsPath := fldPath.Child("namespace")
	switch scope := *params.Scope; scope {
	case networkingv1.IngressClassParametersReferenceScopeNamespace:
		if params.Namespace == nil {
			errs = append(errs, field.Required(nsPath, "`parameters.scope` is set to 'Namespace'"))
		} else {
			errs = append(errs, invalidEach(nsPath, *params.Namespace, apimachineryvalidation.ValidateNamespaceName(*params.Namespace, false))...)
		}
	case networkingv1.IngressClassParametersReferenceScopeCluster:
		if params.Namespace != nil {
			errs = append(errs, field.Forbidden(nsPath, "`parameters.scope` is set to 'Cluster'"))
		}
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("scope"), scope, supportedParametersScopes))
	}
	return errs
}
