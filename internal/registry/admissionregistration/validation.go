package admissionregistration

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// staticConfigSuffix ends the names upstream reserves for admission
// configuration loaded from manifests (ManifestBasedAdmissionControlConfig,
// on by default since 1.37); the API may not create such objects.
const staticConfigSuffix = ".static.k8s.io"

// validateStaticSuffix is upstream's ValidateStaticSuffix, which its
// strategies run on create only.
func validateStaticSuffix(name string) field.ErrorList {
	if !strings.HasSuffix(name, staticConfigSuffix) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), name,
		fmt.Sprintf("names ending with %q are reserved for static manifest-based configurations and cannot be managed via the API", staticConfigSuffix))}
}

// dedupe keeps the first of errors with the same message. Upstream's
// strategies pass their errors through declarative validation, which
// filters them through an aggregate that does this: two rules naming DELETE
// in a mutating policy, reported without an index, give one error.
func dedupe(errs field.ErrorList) field.ErrorList {
	if len(errs) < 2 {
		return errs
	}
	seen := sets.New[string]()
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		if msg := e.Error(); !seen.Has(msg) {
			seen.Insert(msg)
			out = append(out, e)
		}
	}
	return out
}

// The value sets below are sorted, as upstream lists them from sets in
// its "supported values" messages.
var (
	supportedFailurePolicies = []string{string(admissionregistrationv1.Fail), string(admissionregistrationv1.Ignore)}
	supportedMatchPolicies   = []string{string(admissionregistrationv1.Equivalent), string(admissionregistrationv1.Exact)}
	supportedSideEffects     = []string{
		string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun),
		string(admissionregistrationv1.SideEffectClassSome), string(admissionregistrationv1.SideEffectClassUnknown),
	}
	// noSideEffects are the only classes a new webhook may declare, so
	// that every webhook can be called for dry-run requests.
	noSideEffects       = []string{string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun)}
	supportedOperations = []string{
		string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Connect), string(admissionregistrationv1.Create),
		string(admissionregistrationv1.Delete), string(admissionregistrationv1.Update),
	}
	// supportedMutatingOperations leaves out DELETE: a mutating policy has
	// no object to mutate on a delete.
	supportedMutatingOperations = []string{
		string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Connect), string(admissionregistrationv1.Create),
		string(admissionregistrationv1.Update),
	}
	supportedReinvocationPolicies = []string{string(admissionregistrationv1.IfNeededReinvocationPolicy), string(admissionregistrationv1.NeverReinvocationPolicy)}
	supportedValidationReasons    = []string{
		string(metav1.StatusReasonForbidden), string(metav1.StatusReasonInvalid), string(metav1.StatusReasonRequestEntityTooLarge),
	}
	supportedPatchTypes = []string{string(admissionregistrationv1.PatchTypeApplyConfiguration), string(admissionregistrationv1.PatchTypeJSONPatch)}
	supportedScopes     = []string{
		string(admissionregistrationv1.AllScopes), string(admissionregistrationv1.ClusterScope), string(admissionregistrationv1.NamespacedScope),
	}
	supportedValidationActions = []string{
		string(admissionregistrationv1.Audit), string(admissionregistrationv1.Deny), string(admissionregistrationv1.Warn),
	}
	// acceptedAdmissionReviewVersions are the versions of AdmissionReview
	// the previous minor release understands, so that a webhook registered
	// now still works after a rollback.
	acceptedAdmissionReviewVersions = []string{"v1", "v1beta1"}
)

// validationOptions are what varies between checks of the same kinds:
// mostly what an update relaxes for an object that already broke a rule,
// so that it can still be changed without being fixed first.
type validationOptions struct {
	ignoreMatchConditions                   bool
	allowParamsInMatchConditions            bool
	requireNoSideEffects                    bool
	requireRecognizedAdmissionReviewVersion bool
	requireUniqueWebhookNames               bool
	allowInvalidLabelValueInSelector        bool
	preexisting                             preexistingExpressions
}

// createOptions hold a new webhook configuration to every rule.
var createOptions = validationOptions{
	requireNoSideEffects:                    true,
	requireRecognizedAdmissionReviewVersion: true,
	requireUniqueWebhookNames:               true,
}

// preexistingExpressions are the CEL expressions the stored object
// already holds. They are compiled in the stored-expressions environment,
// which keeps the libraries a later release may have retired from new
// expressions. A nil set holds nothing.
type preexistingExpressions struct {
	matchConditions       sets.Set[string]
	validations           sets.Set[string]
	validationMessages    sets.Set[string]
	auditAnnotationValues sets.Set[string]
	applyConfigurations   sets.Set[string]
}

func matchConditionExpressions(conditions []admissionregistrationv1.MatchCondition) sets.Set[string] {
	s := sets.New[string]()
	for _, mc := range conditions {
		s.Insert(mc.Expression)
	}
	return s
}

