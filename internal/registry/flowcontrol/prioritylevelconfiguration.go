package flowcontrol

import (
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/flowcontrol/fairqueue"
	"github.com/orca-project/orca/internal/registry"
)

// Prioritylevelconfigurations is the prioritylevelconfigurations
// resource; its status subresource keeps all metadata, as FlowSchemas'.
var Prioritylevelconfigurations = &registry.Resource{
	Group: flowcontrolv1.GroupName, Version: "v1", Name: "prioritylevelconfigurations", Singular: "prioritylevelconfiguration", Kind: "PriorityLevelConfiguration",
	New:                  func() runtime.Object { return &flowcontrolv1.PriorityLevelConfiguration{} },
	NewList:              func() runtime.Object { return &flowcontrolv1.PriorityLevelConfigurationList{} },
	Status:               true,
	StatusResetsMetadata: []string{"labels", "annotations", "finalizers", "ownerReferences"},
	TracksGeneration:     true,
	Default:              registry.Typed(DefaultPriorityLevelConfiguration),
	Validate:             registry.TypedValidate(validatePriorityLevelConfiguration),
	Table:                prioritylevelconfigurationTable,
}

// Upstream's v1 defaults.
const (
	DefaultNominalConcurrencyShares int32 = 30
	DefaultQueues                   int32 = 64
	DefaultHandSize                 int32 = 8
	DefaultQueueLengthLimit         int32 = 50
)

// maxQueues bounds queues, as upstream does (10^7).
const maxQueues int32 = 10_000_000

// DefaultPriorityLevelConfiguration fills in upstream's v1 defaults. In
// v1 an explicit zero of nominalConcurrencyShares stays zero; only an
// absent value gets 30.
func DefaultPriorityLevelConfiguration(pl *flowcontrolv1.PriorityLevelConfiguration) {
	if e := pl.Spec.Exempt; e != nil {
		if e.NominalConcurrencyShares == nil {
			e.NominalConcurrencyShares = ptr.To[int32](0)
		}
		if e.LendablePercent == nil {
			e.LendablePercent = ptr.To[int32](0)
		}
	}
	l := pl.Spec.Limited
	if l == nil {
		return
	}
	if l.NominalConcurrencyShares == nil {
		l.NominalConcurrencyShares = ptr.To(DefaultNominalConcurrencyShares)
	}
	if l.LendablePercent == nil {
		l.LendablePercent = ptr.To[int32](0)
	}
	if q := l.LimitResponse.Queuing; q != nil {
		if q.HandSize == 0 {
			q.HandSize = DefaultHandSize
		}
		if q.Queues == 0 {
			q.Queues = DefaultQueues
		}
		if q.QueueLengthLimit == 0 {
			q.QueueLengthLimit = DefaultQueueLengthLimit
		}
	}
}

// validatePriorityLevelConfiguration is upstream's, as the v1 API checks
// it on create and update (a zero nominalConcurrencyShares is allowed).
func validatePriorityLevelConfiguration(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validatePriorityLevelSpec(&pl.Spec, pl.Name, specPath)
	errs = append(errs, validateMandatoryPriorityLevel(pl, specPath)...)
	types := make([]string, len(pl.Status.Conditions))
	for i, c := range pl.Status.Conditions {
		types[i] = string(c.Type)
	}
	return append(errs, validateConditionTypes(types, field.NewPath("status", "conditions"))...)
}

// validateMandatoryPriorityLevel fixes the specs of exempt and catch-all;
// of exempt, the administrator may change only what spec.exempt holds.
func validateMandatoryPriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration, path *field.Path) field.ErrorList {
	for _, mand := range MandatoryPriorityLevelConfigurations() {
		if mand.Name != pl.Name {
			continue
		}
		if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
			have := pl.Spec.DeepCopy()
			if have.Exempt != nil {
				have.Exempt.NominalConcurrencyShares = mand.Spec.Exempt.NominalConcurrencyShares
				have.Exempt.LendablePercent = mand.Spec.Exempt.LendablePercent
			}
			if !apiequality.Semantic.DeepEqual(&mand.Spec, have) {
				return field.ErrorList{field.Invalid(path, pl.Spec, fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", pl.Name))}
			}
			return nil
		}
		if !apiequality.Semantic.DeepEqual(pl.Spec, mand.Spec) {
			return field.ErrorList{field.Invalid(path, pl.Spec, fmt.Sprintf("spec of '%s' must equal the fixed value", pl.Name))}
		}
	}
	return nil
}

var supportedLevelTypes = []string{string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited)}

