package batch

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/core"
)

// Jobs is the jobs resource.
var Jobs = &registry.Resource{
	Group: "batch", Version: "v1", Name: "jobs", Singular: "job", Kind: "Job",
	Namespaced:       true,
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	New:              func() runtime.Object { return &batchv1.Job{} },
	NewList:          func() runtime.Object { return &batchv1.JobList{} },
	PrepareForCreate: registry.Typed(prepareJobForCreate),
	PrepareForUpdate: registry.Typed2(prepareJobForUpdate),
	Default:          registry.Typed(defaultJob),
	Validate:         registry.TypedValidate(validateJob),
	ValidateUpdate:   registry.TypedValidateUpdate(validateJobUpdate),
	Table:            jobTable,
	Fields:           jobFields,
}

// The labels that tie a Job's pods to it. Upstream stamps both the
// prefixed and the older unprefixed keys so that existing tooling keeps
// finding the pods.
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

const (
	// maxParallelismForIndexedJob caps .status.completedIndexes' length.
	maxParallelismForIndexedJob = 100000
	// maxFailedIndexesForIndexedJob caps .status.failedIndexes' length.
	maxFailedIndexesForIndexedJob = 100_000

	completionsSoftLimit                    = 100_000
	parallelismLimitForHighCompletions      = 10_000
	maxFailedIndexesLimitForHighCompletions = 10_000

	maxPodFailurePolicyRules                   = 20
	maxPodFailurePolicyOnExitCodesValues       = 255
	maxPodFailurePolicyOnPodConditionsPatterns = 20

	maxManagedByLength = 63

	maxJobSuccessPolicySucceededIndexesLimit = 64 * 1024
	maxSuccessPolicyRule                     = 20
)

// Sorted, as upstream lists them from sets.
var (
	supportedPodFailurePolicyActions = []batchv1.PodFailurePolicyAction{
		batchv1.PodFailurePolicyActionCount, batchv1.PodFailurePolicyActionFailIndex,
		batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionIgnore,
	}
	supportedPodFailurePolicyOnExitCodesOperators = []batchv1.PodFailurePolicyOnExitCodesOperator{
		batchv1.PodFailurePolicyOnExitCodesOpIn, batchv1.PodFailurePolicyOnExitCodesOpNotIn,
	}
	supportedPodFailurePolicyOnPodConditionsStatuses = []corev1.ConditionStatus{
		corev1.ConditionFalse, corev1.ConditionTrue, corev1.ConditionUnknown,
	}
	supportedPodReplacementPolicies = []batchv1.PodReplacementPolicy{
		batchv1.Failed, batchv1.TerminatingOrFailed,
	}
)

// spec.scheduling belongs to the alpha WorkloadWithJob feature, which is
// off as upstream ships it, so it is dropped rather than stored unused;
// an update keeps it only on a Job that already had it.
func prepareJobForCreate(obj *batchv1.Job) {
	obj.Spec.Scheduling = nil
}

func prepareJobForUpdate(obj, old *batchv1.Job) {
	if old.Spec.Scheduling == nil {
		obj.Spec.Scheduling = nil
	}
}

func defaultJob(obj *batchv1.Job) {
	spec := &obj.Spec
	// A non-parallel job may leave both unset: it runs one pod to one
	// completion.
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = utilptr.To[int32](1)
		spec.Parallelism = utilptr.To[int32](1)
	}
	if spec.Parallelism == nil {
		spec.Parallelism = utilptr.To[int32](1)
	}
	if spec.BackoffLimit == nil {
		// With a per-index limit the global one would only get in the way.
		if spec.BackoffLimitPerIndex != nil {
			spec.BackoffLimit = utilptr.To[int32](math.MaxInt32)
		} else {
			spec.BackoffLimit = utilptr.To[int32](6)
		}
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = utilptr.To(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = utilptr.To(false)
	}
	defaultPodFailurePolicy(spec.PodFailurePolicy)
	if spec.PodReplacementPolicy == nil {
		// A pod failure policy has to see pods fully terminated to judge
		// them, so replacements wait for that.
		if spec.PodFailurePolicy != nil {
			spec.PodReplacementPolicy = utilptr.To(batchv1.Failed)
		} else {
			spec.PodReplacementPolicy = utilptr.To(batchv1.TerminatingOrFailed)
		}
	}
	if spec.ManualSelector == nil {
		spec.ManualSelector = utilptr.To(false)
	}
	// Upstream does this in its create strategy; here the uid is already
	// assigned when defaults run, and the step is idempotent on updates.
	if !*spec.ManualSelector {
		generateJobSelector(obj)
	}
	// Upstream copies the template's labels onto a Job that has none. It
	// does so on every decode, so what clients read back includes the
	// generated labels; copying after generation gives the same result.
	if len(obj.Labels) == 0 && spec.Template.Labels != nil {
		obj.Labels = maps.Clone(spec.Template.Labels)
	}
	core.DefaultPodTemplateSpec(&spec.Template)
}

