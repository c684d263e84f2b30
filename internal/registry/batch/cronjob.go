package batch

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/cron"
	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/core"
)

// Cronjobs is the cronjobs resource.
var Cronjobs = &registry.Resource{
	Group: "batch", Version: "v1", Name: "cronjobs", Singular: "cronjob", Kind: "CronJob",
	Namespaced:       true,
	ShortNames:       []string{"cj"},
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	New:              func() runtime.Object { return &batchv1.CronJob{} },
	NewList:          func() runtime.Object { return &batchv1.CronJobList{} },
	PrepareForCreate: registry.Typed(prepareCronJobForCreate),
	PrepareForUpdate: registry.Typed2(prepareCronJobForUpdate),
	Default:          registry.Typed(defaultCronJob),
	Validate:         registry.TypedValidate(validateCronJob),
	ValidateUpdate:   registry.TypedValidateUpdate(validateCronJobUpdate),
	Table:            cronjobTable,
	Fields:           cronjobFields,
}

// spec.jobTemplate.spec.scheduling is dropped for the same reason as a
// Job's (see prepareJobForCreate).
func prepareCronJobForCreate(obj *batchv1.CronJob) {
	obj.Spec.JobTemplate.Spec.Scheduling = nil
}

func prepareCronJobForUpdate(obj, old *batchv1.CronJob) {
	if old.Spec.JobTemplate.Spec.Scheduling == nil {
		obj.Spec.JobTemplate.Spec.Scheduling = nil
	}
}

// The job template gets only the pod defaults and pod-failure-policy
// ones: the Job-level defaults apply when the controller creates each
// Job, as upstream leaves them off the template too.
func defaultCronJob(obj *batchv1.CronJob) {
	spec := &obj.Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if spec.Suspend == nil {
		spec.Suspend = utilptr.To(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = utilptr.To[int32](3)
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = utilptr.To[int32](1)
	}
	defaultPodFailurePolicy(spec.JobTemplate.Spec.PodFailurePolicy)
	core.DefaultPodTemplateSpec(&spec.JobTemplate.Spec.Template)
}

// The controller names each Job "<cronjob>-<minutes since epoch>", an
// 11-character suffix, and Job names must stay DNS labels.
const maxCronJobNameLength = utilvalidation.DNS1035LabelMaxLength - 11

func validateCronJob(obj *batchv1.CronJob) field.ErrorList {
	spec := &obj.Spec
	fldPath := field.NewPath("spec")
	var allErrs field.ErrorList
	if len(spec.Schedule) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("schedule"), ""))
	} else {
		allErrs = append(allErrs, validateScheduleFormat(spec.Schedule, spec.TimeZone, fldPath.Child("schedule"))...)
	}
	if spec.StartingDeadlineSeconds != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(*spec.StartingDeadlineSeconds, fldPath.Child("startingDeadlineSeconds"))...)
	}
	allErrs = append(allErrs, validateTimeZone(spec.TimeZone, fldPath.Child("timeZone"))...)
	allErrs = append(allErrs, validateConcurrencyPolicy(spec.ConcurrencyPolicy, fldPath.Child("concurrencyPolicy"))...)
	allErrs = append(allErrs, validateJobTemplateSpec(&spec.JobTemplate, fldPath.Child("jobTemplate"))...)
	if spec.SuccessfulJobsHistoryLimit != nil {
		// Zero is valid: it keeps no finished Jobs.
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*spec.SuccessfulJobsHistoryLimit), fldPath.Child("successfulJobsHistoryLimit"))...)
	}
	if spec.FailedJobsHistoryLimit != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*spec.FailedJobsHistoryLimit), fldPath.Child("failedJobsHistoryLimit"))...)
	}
	if len(obj.Name) > maxCronJobNameLength {
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "name"), obj.Name, fmt.Sprintf("must be no more than %d characters", maxCronJobNameLength)))
	}
	return allErrs
}

// Validate re-checks the whole spec on updates, and upstream's update
// check adds nothing beyond that for CronJobs.
func validateCronJobUpdate(obj, old *batchv1.CronJob) field.ErrorList { return nil }

func validateConcurrencyPolicy(policy batchv1.ConcurrencyPolicy, fldPath *field.Path) field.ErrorList {
	switch policy {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return field.ErrorList{field.NotSupported(fldPath, policy, []batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent})}
}

// validateScheduleFormat rejects a TZ= prefix even though the parser
// understands it: the timeZone field replaced it, and the two together
// would be ambiguous.
func validateScheduleFormat(schedule string, timeZone *string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if _, err := cron.Parse(schedule, nil); err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, schedule, err.Error()))
	}
	if strings.Contains(schedule, "TZ") {
		allErrs = append(allErrs, field.Invalid(fldPath, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return allErrs
}

// Each part of an IANA zone name (https://data.iana.org/time-zones/theory.html#naming)
// is letters, '.', '-' and '_', at most 14 long; digits and '+' are
// tolerated for legacy names such as Etc/GMT+1.
var validTimeZoneCharacters = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

func validateTimeZone(timeZone *string, fldPath *field.Path) field.ErrorList {
	if timeZone == nil {
		return nil
	}
	if len(*timeZone) == 0 {
		return field.ErrorList{field.Invalid(fldPath, timeZone, "timeZone must be nil or non-empty string")}
	}
	// Checked before loading so that a path-like value never reaches the
	// zoneinfo lookup.
	for _, part := range strings.Split(*timeZone, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZoneCharacters.MatchString(part) {
			return field.ErrorList{field.Invalid(fldPath, timeZone, fmt.Sprintf("unknown time zone %s", *timeZone))}
		}
	}
	var allErrs field.ErrorList
	// "Local" would mean whatever zone the controller happens to run in.
	if strings.EqualFold(*timeZone, "Local") {
		allErrs = append(allErrs, field.Invalid(fldPath, timeZone, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*timeZone); err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, timeZone, err.Error()))
	}
	return allErrs
}

// validateJobTemplateSpec checks a CronJob's job template. Its selector is
// always generated for each Job, so the template may not carry one.
func validateJobTemplateSpec(template *batchv1.JobTemplateSpec, fldPath *field.Path) field.ErrorList {
	specPath := fldPath.Child("spec")
	allErrs := validateJobSpec(&template.Spec, specPath)
	if template.Spec.Selector != nil {
		allErrs = append(allErrs, field.Invalid(specPath.Child("selector"), template.Spec.Selector, "`selector` will be auto-generated"))
	}
	if template.Spec.ManualSelector != nil && *template.Spec.ManualSelector {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("manualSelector"), template.Spec.ManualSelector, []string{"nil", "false"}))
	}
	return allErrs
}