func validatePriorityLevelSpec(spec *flowcontrolv1.PriorityLevelConfigurationSpec, name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if (name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (spec.Type == flowcontrolv1.PriorityLevelEnablementExempt) {
		errs = append(errs, field.Invalid(path.Child("type"), spec.Type, "type must be 'Exempt' if and only if name is 'exempt'"))
	}
	switch spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if spec.Limited != nil {
			errs = append(errs, field.Forbidden(path.Child("limited"), "must be nil if the type is not Limited"))
		}
		if e := spec.Exempt; e != nil {
			if e.NominalConcurrencyShares != nil && *e.NominalConcurrencyShares < 0 {
				errs = append(errs, field.Invalid(path.Child("exempt", "nominalConcurrencyShares"), *e.NominalConcurrencyShares, "must be a non-negative integer"))
			}
			errs = append(errs, validateLendable(e.LendablePercent, path.Child("exempt", "lendablePercent"))...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if spec.Exempt != nil {
			errs = append(errs, field.Forbidden(path.Child("exempt"), "must be nil if the type is Limited"))
		}
		if spec.Limited == nil {
			errs = append(errs, field.Required(path.Child("limited"), "must not be empty when type is Limited"))
		} else {
			errs = append(errs, validateLimited(spec.Limited, path.Child("limited"))...)
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), spec.Type, supportedLevelTypes))
	}
	return errs
}

func validateLendable(p *int32, path *field.Path) field.ErrorList {
	if p != nil && (*p < 0 || *p > 100) {
		return field.ErrorList{field.Invalid(path, *p, "must be between 0 and 100, inclusive")}
	}
	return nil
}

func validateLimited(l *flowcontrolv1.LimitedPriorityLevelConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if l.NominalConcurrencyShares != nil && *l.NominalConcurrencyShares < 0 {
		errs = append(errs, field.Invalid(path.Child("nominalConcurrencyShares"), *l.NominalConcurrencyShares, "must be a non-negative integer"))
	}
	errs = append(errs, validateLimitResponse(l.LimitResponse, path.Child("limitResponse"))...)
	errs = append(errs, validateLendable(l.LendablePercent, path.Child("lendablePercent"))...)
	if b := l.BorrowingLimitPercent; b != nil && *b < 0 {
		errs = append(errs, field.Invalid(path.Child("borrowingLimitPercent"), *b, "if specified, must be a non-negative integer"))
	}
	return errs
}

func validateLimitResponse(lr flowcontrolv1.LimitResponse, path *field.Path) field.ErrorList {
	switch lr.Type {
	case flowcontrolv1.LimitResponseTypeReject:
		if lr.Queuing != nil {
			return field.ErrorList{field.Forbidden(path.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited")}
		}
	case flowcontrolv1.LimitResponseTypeQueue:
		if lr.Queuing == nil {
			return field.ErrorList{field.Required(path.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited")}
		}
		return validateQueuing(lr.Queuing, path.Child("queuing"))
	default:
		return field.ErrorList{field.NotSupported(path.Child("type"), lr.Type, []string{string(flowcontrolv1.LimitResponseTypeQueue), string(flowcontrolv1.LimitResponseTypeReject)})}
	}
	return nil
}

func validateQueuing(q *flowcontrolv1.QueuingConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.QueueLengthLimit <= 0 {
		errs = append(errs, field.Invalid(path.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
	}
	if q.Queues <= 0 {
		errs = append(errs, field.Invalid(path.Child("queues"), q.Queues, "must be positive"))
	} else if q.Queues > maxQueues {
		errs = append(errs, field.Invalid(path.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
	}
	switch {
	case q.HandSize <= 0:
		errs = append(errs, field.Invalid(path.Child("handSize"), q.HandSize, "must be positive"))
	case q.HandSize > q.Queues:
		errs = append(errs, field.Invalid(path.Child("handSize"), q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
	case fairqueue.RequiredEntropyBits(int(q.Queues), int(q.HandSize)) > fairqueue.MaxHashBits:
		errs = append(errs, field.Invalid(path.Child("handSize"), q.HandSize, fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", q.Queues, q.HandSize, fairqueue.MaxHashBits)))
	}
	return errs
}
