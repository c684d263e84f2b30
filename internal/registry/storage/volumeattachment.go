package storage

import (
	"context"
	"math"

	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/core"
)

// Volumeattachments is the volumeattachments resource: a request that a
// CSI driver attach a volume to a node, and (in its status, written only
// through /status, which keeps all metadata as upstream's status strategy
// resets it) whether it did. The spec never changes.
//
// Upstream enforces part of its rules declaratively (the spec's
// immutability and the attacher's name), with messages of their own that
// come after the handwritten ones; see withDeclarative.
var Volumeattachments = &registry.Resource{
	Group: storagev1.GroupName, Version: "v1", Name: "volumeattachments", Singular: "volumeattachment", Kind: "VolumeAttachment",
	New:                    func() runtime.Object { return &storagev1.VolumeAttachment{} },
	NewList:                func() runtime.Object { return &storagev1.VolumeAttachmentList{} },
	Status:                 true,
	StatusResetsMetadata:   []string{"labels", "annotations", "finalizers", "ownerReferences"},
	Default:                registry.Typed(defaultVolumeAttachment),
	Validate:               registry.TypedValidate(validateVolumeAttachment),
	ValidateUpdate:         registry.TypedValidateUpdate(validateVolumeAttachmentUpdate),
	ValidateUpdateReplaces: true,
	Table:                  volumeattachmentTable,
}

// Bounds on what a driver reports in the status.
const (
	maxAttachedVolumeMetadataSize = 256 * (1 << 10) // 256 kB
	maxVolumeErrorMessageSize     = 1024
)

// defaultVolumeAttachment gives an inline volume spec the defaults
// upstream's generated defaulter reaches through the attachment.
func defaultVolumeAttachment(va *storagev1.VolumeAttachment) {
	if spec := va.Spec.Source.InlineVolumeSpec; spec != nil {
		core.DefaultInlinePersistentVolumeSpec(spec)
	}
}

func validateVolumeAttachment(va *storagev1.VolumeAttachment) field.ErrorList {
	return withDeclarative(validateVolumeAttachmentFields(va), declarativeVolumeAttachment(va, nil))
}

// validateVolumeAttachmentUpdate replaces Validate on updates, so that
// only the declarative rules that look at the old object run: they skip
// a spec that did not change, and stop at the immutability of one that
// did, leaving the handwritten errors of its attacher in place.
func validateVolumeAttachmentUpdate(va, old *storagev1.VolumeAttachment) field.ErrorList {
	allErrs := validateVolumeAttachmentFields(va)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(va.Spec, old.Spec, field.NewPath("spec")).WithOrigin("immutable").MarkCoveredByDeclarative()...)
	return withDeclarative(allErrs, declarativeVolumeAttachment(va, old))
}

// validateVolumeAttachmentFields is upstream's handwritten
// ValidateVolumeAttachment without the metadata, which the server checks.
func validateVolumeAttachmentFields(va *storagev1.VolumeAttachment) field.ErrorList {
	specPath := field.NewPath("spec")
	allErrs := validateAttacher(va.Spec.Attacher, specPath.Child("attacher"))
	allErrs = append(allErrs, validateVolumeAttachmentSource(&va.Spec.Source, specPath.Child("source"))...)
	allErrs = append(allErrs, dnsSubdomain(va.Spec.NodeName, specPath.Child("nodeName"))...)

	statusPath := field.NewPath("status")
	var size int64
	for k, v := range va.Status.AttachmentMetadata {
		size += int64(len(k)) + int64(len(v))
	}
	if size > maxAttachedVolumeMetadataSize {
		allErrs = append(allErrs, field.TooLong(statusPath.Child("attachmentMetadata"), "", maxAttachedVolumeMetadataSize))
	}
	allErrs = append(allErrs, validateVolumeError(va.Status.AttachError, statusPath.Child("attachError"))...)
	allErrs = append(allErrs, validateVolumeError(va.Status.DetachError, statusPath.Child("detachError"))...)

	// Upstream checks the name again here, so an empty one is reported
	// twice, as required and as not a name.
	if pv := va.Spec.Source.PersistentVolumeName; pv != nil {
		allErrs = append(allErrs, dnsSubdomain(*pv, specPath.Child("source", "persistentVolumeName"))...)
	}
	return allErrs
}

// validateAttacher checks the attacher as a CSI driver's name, with each
// error marked as the declarative rule that covers it.
func validateAttacher(name string, fldPath *field.Path) field.ErrorList {
	allErrs := core.ValidateCSIDriverName(name, fldPath)
	for _, e := range allErrs {
		switch e.Type {
		case field.ErrorTypeTooLong:
			e.WithOrigin("maxLength")
		case field.ErrorTypeInvalid:
			e.WithOrigin("format=k8s-long-name-caseless")
		}
		e.MarkCoveredByDeclarative()
	}
	return allErrs
}

func validateVolumeAttachmentSource(s *storagev1.VolumeAttachmentSource, fldPath *field.Path) field.ErrorList {
	const exactlyOne = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
	switch {
	case s.InlineVolumeSpec == nil && s.PersistentVolumeName == nil:
		return field.ErrorList{field.Required(fldPath, exactlyOne)}
	case s.InlineVolumeSpec != nil && s.PersistentVolumeName != nil:
		return field.ErrorList{field.Forbidden(fldPath, exactlyOne)}
	case s.PersistentVolumeName != nil:
		if len(*s.PersistentVolumeName) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("persistentVolumeName"), "must specify non empty persistentVolumeName")}
		}
		return nil
	default:
		return core.ValidateInlinePersistentVolumeSpec(s.InlineVolumeSpec, fldPath.Child("inlineVolumeSpec"))
	}
}

func validateVolumeError(e *storagev1.VolumeError, fldPath *field.Path) field.ErrorList {
	if e == nil {
		return nil
	}
	var allErrs field.ErrorList
	if len(e.Message) > maxVolumeErrorMessageSize {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("message"), "", maxVolumeErrorMessageSize))
	}
	if c := e.ErrorCode; c != nil && *c < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("errorCode"), *c, utilvalidation.InclusiveRangeError(0, math.MaxInt32)))
	}
	return allErrs
}

// declarativeVolumeAttachment states the beta rules k8s.io/api tags the
// type with, as upstream's generated validation runs them: an unchanged
// spec is skipped, a changed one only reported as immutable, and a new
// one's attacher checked (required, then a caseless DNS subdomain of at
// most 63 characters). old is nil on create.
func declarativeVolumeAttachment(va, old *storagev1.VolumeAttachment) field.ErrorList {
	ctx := context.Background()
	op := operation.Operation{Type: operation.Create}
	specPath := field.NewPath("spec")
	if old != nil {
		if apiequality.Semantic.DeepEqual(va.Spec, old.Spec) {
			return nil
		}
		op.Type = operation.Update
		return validate.Immutable(ctx, op, specPath, &va.Spec, &old.Spec).MarkBeta()
	}
	path := specPath.Child("attacher")
	if errs := validate.RequiredValue(ctx, op, path, &va.Spec.Attacher, nil); len(errs) > 0 {
		return errs.MarkBeta()
	}
	errs := validate.LongNameCaseless(ctx, op, path, &va.Spec.Attacher, nil)
	errs = append(errs, validate.MaxLength(ctx, op, path, &va.Spec.Attacher, nil, 63)...)
	return errs.MarkBeta()
}

// dnsSubdomain reports each way value is not a DNS subdomain: the rule
// for node names and volume names alike.
func dnsSubdomain(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(value, false) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}
