package apiextensions

import (
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
)

// NamesAndConditions decides, as upstream's naming controller, which of
// the names crd asks for it may have, given the names the other CRDs of
// its group hold: a name already accepted for crd stays, a new one is
// accepted if no other CRD holds it. It returns the accepted names and
// the NamesAccepted and Established conditions; Established only becomes
// True through Establish.
func NamesAndConditions(crd *apiextensionsv1.CustomResourceDefinition, all []*apiextensionsv1.CustomResourceDefinition) (apiextensionsv1.CustomResourceDefinitionNames, apiextensionsv1.CustomResourceDefinitionCondition, apiextensionsv1.CustomResourceDefinitionCondition) {
	resources, kinds := sets.New[string](), sets.New[string]()
	for _, o := range all {
		if o.Spec.Group != crd.Spec.Group || o.Name == crd.Name {
			continue
		}
		n := o.Status.AcceptedNames
		resources.Insert(n.Plural, n.Singular)
		resources.Insert(n.ShortNames...)
		kinds.Insert(n.Kind, n.ListKind)
	}
	cond := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionUnknown}
	conflict := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionFalse, reason, err.Error()
	}
	want, have := crd.Spec.Names, crd.Status.AcceptedNames
	next := have
	if err := acceptable(want.Plural, have.Plural, resources); err != nil {
		conflict("PluralConflict", err)
	} else {
		next.Plural = want.Plural
	}
	if err := acceptable(want.Singular, have.Singular, resources); err != nil {
		conflict("SingularConflict", err)
	} else {
		next.Singular = want.Singular
	}
	if !reflect.DeepEqual(want.ShortNames, have.ShortNames) {
		var errs []error
		for _, s := range want.ShortNames {
			if slices.Contains(have.ShortNames, s) {
				continue
			}
			if err := acceptable(s, "", resources); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			conflict("ShortNamesConflict", utilerrors.NewAggregate(errs))
		} else {
			next.ShortNames = want.ShortNames
		}
	}
	if err := acceptable(want.Kind, have.Kind, kinds); err != nil {
		conflict("KindConflict", err)
	} else {
		next.Kind = want.Kind
	}
	if err := acceptable(want.ListKind, have.ListKind, kinds); err != nil {
		conflict("ListKindConflict", err)
	} else {
		next.ListKind = want.ListKind
	}
	next.Categories = want.Categories
	if cond.Status == apiextensionsv1.ConditionUnknown {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found"
	}

	established := apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
		Reason: "NotAccepted", Message: "not all names are accepted",
	}
	if old := apihelpers.FindCRDCondition(crd, apiextensionsv1.Established); old != nil {
		established = *old
	}
	if established.Status != apiextensionsv1.ConditionTrue && cond.Status == apiextensionsv1.ConditionTrue {
		established = apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
			Reason: "Installing", Message: "the initial names have been accepted",
		}
	}
	return next, cond, established
}

// acceptable allows a name that is already ours or that nobody holds.
func acceptable(want, have string, used sets.Set[string]) error {
	if want == have || !used.Has(want) {
		return nil
	}
	return fmt.Errorf("%q is already in use", want)
}

// Established is the condition upstream's establishing controller sets
// once a CRD's names are accepted.
func Established() apiextensionsv1.CustomResourceDefinitionCondition {
	return apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue,
		Reason: "InitialNamesAccepted", Message: "the initial names have been accepted",
	}
}

// Serving reports whether a CRD's resources are served: once its names
// are accepted (upstream serves from then, though discovery waits for
// Established).
func Serving(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted) || apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established)
}

// Terminating reports whether a CRD is being deleted.
func Terminating(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return crd.DeletionTimestamp != nil || apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating)
}

// InstancesRemoved is the Terminating condition once every object of a
// CRD is gone; its finalizer may then be removed.
func InstancesRemoved() apiextensionsv1.CustomResourceDefinitionCondition {
	return apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
		Reason: "InstanceDeletionCompleted", Message: "removed all instances",
	}
}

// InstancesDeleting is the Terminating condition while a CRD's objects
// are being deleted.
func InstancesDeleting() apiextensionsv1.CustomResourceDefinitionCondition {
	return apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
		Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress",
	}
}
