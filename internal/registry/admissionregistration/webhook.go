package admissionregistration

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/util/webhook"
	utilptr "k8s.io/utils/ptr"
)

// webhookView is what validation reads of a ValidatingWebhook or a
// MutatingWebhook, which share all of it but the reinvocation policy, so
// that both kinds go through one implementation of upstream's rules.
type webhookView struct {
	name                    string
	clientConfig            *admissionregistrationv1.WebhookClientConfig
	rules                   []admissionregistrationv1.RuleWithOperations
	failurePolicy           *admissionregistrationv1.FailurePolicyType
	matchPolicy             *admissionregistrationv1.MatchPolicyType
	namespaceSelector       *metav1.LabelSelector
	objectSelector          *metav1.LabelSelector
	sideEffects             *admissionregistrationv1.SideEffectClass
	timeoutSeconds          *int32
	admissionReviewVersions []string
	matchConditions         []admissionregistrationv1.MatchCondition
	mutating                bool
	reinvocationPolicy      *admissionregistrationv1.ReinvocationPolicyType
}

func validatingWebhookViews(hooks []admissionregistrationv1.ValidatingWebhook) []webhookView {
	views := make([]webhookView, len(hooks))
	for i := range hooks {
		h := &hooks[i]
		views[i] = webhookView{
			name: h.Name, clientConfig: &h.ClientConfig, rules: h.Rules, failurePolicy: h.FailurePolicy, matchPolicy: h.MatchPolicy,
			namespaceSelector: h.NamespaceSelector, objectSelector: h.ObjectSelector, sideEffects: h.SideEffects,
			timeoutSeconds: h.TimeoutSeconds, admissionReviewVersions: h.AdmissionReviewVersions, matchConditions: h.MatchConditions,
		}
	}
	return views
}

func mutatingWebhookViews(hooks []admissionregistrationv1.MutatingWebhook) []webhookView {
	views := make([]webhookView, len(hooks))
	for i := range hooks {
		h := &hooks[i]
		views[i] = webhookView{
			name: h.Name, clientConfig: &h.ClientConfig, rules: h.Rules, failurePolicy: h.FailurePolicy, matchPolicy: h.MatchPolicy,
			namespaceSelector: h.NamespaceSelector, objectSelector: h.ObjectSelector, sideEffects: h.SideEffects,
			timeoutSeconds: h.TimeoutSeconds, admissionReviewVersions: h.AdmissionReviewVersions, matchConditions: h.MatchConditions,
			mutating: true, reinvocationPolicy: h.ReinvocationPolicy,
		}
	}
	return views
}

// validateWebhooks is upstream's validate{Validating,Mutating}WebhookConfiguration
// without the metadata, which the server checks.
func validateWebhooks(hooks []webhookView, opts validationOptions) field.ErrorList {
	var allErrors field.ErrorList
	names := sets.New[string]()
	for i := range hooks {
		hook := &hooks[i]
		hookPath := field.NewPath("webhooks").Index(i)
		allErrors = append(allErrors, validateWebhook(hook, opts, hookPath)...)
		allErrors = append(allErrors, validateAdmissionReviewVersions(hook.admissionReviewVersions, opts.requireRecognizedAdmissionReviewVersion, hookPath.Child("admissionReviewVersions"))...)
		if opts.requireUniqueWebhookNames && len(hook.name) > 0 {
			if names.Has(hook.name) {
				allErrors = append(allErrors, field.Duplicate(hookPath.Child("name"), hook.name))
			} else {
				names.Insert(hook.name)
			}
		}
	}
	return allErrors
}