func defaultPodFailurePolicy(policy *batchv1.PodFailurePolicy) {
	if policy == nil {
		return
	}
	for _, rule := range policy.Rules {
		for i := range rule.OnPodConditions {
			if rule.OnPodConditions[i].Status == "" {
				rule.OnPodConditions[i].Status = corev1.ConditionTrue
			}
		}
	}
}

// generateJobSelector selects the Job's pods by its uid, which no other
// controller's pods can carry, and labels the template to match. Labels
// the user already set are left alone; validation rejects them if they
// conflict.
func generateJobSelector(obj *batchv1.Job) {
	template := &obj.Spec.Template
	if template.Labels == nil {
		template.Labels = map[string]string{}
	}
	for _, key := range []string{legacyJobNameLabel, batchv1.JobNameLabel} {
		if _, found := template.Labels[key]; !found {
			template.Labels[key] = obj.Name
		}
	}
	for _, key := range []string{legacyControllerUIDLabel, batchv1.ControllerUidLabel} {
		if _, found := template.Labels[key]; !found {
			template.Labels[key] = string(obj.UID)
		}
	}
	if obj.Spec.Selector == nil {
		obj.Spec.Selector = &metav1.LabelSelector{}
	}
	if obj.Spec.Selector.MatchLabels == nil {
		obj.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, found := obj.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !found {
		obj.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = string(obj.UID)
	}
}

func validateJob(job *batchv1.Job) field.ErrorList {
	allErrs := validateGeneratedSelector(job)
	allErrs = append(allErrs, validateJobSpecWithSelector(&job.Spec, field.NewPath("spec"))...)
	// Indexed pods get "<job>-<index>" as hostname; catch names that
	// would make the last one an invalid DNS label now rather than when
	// the controller fails to create it.
	if job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion && job.Spec.Completions != nil && *job.Spec.Completions > 0 {
		maximumPodHostname := fmt.Sprintf("%s-%d", job.Name, *job.Spec.Completions-1)
		if errs := utilvalidation.IsDNS1123Label(maximumPodHostname); len(errs) > 0 {
			allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "name"), job.Name, fmt.Sprintf("will not able to create pod with invalid DNS label: %s", maximumPodHostname)))
		}
	}
	return allErrs
}

// validateGeneratedSelector checks that a generated selector and the
// template labels are still the ones generation produced, so that the
// Job cannot be pointed at pods it does not own.
func validateGeneratedSelector(job *batchv1.Job) field.ErrorList {
	if job.Spec.ManualSelector != nil && *job.Spec.ManualSelector {
		return nil
	}
	if job.Spec.Selector == nil {
		// The spec check reports the missing selector.
		return nil
	}
	var allErrs field.ErrorList
	// Without a uid the selector would be "controller-uid=", matching far
	// too much.
	if job.UID == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("metadata", "uid"), ""))
	}
	metaPath := field.NewPath("spec", "template", "metadata")
	allErrs = append(allErrs, validateHasLabel(job.Spec.Template.ObjectMeta, metaPath, legacyControllerUIDLabel, string(job.UID))...)
	allErrs = append(allErrs, validateHasLabel(job.Spec.Template.ObjectMeta, metaPath, legacyJobNameLabel, job.Name)...)
	allErrs = append(allErrs, validateHasLabel(job.Spec.Template.ObjectMeta, metaPath, batchv1.ControllerUidLabel, string(job.UID))...)
	allErrs = append(allErrs, validateHasLabel(job.Spec.Template.ObjectMeta, metaPath, batchv1.JobNameLabel, job.Name)...)
	expected := labels.Set{
		batchv1.ControllerUidLabel: string(job.UID),
		batchv1.JobNameLabel:       job.Name,
		legacyControllerUIDLabel:   string(job.UID),
		legacyJobNameLabel:         job.Name,
	}
	if selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector); err == nil && !selector.Matches(expected) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "selector"), job.Spec.Selector, "`selector` not auto-generated"))
	}
	return allErrs
}

