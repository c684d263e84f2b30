package resource

import (
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Resourceclaims is the resourceclaims resource. Its status is where the
// scheduler records an allocation and drivers report on devices; a
// claim's spec never changes once it is made.
var Resourceclaims = &registry.Resource{
	Group: "resource.k8s.io", Version: "v1", Name: "resourceclaims", Singular: "resourceclaim", Kind: "ResourceClaim",
	Namespaced:             true,
	Status:                 true,
	StatusResetsMetadata:   []string{"labels", "annotations", "finalizers", "ownerReferences"},
	New:                    func() runtime.Object { return &resourcev1.ResourceClaim{} },
	NewList:                func() runtime.Object { return &resourcev1.ResourceClaimList{} },
	Default:                registry.Typed(defaultResourceClaim),
	PrepareForCreate:       registry.Typed(func(c *resourcev1.ResourceClaim) { dropDisabledClaimSpecFields(&c.Spec, nil) }),
	PrepareForUpdate:       registry.Typed2(func(c, old *resourcev1.ResourceClaim) { dropDisabledClaimSpecFields(&c.Spec, &old.Spec) }),
	PrepareForStatusUpdate: registry.Typed2(prepareClaimStatus),
	Validate:               registry.TypedValidate(validateResourceClaim),
	ValidateUpdate:         registry.TypedValidateUpdate(validateResourceClaimUpdate),
	ValidateStatusUpdate:   registry.TypedValidateUpdate(validateClaimStatusUpdate),
	Table:                  resourceclaimTable,
}

func defaultResourceClaim(c *resourcev1.ResourceClaim) {
	defaultClaimSpec(&c.Spec)
	if a := c.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			defaultTolerations(a.Devices.Results[i].Tolerations)
		}
	}
}

func validateResourceClaim(c *resourcev1.ResourceClaim) field.ErrorList {
	return validateClaimSpec(&c.Spec, field.NewPath("spec"))
}

// A claim's spec is fixed: pods and the allocation were made for it.
// Upstream's generated rule reports the change without the value.
func validateResourceClaimUpdate(c, old *resourcev1.ResourceClaim) field.ErrorList {
	if !apiequality.Semantic.DeepEqual(c.Spec, old.Spec) {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), nil, "field is immutable")}
	}
	return nil
}
