package storagemigration

import (
	"fmt"
	"strings"

	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Storageversionmigrations is the storageversionmigrations resource.
var Storageversionmigrations = &registry.Resource{
	Group: "storagemigration.k8s.io", Version: "v1", Name: "storageversionmigrations", Singular: "storageversionmigration", Kind: "StorageVersionMigration",
	Namespaced:           false,
	Status:               true,
	StatusResetsMetadata: []string{"labels", "annotations", "finalizers", "ownerReferences"},
	New:                  func() runtime.Object { return &svmv1.StorageVersionMigration{} },
	NewList:              func() runtime.Object { return &svmv1.StorageVersionMigrationList{} },
	Validate:             registry.TypedValidate(validateMigration),
	ValidateUpdate:       registry.TypedValidateUpdate(validateMigrationUpdate),
	ValidateStatusUpdate: registry.TypedValidateUpdate(validateMigrationStatus),
	Table:                migrationTable,
}

// validateMigration checks the resource to migrate by the rules of an
// APIService: the group a DNS subdomain, the resource a DNS-1035 label.
// It need not be served: a migration of a resource that is not is the
// controller's to fail.
func validateMigration(m *svmv1.StorageVersionMigration) field.ErrorList {
	var allErrs field.ErrorList
	p := field.NewPath("spec", "resource")
	gr := m.Spec.Resource
	if gr.Resource == "" {
		allErrs = append(allErrs, field.Required(p.Child("resource"), "resource is required to be set"))
	} else if errs := validation.IsDNS1035Label(gr.Resource); len(errs) > 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("resource"), gr.Resource, strings.Join(errs, ",")))
	}
	if gr.Group != "" {
		if errs := validation.IsDNS1123Subdomain(gr.Group); len(errs) > 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("group"), gr.Group, strings.Join(errs, ",")))
		}
	}
	return allErrs
}

// A migration is of one resource for good; another needs another object.
func validateMigrationUpdate(m, old *svmv1.StorageVersionMigration) field.ErrorList {
	return apivalidation.ValidateImmutableField(m.Spec, old.Spec, field.NewPath("spec"))
}

// validateMigrationStatus is upstream's: the resource version the
// migration started from is a resource version and, once recorded, fixed;
// a migration cannot both succeed and fail, and does neither undo.
func validateMigrationStatus(m, old *svmv1.StorageVersionMigration) field.ErrorList {
	p := field.NewPath("status")
	var allErrs field.ErrorList
	if rv := m.Status.ResourceVersion; rv != "" {
		if cmp, err := resourceversion.CompareResourceVersion(rv, rv); err != nil || cmp != 0 {
			if err == nil {
				err = fmt.Errorf("unable to compare resource versions, %s is not equal to %s", rv, rv)
			}
			allErrs = append(allErrs, field.Invalid(p.Child("resourceVersion"), rv, err.Error()))
		}
	}
	allErrs = append(allErrs, metav1validation.ValidateConditions(m.Status.Conditions, p.Child("conditions"))...)
	if old.Status.ResourceVersion != "" && old.Status.ResourceVersion != m.Status.ResourceVersion {
		allErrs = append(allErrs, field.Invalid(p.Child("resourceVersion"), m.Status.ResourceVersion, "field is immutable"))
	}
	succeeded, failed := isTrue(m, svmv1.MigrationSucceeded), isTrue(m, svmv1.MigrationFailed)
	if succeeded && failed {
		allErrs = append(allErrs, field.Invalid(p.Child("conditions"), m.Status.Conditions, "Both success and failed conditions cannot be true at the same time"))
	}
	if isTrue(old, svmv1.MigrationSucceeded) && !succeeded {
		allErrs = append(allErrs, field.Invalid(p.Child("conditions"), m.Status.Conditions, "Success condition cannot be set to false once it is true"))
	}
	if isTrue(old, svmv1.MigrationFailed) && !failed {
		allErrs = append(allErrs, field.Invalid(p.Child("conditions"), m.Status.Conditions, "Failed condition cannot be set to false once it is true"))
	}
	return allErrs
}

func isTrue(m *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType) bool {
	c := meta.FindStatusCondition(m.Status.Conditions, string(t))
	return c != nil && c.Status == metav1.ConditionTrue
}