func validateWebhook(hook *webhookView, opts validationOptions, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	allErrors = append(allErrors, utilvalidation.IsFullyQualifiedName(fldPath.Child("name"), hook.name)...)
	for i := range hook.rules {
		allErrors = append(allErrors, validateRuleWithOperations(&hook.rules[i], fldPath.Child("rules").Index(i))...)
	}
	if hook.failurePolicy != nil && !slices.Contains(supportedFailurePolicies, string(*hook.failurePolicy)) {
		allErrors = append(allErrors, field.NotSupported(fldPath.Child("failurePolicy"), *hook.failurePolicy, supportedFailurePolicies))
	}
	if hook.matchPolicy != nil && !slices.Contains(supportedMatchPolicies, string(*hook.matchPolicy)) {
		allErrors = append(allErrors, field.NotSupported(fldPath.Child("matchPolicy"), *hook.matchPolicy, supportedMatchPolicies))
	}
	allowedSideEffects := supportedSideEffects
	if opts.requireNoSideEffects {
		allowedSideEffects = noSideEffects
	}
	if hook.sideEffects == nil {
		allErrors = append(allErrors, field.Required(fldPath.Child("sideEffects"), fmt.Sprintf("must specify one of %v", strings.Join(allowedSideEffects, ", "))))
	}
	if hook.sideEffects != nil && !slices.Contains(allowedSideEffects, string(*hook.sideEffects)) {
		allErrors = append(allErrors, field.NotSupported(fldPath.Child("sideEffects"), *hook.sideEffects, allowedSideEffects))
	}
	if hook.timeoutSeconds != nil && (*hook.timeoutSeconds > 30 || *hook.timeoutSeconds < 1) {
		allErrors = append(allErrors, field.Invalid(fldPath.Child("timeoutSeconds"), *hook.timeoutSeconds, "the timeout value must be between 1 and 30 seconds"))
	}
	selectorOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValueInSelector}
	if hook.namespaceSelector != nil {
		allErrors = append(allErrors, metav1validation.ValidateLabelSelector(hook.namespaceSelector, selectorOpts, fldPath.Child("namespaceSelector"))...)
	}
	if hook.objectSelector != nil {
		allErrors = append(allErrors, metav1validation.ValidateLabelSelector(hook.objectSelector, selectorOpts, fldPath.Child("objectSelector"))...)
	}
	if hook.mutating && hook.reinvocationPolicy != nil && !slices.Contains(supportedReinvocationPolicies, string(*hook.reinvocationPolicy)) {
		allErrors = append(allErrors, field.NotSupported(fldPath.Child("reinvocationPolicy"), *hook.reinvocationPolicy, supportedReinvocationPolicies))
	}
	cc := hook.clientConfig
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		allErrors = append(allErrors, field.Required(fldPath.Child("clientConfig"), "exactly one of url or service is required"))
	case cc.URL != nil:
		allErrors = append(allErrors, webhook.ValidateWebhookURL(fldPath.Child("clientConfig").Child("url"), *cc.URL, true)...)
	case cc.Service != nil:
		// Upstream passes the name where the namespace goes and the other
		// way round, so a missing name is reported on service.namespace;
		// kept for the same messages.
		allErrors = append(allErrors, webhook.ValidateWebhookService(fldPath.Child("clientConfig").Child("service"),
			cc.Service.Name, cc.Service.Namespace, cc.Service.Path, utilptr.Deref(cc.Service.Port, 0))...)
	}
	if !opts.ignoreMatchConditions {
		allErrors = append(allErrors, validateMatchConditions(hook.matchConditions, opts, fldPath.Child("matchConditions"))...)
	}
	return allErrors
}

// webhookUpdateOptions relaxes each rule the stored webhooks already
// break, and leaves unchanged match conditions uncompiled.
func webhookUpdateOptions(hooks, oldHooks []webhookView) validationOptions {
	return validationOptions{
		ignoreMatchConditions:                   sameMatchConditions(hooks, oldHooks),
		requireNoSideEffects:                    haveNoSideEffects(oldHooks),
		requireRecognizedAdmissionReviewVersion: haveAcceptedAdmissionReviewVersions(oldHooks),
		requireUniqueWebhookNames:               haveUniqueNames(oldHooks),
		allowInvalidLabelValueInSelector:        haveInvalidLabelValueInSelector(oldHooks),
		preexisting:                             preexistingExpressions{matchConditions: webhookMatchConditionExpressions(oldHooks)},
	}
}

func sameMatchConditions(hooks, oldHooks []webhookView) bool {
	if len(hooks) != len(oldHooks) {
		return false
	}
	for i := range oldHooks {
		if !reflect.DeepEqual(hooks[i].matchConditions, oldHooks[i].matchConditions) {
			return false
		}
	}
	return true
}

// haveAcceptedAdmissionReviewVersions is false when some webhook lists
// versions and none of them is one the server accepts.
func haveAcceptedAdmissionReviewVersions(hooks []webhookView) bool {
	for _, hook := range hooks {
		if len(hook.admissionReviewVersions) == 0 {
			continue
		}
		if !slices.ContainsFunc(hook.admissionReviewVersions, func(v string) bool { return slices.Contains(acceptedAdmissionReviewVersions, v) }) {
			return false
		}
	}
	return true
}

func haveUniqueNames(hooks []webhookView) bool {
	names := sets.New[string]()
	for _, hook := range hooks {
		if names.Has(hook.name) {
			return false
		}
		names.Insert(hook.name)
	}
	return true
}

func haveNoSideEffects(hooks []webhookView) bool {
	for _, hook := range hooks {
		if hook.sideEffects == nil || !slices.Contains(noSideEffects, string(*hook.sideEffects)) {
			return false
		}
	}
	return true
}

// haveInvalidLabelValueInSelector reports selectors written before label
// values in them were validated (kubernetes#99139).
func haveInvalidLabelValueInSelector(hooks []webhookView) bool {
	strict := metav1validation.LabelSelectorValidationOptions{}
	for _, hook := range hooks {
		if hook.namespaceSelector != nil && len(metav1validation.ValidateLabelSelector(hook.namespaceSelector, strict, nil)) > 0 {
			return true
		}
		if hook.objectSelector != nil && len(metav1validation.ValidateLabelSelector(hook.objectSelector, strict, nil)) > 0 {
			return true
		}
	}
	return false
}

func webhookMatchConditionExpressions(hooks []webhookView) sets.Set[string] {
	s := sets.New[string]()
	for _, hook := range hooks {
		s = s.Union(matchConditionExpressions(hook.matchConditions))
	}
	return s
}