func validateHasLabel(meta metav1.ObjectMeta, fldPath *field.Path, key, expected string) field.ErrorList {
	actual, ok := meta.Labels[key]
	if !ok {
		return field.ErrorList{field.Required(fldPath.Child("labels").Key(key), key)}
	}
	if actual != expected {
		return field.ErrorList{field.Invalid(fldPath.Child("labels").Key(key), meta.Labels, fmt.Sprintf("must be '%s'", expected))}
	}
	return nil
}

// validateJobSpecWithSelector is the check for a Job proper; a CronJob's
// job template has no selector yet and uses validateJobSpec alone.
func validateJobSpecWithSelector(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateJobSpec(spec, fldPath)
	if spec.Selector == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("selector"), ""))
	} else {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	}
	// Whether generated or manual, the selector must match the pods the
	// Job creates, or it would never see them.
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !selector.Matches(labels.Set(spec.Template.Labels)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	return allErrs
}

func validateJobSpec(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	nonnegative := func(p *int32, name string) {
		if p != nil {
			allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*p), fldPath.Child(name))...)
		}
	}
	nonnegative(spec.Parallelism, "parallelism")
	nonnegative(spec.Completions, "completions")
	if spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(*spec.ActiveDeadlineSeconds, fldPath.Child("activeDeadlineSeconds"))...)
	}
	nonnegative(spec.BackoffLimit, "backoffLimit")
	nonnegative(spec.TTLSecondsAfterFinished, "ttlSecondsAfterFinished")
	nonnegative(spec.BackoffLimitPerIndex, "backoffLimitPerIndex")
	if spec.MaxFailedIndexes != nil {
		nonnegative(spec.MaxFailedIndexes, "maxFailedIndexes")
		if spec.BackoffLimitPerIndex == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
	}
	if spec.ManagedBy != nil {
		allErrs = append(allErrs, utilvalidation.IsDomainPrefixedPath(fldPath.Child("managedBy"), *spec.ManagedBy)...)
		if len(*spec.ManagedBy) > maxManagedByLength {
			allErrs = append(allErrs, field.TooLongMaxLength(fldPath.Child("managedBy"), *spec.ManagedBy, maxManagedByLength))
		}
	}
	allErrs = append(allErrs, validateCompletionMode(spec, fldPath)...)
	if spec.PodFailurePolicy != nil {
		allErrs = append(allErrs, validatePodFailurePolicy(spec, fldPath.Child("podFailurePolicy"))...)
	}
	if spec.SuccessPolicy != nil {
		if utilptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("successPolicy"), *spec.SuccessPolicy, "requires indexed completion mode"))
		} else {
			allErrs = append(allErrs, validateSuccessPolicy(spec, fldPath.Child("successPolicy"))...)
		}
	}
	allErrs = append(allErrs, validatePodReplacementPolicy(spec, fldPath.Child("podReplacementPolicy"))...)

	allErrs = append(allErrs, core.ValidatePodTemplateSpec(&spec.Template, fldPath.Child("template"))...)
	// Pod defaulting turns an unset restart policy into Always, which a
	// Job cannot use: its pods must be allowed to finish.
	restartPath := fldPath.Child("template", "spec", "restartPolicy")
	switch policy := spec.Template.Spec.RestartPolicy; {
	case policy == corev1.RestartPolicyAlways || policy == "":
		allErrs = append(allErrs, field.Required(restartPath, fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)))
	case policy != corev1.RestartPolicyOnFailure && policy != corev1.RestartPolicyNever:
		allErrs = append(allErrs, field.NotSupported(restartPath, policy, []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	case spec.PodFailurePolicy != nil && policy != corev1.RestartPolicyNever:
		// The policy judges failed pods; restarted containers never fail
		// the pod.
		allErrs = append(allErrs, field.Invalid(restartPath, policy, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever)))
	}
	return allErrs
}

