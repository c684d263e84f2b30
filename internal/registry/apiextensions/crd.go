// Package apiextensions defines apiextensions.k8s.io/v1
// CustomResourceDefinitions: defaults, validation, status and table
// columns. The rules are upstream's own (k8s.io/apiextensions-apiserver's
// validation package, which checks schemas, CEL rules and their costs),
// applied to the internal form a v1 object converts to.
package apiextensions

import (
	"context"
	"strings"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	apiextensionsapply "k8s.io/apiextensions-apiserver/pkg/client/applyconfiguration"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

func init() {
	// The server's codecs and storage use client-go's scheme, which has
	// no apiextensions types of its own.
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme.Scheme))
}

// internalScheme converts v1 objects to the internal form upstream's
// validation is written for.
var internalScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiextensionsinstall.Install(s)
	return s
}()

// CustomResourceDefinitions is the customresourcedefinitions resource.
var CustomResourceDefinitions = &registry.Resource{
	Group: "apiextensions.k8s.io", Version: "v1", Name: "customresourcedefinitions",
	Singular: "customresourcedefinition", Kind: "CustomResourceDefinition",
	ShortNames:             []string{"crd", "crds"},
	Categories:             []string{"api-extensions"},
	New:                    func() runtime.Object { return &apiextensionsv1.CustomResourceDefinition{} },
	NewList:                func() runtime.Object { return &apiextensionsv1.CustomResourceDefinitionList{} },
	Status:                 true,
	Default:                registry.Typed(apiextensionsv1.SetObjectDefaults_CustomResourceDefinition),
	TracksGeneration:       true,
	PrepareForCreate:       registry.Typed(prepareForCreate),
	PrepareForUpdate:       registry.Typed2(prepareForUpdate),
	PrepareForStatusUpdate: registry.Typed2(prepareForStatusUpdate),
	Validate:               registry.TypedValidate(validateCRD),
	ValidateUpdate:         registry.TypedValidateUpdate(validateCRDUpdate),
	ValidateStatusUpdate:   registry.TypedValidateUpdate(validateCRDStatusUpdate),
	PrepareForDelete:       registry.Typed(prepareForDelete),
	TypeConverter:          apiextensionsapply.NewTypeConverter(scheme.Scheme),
	Table: &registry.Table{
		Columns: printers.CreatedAtColumns(),
		Row: registry.TypedRow(func(crd *apiextensionsv1.CustomResourceDefinition, now time.Time) []any {
			return printers.CreatedAtRow(crd, now)
		}),
	},
}

// prepareForCreate records the storage version as stored, as upstream's
// strategy does; the server has cleared the status.
func prepareForCreate(crd *apiextensionsv1.CustomResourceDefinition) {
	addStoredVersion(crd)
}

func prepareForUpdate(crd, old *apiextensionsv1.CustomResourceDefinition) {
	crd.Status = *old.Status.DeepCopy()
	addStoredVersion(crd)
}

// prepareForStatusUpdate keeps the spec; the server keeps the rest.
func prepareForStatusUpdate(crd, old *apiextensionsv1.CustomResourceDefinition) {
	crd.Spec = old.Spec
}

// prepareForDelete holds a CRD until its objects are gone, as upstream's
// registry does on the first delete: the cleanup finalizer and the
// Terminating condition.
func prepareForDelete(crd *apiextensionsv1.CustomResourceDefinition) {
	if !apihelpers.CRDHasFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer) {
		crd.Finalizers = append(crd.Finalizers, apiextensionsv1.CustomResourceCleanupFinalizer)
	}
	if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating) {
		apihelpers.SetCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type:    apiextensionsv1.Terminating,
			Status:  apiextensionsv1.ConditionTrue,
			Reason:  "InstanceDeletionPending",
			Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
		})
	}
}

func addStoredVersion(crd *apiextensionsv1.CustomResourceDefinition) {
	for _, v := range crd.Spec.Versions {
		if !v.Storage {
			continue
		}
		for _, s := range crd.Status.StoredVersions {
			if s == v.Name {
				return
			}
		}
		crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
		return
	}
}

// ToInternal converts a v1 CRD to the internal form of upstream's
// validation and schema packages.
func ToInternal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensionsinternal.CustomResourceDefinition, error) {
	out := &apiextensionsinternal.CustomResourceDefinition{}
	if err := internalScheme.Convert(crd, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func validateCRD(crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	in, err := ToInternal(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return specErrors(validation.ValidateCustomResourceDefinition(context.Background(), in))
}

func validateCRDUpdate(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	return onInternal(crd, old, validation.ValidateCustomResourceDefinitionUpdate)
}

func validateCRDStatusUpdate(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	return onInternal(crd, old, validation.ValidateUpdateCustomResourceDefinitionStatus)
}

// onInternal runs an update validation of upstream's on the internal
// forms of crd and old.
func onInternal(crd, old *apiextensionsv1.CustomResourceDefinition, validate func(context.Context, *apiextensionsinternal.CustomResourceDefinition, *apiextensionsinternal.CustomResourceDefinition) field.ErrorList) field.ErrorList {
	in, err := ToInternal(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	oldIn, err := ToInternal(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return specErrors(validate(context.Background(), in, oldIn))
}

// nameRule is upstream's message for a CRD named other than its plural
// and group.
const nameRule = `must be spec.names.plural+"."+spec.group`

// specErrors drops the object metadata errors of upstream's validation,
// which the server reports itself for every kind, but for the rule that
// ties a CRD's name to its names and group.
func specErrors(errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		if strings.HasPrefix(e.Field, "metadata") && !(e.Field == "metadata.name" && strings.Contains(e.Detail, nameRule)) {
			continue
		}
		out = append(out, e)
	}
	return out
}