func hasWildcard(slice []string) bool {
	return slices.Contains(slice, "*")
}

func validateResources(resources []string, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	if len(resources) == 0 {
		allErrors = append(allErrors, field.Required(fldPath, ""))
	}
	resourcesWithWildcardSubresources := sets.New[string]() // x/*
	subresourcesWithWildcardResource := sets.New[string]()  // */x
	hasDoubleWildcard := false                              // */*
	hasSingleWildcard := false                              // *
	hasResourceWithoutSubresource := false                  // x
	for i, resSub := range resources {
		if resSub == "" {
			allErrors = append(allErrors, field.Required(fldPath.Index(i), ""))
			continue
		}
		if resSub == "*/*" {
			hasDoubleWildcard = true
		}
		if resSub == "*" {
			hasSingleWildcard = true
		}
		parts := strings.SplitN(resSub, "/", 2)
		if len(parts) == 1 {
			// Upstream records only the last plain entry, so "x", "*"
			// passes while "*", "x" does not; kept for the same verdicts.
			hasResourceWithoutSubresource = resSub != "*"
			continue
		}
		res, sub := parts[0], parts[1]
		if resourcesWithWildcardSubresources.Has(res) {
			allErrors = append(allErrors, field.Invalid(fldPath.Index(i), resSub, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, resSub)))
		}
		if subresourcesWithWildcardResource.Has(sub) {
			allErrors = append(allErrors, field.Invalid(fldPath.Index(i), resSub, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, resSub)))
		}
		if sub == "*" {
			resourcesWithWildcardSubresources.Insert(res)
		}
		if res == "*" {
			subresourcesWithWildcardResource.Insert(sub)
		}
	}
	if len(resources) > 1 && hasDoubleWildcard {
		allErrors = append(allErrors, field.Invalid(fldPath, resources, "if '*/*' is present, must not specify other resources"))
	}
	if hasSingleWildcard && hasResourceWithoutSubresource {
		allErrors = append(allErrors, field.Invalid(fldPath, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return allErrors
}

func validateRule(rule *admissionregistrationv1.Rule, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	if len(rule.APIGroups) == 0 {
		allErrors = append(allErrors, field.Required(fldPath.Child("apiGroups"), ""))
	}
	if len(rule.APIGroups) > 1 && hasWildcard(rule.APIGroups) {
		allErrors = append(allErrors, field.Invalid(fldPath.Child("apiGroups"), rule.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	// A group may be empty (the core group); a version may not.
	if len(rule.APIVersions) == 0 {
		allErrors = append(allErrors, field.Required(fldPath.Child("apiVersions"), ""))
	}
	if len(rule.APIVersions) > 1 && hasWildcard(rule.APIVersions) {
		allErrors = append(allErrors, field.Invalid(fldPath.Child("apiVersions"), rule.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, version := range rule.APIVersions {
		if version == "" {
			allErrors = append(allErrors, field.Required(fldPath.Child("apiVersions").Index(i), ""))
		}
	}
	allErrors = append(allErrors, validateResources(rule.Resources, fldPath.Child("resources"))...)
	if rule.Scope != nil && !slices.Contains(supportedScopes, string(*rule.Scope)) {
		allErrors = append(allErrors, field.NotSupported(fldPath.Child("scope"), *rule.Scope, supportedScopes))
	}
	return allErrors
}

func validateRuleWithOperations(rule *admissionregistrationv1.RuleWithOperations, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	if len(rule.Operations) == 0 {
		allErrors = append(allErrors, field.Required(fldPath.Child("operations"), ""))
	}
	if len(rule.Operations) > 1 && slices.Contains(rule.Operations, admissionregistrationv1.OperationAll) {
		allErrors = append(allErrors, field.Invalid(fldPath.Child("operations"), rule.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, operation := range rule.Operations {
		if !slices.Contains(supportedOperations, string(operation)) {
			allErrors = append(allErrors, field.NotSupported(fldPath.Child("operations").Index(i), operation, supportedOperations))
		}
	}
	return append(allErrors, validateRule(&rule.Rule, fldPath)...)
}

func validateAdmissionReviewVersions(versions []string, requireRecognized bool, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	if len(versions) < 1 {
		return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must specify one of %v", strings.Join(acceptedAdmissionReviewVersions, ", ")))}
	}
	seen := map[string]bool{}
	hasAcceptedVersion := false
	for i, v := range versions {
		if seen[v] {
			allErrors = append(allErrors, field.Invalid(fldPath.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			allErrors = append(allErrors, field.Invalid(fldPath.Index(i), v, msg))
		}
		if slices.Contains(acceptedAdmissionReviewVersions, v) {
			hasAcceptedVersion = true
		}
	}
	if requireRecognized && !hasAcceptedVersion {
		allErrors = append(allErrors, field.Invalid(fldPath, versions,
			fmt.Sprintf("must include at least one of %v", strings.Join(acceptedAdmissionReviewVersions, ", "))))
	}
	return allErrors
}

func validateMatchConditions(conditions []admissionregistrationv1.MatchCondition, opts validationOptions, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	names := sets.New[string]()
	if len(conditions) > 64 {
		allErrors = append(allErrors, field.TooMany(fldPath, len(conditions), 64))
	}
	for i := range conditions {
		mc := &conditions[i]
		allErrors = append(allErrors, validateMatchCondition(mc, opts, fldPath.Index(i))...)
		if len(mc.Name) > 0 {
			if names.Has(mc.Name) {
				allErrors = append(allErrors, field.Duplicate(fldPath.Index(i).Child("name"), mc.Name))
			} else {
				names.Insert(mc.Name)
			}
		}
	}
	return allErrors
}

func validateMatchCondition(mc *admissionregistrationv1.MatchCondition, opts validationOptions, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	trimmed := strings.TrimSpace(mc.Expression)
	if len(trimmed) == 0 {
		allErrors = append(allErrors, field.Required(fldPath.Child("expression"), ""))
	} else {
		allErrors = append(allErrors, validateMatchConditionExpression(trimmed, opts, fldPath.Child("expression"))...)
	}
	if len(mc.Name) == 0 {
		allErrors = append(allErrors, field.Required(fldPath.Child("name"), ""))
	} else {
		allErrors = append(allErrors, validateQualifiedName(mc.Name, fldPath.Child("name"))...)
	}
	return allErrors
}

// validateQualifiedName is upstream's core ValidateQualifiedName.
func validateQualifiedName(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg).WithOrigin("format=qualified-name"))
	}
	return allErrs
}

func validateParamKind(pk admissionregistrationv1.ParamKind, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	if len(pk.APIVersion) == 0 {
		allErrors = append(allErrors, field.Required(fldPath.Child("apiVersion"), ""))
	} else if group, version, err := parseGroupVersion(pk.APIVersion); err != nil {
		allErrors = append(allErrors, field.Invalid(fldPath.Child("apiVersion"), pk.APIVersion, err.Error()))
	} else {
		// The same rules as an APIService's group and version.
		if len(group) > 0 {
			if errs := utilvalidation.IsDNS1123Subdomain(group); len(errs) > 0 {
				allErrors = append(allErrors, field.Invalid(fldPath.Child("apiVersion"), group, strings.Join(errs, ",")))
			}
		}
		if len(version) == 0 {
			allErrors = append(allErrors, field.Invalid(fldPath.Child("apiVersion"), pk.APIVersion, "version must be specified"))
		} else if errs := utilvalidation.IsDNS1035Label(version); len(errs) > 0 {
			allErrors = append(allErrors, field.Invalid(fldPath.Child("apiVersion"), version, strings.Join(errs, ",")))
		}
	}
	if len(pk.Kind) == 0 {
		allErrors = append(allErrors, field.Required(fldPath.Child("kind"), ""))
	} else if errs := utilvalidation.IsDNS1035Label(strings.ToLower(pk.Kind)); len(errs) > 0 {
		allErrors = append(allErrors, field.Invalid(fldPath.Child("kind"), pk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(errs, ",")))
	}
	return allErrors
}

// parseGroupVersion is upstream's own parser, laxer than
// schema.ParseGroupVersion: "/" and "" are the empty group version.
func parseGroupVersion(gv string) (group, version string, err error) {
	if len(gv) == 0 || gv == "/" {
		return "", "", nil
	}
	switch strings.Count(gv, "/") {
	case 0:
		return "", gv, nil
	case 1:
		i := strings.Index(gv, "/")
		return gv[:i], gv[i+1:], nil
	default:
		return "", "", fmt.Errorf("unexpected GroupVersion string: %v", gv)
	}
}

// validateMatchResources checks selectors strictly: policies came after
// the lax selector validation webhooks still allow (kubernetes#99139).
func validateMatchResources(mr *admissionregistrationv1.MatchResources, fldPath *field.Path) field.ErrorList {
	if mr == nil {
		return nil
	}
	var allErrors field.ErrorList
	if mr.MatchPolicy == nil {
		allErrors = append(allErrors, field.Required(fldPath.Child("matchPolicy"), ""))
	} else if !slices.Contains(supportedMatchPolicies, string(*mr.MatchPolicy)) {
		allErrors = append(allErrors, field.NotSupported(fldPath.Child("matchPolicy"), *mr.MatchPolicy, supportedMatchPolicies))
	}
	if mr.NamespaceSelector == nil {
		allErrors = append(allErrors, field.Required(fldPath.Child("namespaceSelector"), ""))
	} else {
		allErrors = append(allErrors, metav1validation.ValidateLabelSelector(mr.NamespaceSelector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("namespaceSelector"))...)
	}
	if mr.ObjectSelector == nil {
		allErrors = append(allErrors, field.Required(fldPath.Child("objectSelector"), ""))
	} else {
		allErrors = append(allErrors, metav1validation.ValidateLabelSelector(mr.ObjectSelector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("objectSelector"))...)
	}
	for i := range mr.ResourceRules {
		allErrors = append(allErrors, validateNamedRuleWithOperations(&mr.ResourceRules[i], fldPath.Child("resourceRules").Index(i))...)
	}
	for i := range mr.ExcludeResourceRules {
		allErrors = append(allErrors, validateNamedRuleWithOperations(&mr.ExcludeResourceRules[i], fldPath.Child("excludeResourceRules").Index(i))...)
	}
	return allErrors
}

func validateNamedRuleWithOperations(rule *admissionregistrationv1.NamedRuleWithOperations, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	names := sets.New[string]()
	for i, name := range rule.ResourceNames {
		for _, msg := range content.IsPathSegmentName(name) {
			allErrors = append(allErrors, field.Invalid(fldPath.Child("resourceNames").Index(i), name, msg))
		}
		if names.Has(name) {
			allErrors = append(allErrors, field.Duplicate(fldPath.Child("resourceNames").Index(i), name))
		} else {
			names.Insert(name)
		}
	}
	return append(allErrors, validateRuleWithOperations(&rule.RuleWithOperations, fldPath)...)
}

// validateMutatingOperations refuses DELETE in a mutating policy's or
// binding's rules. Upstream names the list, not the item, in the path.
func validateMutatingOperations(mr *admissionregistrationv1.MatchResources, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	for _, rule := range mr.ResourceRules {
		for _, op := range rule.Operations {
			if !slices.Contains(supportedMutatingOperations, string(op)) {
				allErrors = append(allErrors, field.NotSupported(fldPath, op, supportedMutatingOperations))
			}
		}
	}
	return allErrors
}

func validatePolicyFailurePolicy(fp *admissionregistrationv1.FailurePolicyType, fldPath *field.Path) field.ErrorList {
	if fp == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if !slices.Contains(supportedFailurePolicies, string(*fp)) {
		return field.ErrorList{field.NotSupported(fldPath, *fp, supportedFailurePolicies)}
	}
	return nil
}

// validatePolicyName checks a binding's reference to its policy.
func validatePolicyName(name string, fldPath *field.Path) field.ErrorList {
	if len(name) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrors field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(name, false) {
		allErrors = append(allErrors, field.Invalid(fldPath, name, msg))
	}
	return allErrors
}

func validateParamRef(pr *admissionregistrationv1.ParamRef, fldPath *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var allErrors field.ErrorList
	if len(pr.Name) > 0 {
		for _, msg := range content.IsPathSegmentName(pr.Name) {
			allErrors = append(allErrors, field.Invalid(fldPath.Child("name"), pr.Name, msg))
		}
		if pr.Selector != nil {
			allErrors = append(allErrors, field.Forbidden(fldPath.Child("name"), `name and selector are mutually exclusive`))
		}
	}
	if pr.Selector != nil {
		allErrors = append(allErrors, metav1validation.ValidateLabelSelector(pr.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
		if len(pr.Name) > 0 {
			allErrors = append(allErrors, field.Forbidden(fldPath.Child("selector"), `name and selector are mutually exclusive`))
		}
	}
	if len(pr.Name) == 0 && pr.Selector == nil {
		allErrors = append(allErrors, field.Required(fldPath, `one of name or selector must be specified`))
	}
	if pr.ParameterNotFoundAction == nil || len(*pr.ParameterNotFoundAction) == 0 {
		allErrors = append(allErrors, field.Required(fldPath.Child("parameterNotFoundAction"), ""))
	} else if *pr.ParameterNotFoundAction != admissionregistrationv1.DenyAction && *pr.ParameterNotFoundAction != admissionregistrationv1.AllowAction {
		// Upstream reports the pointer, which prints as the value it holds.
		allErrors = append(allErrors, field.NotSupported(fldPath.Child("parameterNotFoundAction"), pr.ParameterNotFoundAction,
			[]string{string(admissionregistrationv1.DenyAction), string(admissionregistrationv1.AllowAction)}))
	}
	return allErrors
}

func validateVariableName(name string, fldPath *field.Path) field.ErrorList {
	if len(name) == 0 || strings.TrimSpace(name) == "" {
		return field.ErrorList{field.Required(fldPath, "name is not specified")}
	}
	if !isCELIdentifier(name) {
		return field.ErrorList{field.Invalid(fldPath, name, "must be a valid CEL identifier")}
	}
	return nil
}