func validateCompletionMode(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	mode := utilptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion)
	if mode != batchv1.NonIndexedCompletion && mode != batchv1.IndexedCompletion {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("completionMode"), mode, []batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
	}
	if mode == batchv1.IndexedCompletion {
		if spec.Completions == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
		}
		if spec.Parallelism != nil && *spec.Parallelism > maxParallelismForIndexedJob {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("parallelism"), *spec.Parallelism, fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, batchv1.IndexedCompletion)))
		}
		if spec.Completions != nil && spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > *spec.Completions {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "must be less than or equal to completions"))
		}
		if spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > maxFailedIndexesForIndexedJob {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexedJob)))
		}
		// Large indexed jobs with per-index backoff must bound how much
		// failure state they accumulate.
		if spec.Completions != nil && *spec.Completions > completionsSoftLimit && spec.BackoffLimitPerIndex != nil {
			if spec.MaxFailedIndexes == nil {
				allErrs = append(allErrs, field.Required(fldPath.Child("maxFailedIndexes"), fmt.Sprintf("must be specified when completions is above %d", completionsSoftLimit)))
			}
			if spec.Parallelism != nil && *spec.Parallelism > parallelismLimitForHighCompletions {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("parallelism"), *spec.Parallelism, fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", parallelismLimitForHighCompletions, completionsSoftLimit)))
			}
			if spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > maxFailedIndexesLimitForHighCompletions {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", maxFailedIndexesLimitForHighCompletions, completionsSoftLimit)))
			}
		}
	} else if mode == batchv1.NonIndexedCompletion {
		if spec.BackoffLimitPerIndex != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("backoffLimitPerIndex"), *spec.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if spec.MaxFailedIndexes != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "requires indexed completion mode"))
		}
	}
	return allErrs
}

func validatePodReplacementPolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	if spec.PodReplacementPolicy == nil {
		return nil
	}
	policy := *spec.PodReplacementPolicy
	// A pod failure policy needs terminal pods, so only Failed fits it.
	if spec.PodFailurePolicy != nil {
		if policy != batchv1.Failed {
			return field.ErrorList{field.NotSupported(fldPath, policy, []batchv1.PodReplacementPolicy{batchv1.Failed})}
		}
		return nil
	}
	if !slices.Contains(supportedPodReplacementPolicies, policy) {
		return field.ErrorList{field.NotSupported(fldPath, policy, supportedPodReplacementPolicies)}
	}
	return nil
}

func validatePodFailurePolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	rulesPath := fldPath.Child("rules")
	if len(spec.PodFailurePolicy.Rules) > maxPodFailurePolicyRules {
		allErrs = append(allErrs, field.TooMany(rulesPath, len(spec.PodFailurePolicy.Rules), maxPodFailurePolicyRules))
	}
	containerNames := map[string]bool{}
	for _, c := range spec.Template.Spec.Containers {
		containerNames[c.Name] = true
	}
	for _, c := range spec.Template.Spec.InitContainers {
		containerNames[c.Name] = true
	}
	for i := range spec.PodFailurePolicy.Rules {
		allErrs = append(allErrs, validatePodFailurePolicyRule(spec, &spec.PodFailurePolicy.Rules[i], rulesPath.Index(i), containerNames)...)
	}
	return allErrs
}

func validatePodFailurePolicyRule(spec *batchv1.JobSpec, rule *batchv1.PodFailurePolicyRule, rulePath *field.Path, containerNames map[string]bool) field.ErrorList {
	var allErrs field.ErrorList
	actionPath := rulePath.Child("action")
	switch {
	case rule.Action == "":
		allErrs = append(allErrs, field.Required(actionPath, fmt.Sprintf("valid values: %q", supportedPodFailurePolicyActions)))
	case rule.Action == batchv1.PodFailurePolicyActionFailIndex:
		if spec.BackoffLimitPerIndex == nil {
			allErrs = append(allErrs, field.Invalid(actionPath, rule.Action, "requires the backoffLimitPerIndex to be set"))
		}
	case !slices.Contains(supportedPodFailurePolicyActions, rule.Action):
		allErrs = append(allErrs, field.NotSupported(actionPath, rule.Action, supportedPodFailurePolicyActions))
	}
	if rule.OnExitCodes != nil {
		allErrs = append(allErrs, validatePodFailurePolicyRuleOnExitCodes(rule.OnExitCodes, rulePath.Child("onExitCodes"), containerNames)...)
	}
	if len(rule.OnPodConditions) > 0 {
		allErrs = append(allErrs, validatePodFailurePolicyRuleOnPodConditions(rule.OnPodConditions, rulePath.Child("onPodConditions"))...)
	}
	if rule.OnExitCodes != nil && len(rule.OnPodConditions) > 0 {
		allErrs = append(allErrs, field.Invalid(rulePath, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
	}
	if rule.OnExitCodes == nil && len(rule.OnPodConditions) == 0 {
		allErrs = append(allErrs, field.Invalid(rulePath, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
	}
	return allErrs
}

func validatePodFailurePolicyRuleOnPodConditions(patterns []batchv1.PodFailurePolicyOnPodConditionsPattern, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(patterns) > maxPodFailurePolicyOnPodConditionsPatterns {
		allErrs = append(allErrs, field.TooMany(fldPath, len(patterns), maxPodFailurePolicyOnPodConditionsPatterns))
	}
	for i, pattern := range patterns {
		patternPath := fldPath.Index(i)
		for _, msg := range utilvalidation.IsQualifiedName(string(pattern.Type)) {
			allErrs = append(allErrs, field.Invalid(patternPath.Child("type"), string(pattern.Type), msg))
		}
		statusPath := patternPath.Child("status")
		switch {
		case pattern.Status == "":
			allErrs = append(allErrs, field.Required(statusPath, fmt.Sprintf("valid values: %q", supportedPodFailurePolicyOnPodConditionsStatuses)))
		case !slices.Contains(supportedPodFailurePolicyOnPodConditionsStatuses, pattern.Status):
			allErrs = append(allErrs, field.NotSupported(statusPath, pattern.Status, supportedPodFailurePolicyOnPodConditionsStatuses))
		}
	}
	return allErrs
}

func validatePodFailurePolicyRuleOnExitCodes(req *batchv1.PodFailurePolicyOnExitCodesRequirement, fldPath *field.Path, containerNames map[string]bool) field.ErrorList {
	var allErrs field.ErrorList
	operatorPath := fldPath.Child("operator")
	switch {
	case req.Operator == "":
		allErrs = append(allErrs, field.Required(operatorPath, fmt.Sprintf("valid values: %q", supportedPodFailurePolicyOnExitCodesOperators)))
	case !slices.Contains(supportedPodFailurePolicyOnExitCodesOperators, req.Operator):
		allErrs = append(allErrs, field.NotSupported(operatorPath, req.Operator, supportedPodFailurePolicyOnExitCodesOperators))
	}
	if req.ContainerName != nil && !containerNames[*req.ContainerName] {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("containerName"), *req.ContainerName, "must be one of the container or initContainer names in the pod template"))
	}
	valuesPath := fldPath.Child("values")
	if len(req.Values) == 0 {
		allErrs = append(allErrs, field.Invalid(valuesPath, req.Values, "at least one value is required"))
	} else if len(req.Values) > maxPodFailurePolicyOnExitCodesValues {
		allErrs = append(allErrs, field.TooMany(valuesPath, len(req.Values), maxPodFailurePolicyOnExitCodesValues))
	}
	ordered := true
	seen := map[int32]bool{}
	for j, value := range req.Values {
		valuePath := valuesPath.Index(j)
		// Exit code 0 is success; "In 0" would treat success as failure.
		if req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && value == 0 {
			allErrs = append(allErrs, field.Invalid(valuePath, value, "must not be 0 for the In operator"))
		}
		if seen[value] {
			allErrs = append(allErrs, field.Duplicate(valuePath, value))
		}
		seen[value] = true
		if j > 0 && req.Values[j-1] > value {
			ordered = false
		}
	}
	if !ordered {
		allErrs = append(allErrs, field.Invalid(valuesPath, req.Values, "must be ordered"))
	}
	return allErrs
}

func validateSuccessPolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	rulesPath := fldPath.Child("rules")
	if len(spec.SuccessPolicy.Rules) == 0 {
		allErrs = append(allErrs, field.Required(rulesPath, "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(spec.SuccessPolicy.Rules) > maxSuccessPolicyRule {
		allErrs = append(allErrs, field.TooMany(rulesPath, len(spec.SuccessPolicy.Rules), maxSuccessPolicyRule))
	}
	for i := range spec.SuccessPolicy.Rules {
		allErrs = append(allErrs, validateSuccessPolicyRule(spec, &spec.SuccessPolicy.Rules[i], rulesPath.Index(i))...)
	}
	return allErrs
}

func validateSuccessPolicyRule(spec *batchv1.JobSpec, rule *batchv1.SuccessPolicyRule, rulePath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if rule.SucceededCount == nil && rule.SucceededIndexes == nil {
		allErrs = append(allErrs, field.Required(rulePath, "at least one of succeededCount or succeededIndexes must be specified"))
	}
	// An indexed Job without completions is already reported; the bounds
	// below have nothing to be measured against then.
	if spec.Completions == nil {
		return allErrs
	}
	completions := *spec.Completions
	var totalIndexes int32
	if rule.SucceededIndexes != nil {
		indexesPath := rulePath.Child("succeededIndexes")
		if len(*rule.SucceededIndexes) > maxJobSuccessPolicySucceededIndexesLimit {
			allErrs = append(allErrs, field.TooLong(indexesPath, *rule.SucceededIndexes, maxJobSuccessPolicySucceededIndexesLimit))
		}
		var err error
		if totalIndexes, err = validateIndexesFormat(*rule.SucceededIndexes, completions); err != nil {
			allErrs = append(allErrs, field.Invalid(indexesPath, *rule.SucceededIndexes, fmt.Sprintf("error parsing succeededIndexes: %s", err.Error())))
		}
	}
	if rule.SucceededCount != nil {
		countPath := rulePath.Child("succeededCount")
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*rule.SucceededCount), countPath)...)
		if *rule.SucceededCount > completions {
			allErrs = append(allErrs, field.Invalid(countPath, *rule.SucceededCount, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
		}
		if rule.SucceededIndexes != nil && *rule.SucceededCount > totalIndexes {
			allErrs = append(allErrs, field.Invalid(countPath, *rule.SucceededCount, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", totalIndexes)))
		}
	}
	return allErrs
}

// validateIndexesFormat checks a list of ordered, non-overlapping index
// intervals below completions ("1,3-5,7") and counts the indexes in it.
func validateIndexesFormat(indexes string, completions int32) (int32, error) {
	if len(indexes) == 0 {
		return 0, nil
	}
	var last *int32
	var total int32
	for _, interval := range strings.Split(indexes, ",") {
		x, y, err := parseIndexInterval(interval, completions)
		if err != nil {
			return 0, err
		}
		if last != nil && *last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", *last, x)
		}
		total += y - x + 1
		last = &y
	}
	return total, nil
}

func parseIndexInterval(interval string, completions int32) (int32, int32, error) {
	limits := strings.Split(interval, "-")
	if len(limits) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", interval)
	}
	x, err := strconv.Atoi(limits[0])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[0])
	}
	if x >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", limits[0])
	}
	if len(limits) == 1 {
		return int32(x), int32(x), nil
	}
	y, err := strconv.Atoi(limits[1])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[1])
	}
	if y >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", limits[1])
	}
	if x >= y {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
	}
	return int32(x), int32(y), nil
}

// validateJobUpdate adds what may not change once a Job exists: the pods
// it runs and how it counts them. Validate re-checks the spec itself.
func validateJobUpdate(job, old *batchv1.Job) field.ErrorList {
	fldPath := field.NewPath("spec")
	spec, oldSpec := &job.Spec, &old.Spec
	allErrs := validateCompletionsUpdate(spec, oldSpec, fldPath.Child("completions"))
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(spec.Selector, oldSpec.Selector, fldPath.Child("selector"))...)
	allErrs = append(allErrs, validateJobPodTemplateUpdate(job, old, fldPath.Child("template"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(spec.CompletionMode, oldSpec.CompletionMode, fldPath.Child("completionMode"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(spec.PodFailurePolicy, oldSpec.PodFailurePolicy, fldPath.Child("podFailurePolicy"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(spec.BackoffLimitPerIndex, oldSpec.BackoffLimitPerIndex, fldPath.Child("backoffLimitPerIndex"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(spec.ManagedBy, oldSpec.ManagedBy, fldPath.Child("managedBy"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(spec.SuccessPolicy, oldSpec.SuccessPolicy, fldPath.Child("successPolicy"))...)
	return allErrs
}

// validateCompletionsUpdate lets an Indexed Job be resized (elastic
// indexed jobs, GA upstream) as long as completions keeps pace with
// parallelism; otherwise completions is fixed.
func validateCompletionsUpdate(spec, oldSpec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	if utilptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
		return apimachineryvalidation.ValidateImmutableField(spec.Completions, oldSpec.Completions, fldPath)
	}
	// A nil value for an Indexed Job is reported by the spec check.
	if apiequality.Semantic.DeepEqual(spec.Completions, oldSpec.Completions) || spec.Completions == nil {
		return nil
	}
	if spec.Parallelism == nil || *spec.Completions != *spec.Parallelism {
		return field.ErrorList{field.Invalid(fldPath, spec.Completions, fmt.Sprintf("can only be modified in tandem with %s", fldPath.Root().Child("parallelism").String()))}
	}
	return nil
}

// validateJobPodTemplateUpdate keeps the template fixed, except that a
// suspended Job which never started may still be re-targeted: queueing
// controllers adjust where its pods will land before releasing it.
func validateJobPodTemplateUpdate(job, old *batchv1.Job, fldPath *field.Path) field.ErrorList {
	template := &job.Spec.Template
	oldTemplate := &old.Spec.Template
	suspended := old.Spec.Suspend != nil && *old.Spec.Suspend
	if suspended && old.Status.StartTime == nil {
		oldTemplate = oldTemplate.DeepCopy()
		switch {
		case template.Spec.Affinity == nil && oldTemplate.Spec.Affinity != nil:
			// Clearing affinity is fine when node affinity was all it had.
			oldTemplate.Spec.Affinity.NodeAffinity = nil
			if *oldTemplate.Spec.Affinity == (corev1.Affinity{}) {
				oldTemplate.Spec.Affinity = nil
			}
		case template.Spec.Affinity != nil && oldTemplate.Spec.Affinity == nil:
			oldTemplate.Spec.Affinity = &corev1.Affinity{NodeAffinity: template.Spec.Affinity.NodeAffinity}
		case template.Spec.Affinity != nil && oldTemplate.Spec.Affinity != nil:
			oldTemplate.Spec.Affinity.NodeAffinity = template.Spec.Affinity.NodeAffinity
		}
		oldTemplate.Spec.NodeSelector = template.Spec.NodeSelector
		oldTemplate.Spec.Tolerations = template.Spec.Tolerations
		oldTemplate.Annotations = template.Annotations
		oldTemplate.Labels = template.Labels
		oldTemplate.Spec.SchedulingGates = template.Spec.SchedulingGates
	}
	return apimachineryvalidation.ValidateImmutableField(template, oldTemplate, fldPath)
}
