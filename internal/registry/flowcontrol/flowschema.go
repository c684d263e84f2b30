package flowcontrol

import (
	"fmt"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Flowschemas is the flowschemas resource. A status write keeps all
// metadata, as upstream's status strategy does: only the config
// controller's conditions change through it.
var Flowschemas = &registry.Resource{
	Group: flowcontrolv1.GroupName, Version: "v1", Name: "flowschemas", Singular: "flowschema", Kind: "FlowSchema",
	New:                  func() runtime.Object { return &flowcontrolv1.FlowSchema{} },
	NewList:              func() runtime.Object { return &flowcontrolv1.FlowSchemaList{} },
	Status:               true,
	StatusResetsMetadata: []string{"labels", "annotations", "finalizers", "ownerReferences"},
	TracksGeneration:     true,
	Default:              registry.Typed(defaultFlowSchema),
	Validate:             registry.TypedValidate(validateFlowSchema),
	Table:                flowschemaTable,
}

// DefaultMatchingPrecedence is what a FlowSchema without one gets.
const DefaultMatchingPrecedence int32 = 1000

func defaultFlowSchema(fs *flowcontrolv1.FlowSchema) {
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = DefaultMatchingPrecedence
	}
}

// supportedVerbs are the verbs a rule may name besides "*".
var supportedVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"}

// validateFlowSchema is upstream's ValidateFlowSchema; updates are checked
// the same way. The mandatory schemas' specs are fixed.
func validateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateFlowSchemaSpec(fs.Name, &fs.Spec, specPath)
	for _, mand := range MandatoryFlowSchemas() {
		if mand.Name == fs.Name && !apiequality.Semantic.DeepEqual(fs.Spec, mand.Spec) {
			errs = append(errs, field.Invalid(specPath, fs.Spec, fmt.Sprintf("spec of '%s' must equal the fixed value", fs.Name)))
		}
	}
	types := make([]string, len(fs.Status.Conditions))
	for i, c := range fs.Status.Conditions {
		types[i] = string(c.Type)
	}
	return append(errs, validateConditionTypes(types, field.NewPath("status", "conditions"))...)
}

// validateConditionTypes requires each condition to have a type of its own.
func validateConditionTypes(types []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, t := range types {
		if seen[t] {
			errs = append(errs, field.Duplicate(path.Index(i).Child("type"), t))
		}
		seen[t] = true
		if t == "" {
			errs = append(errs, field.Required(path.Index(i).Child("type"), "must not be empty"))
		}
	}
	return errs
}

func validateFlowSchemaSpec(name string, spec *flowcontrolv1.FlowSchemaSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.MatchingPrecedence <= 0 {
		errs = append(errs, field.Invalid(path.Child("matchingPrecedence"), spec.MatchingPrecedence, "must be a positive value"))
	}
	if spec.MatchingPrecedence > flowcontrolv1.FlowSchemaMaxMatchingPrecedence {
		errs = append(errs, field.Invalid(path.Child("matchingPrecedence"), spec.MatchingPrecedence, fmt.Sprintf("must not be greater than %v", flowcontrolv1.FlowSchemaMaxMatchingPrecedence)))
	}
	if spec.MatchingPrecedence == 1 && name != flowcontrolv1.FlowSchemaNameExempt {
		errs = append(errs, field.Invalid(path.Child("matchingPrecedence"), spec.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if dm := spec.DistinguisherMethod; dm != nil {
		switch dm.Type {
		case flowcontrolv1.FlowDistinguisherMethodByNamespaceType, flowcontrolv1.FlowDistinguisherMethodByUserType:
		default:
			errs = append(errs, field.NotSupported(path.Child("distinguisherMethod", "type"), dm, []string{
				string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType),
			}))
		}
	}
	plPath := path.Child("priorityLevelConfiguration", "name")
	if pl := spec.PriorityLevelConfiguration.Name; pl != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(pl, false) {
			errs = append(errs, field.Invalid(plPath, pl, msg))
		}
	} else {
		errs = append(errs, field.Required(plPath, "must reference a priority level"))
	}
	for i := range spec.Rules {
		errs = append(errs, validatePolicyRules(&spec.Rules[i], path.Child("rules").Index(i))...)
	}
	return errs
}

func validatePolicyRules(rule *flowcontrolv1.PolicyRulesWithSubjects, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rule.Subjects) == 0 {
		errs = append(errs, field.Required(path.Child("subjects"), "subjects must contain at least one value"))
	}
	for i := range rule.Subjects {
		errs = append(errs, validateSubject(&rule.Subjects[i], path.Child("subjects").Index(i))...)
	}
	if len(rule.ResourceRules) == 0 && len(rule.NonResourceRules) == 0 {
		errs = append(errs, field.Required(path, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i := range rule.ResourceRules {
		errs = append(errs, validateResourceRule(&rule.ResourceRules[i], path.Child("resourceRules").Index(i))...)
	}
	for i := range rule.NonResourceRules {
		errs = append(errs, validateNonResourceRule(&rule.NonResourceRules[i], path.Child("nonResourceRules").Index(i))...)
	}
	return errs
}

func validateSubject(s *flowcontrolv1.Subject, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbidUser := func() {
		if s.User != nil {
			errs = append(errs, field.Forbidden(path.Child("user"), "user is forbidden when subject kind is not 'User'"))
		}
	}
	forbidGroup := func() {
		if s.Group != nil {
			errs = append(errs, field.Forbidden(path.Child("group"), "group is forbidden when subject kind is not 'Group'"))
		}
	}
	forbidSA := func() {
		if s.ServiceAccount != nil {
			errs = append(errs, field.Forbidden(path.Child("serviceAccount"), "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"))
		}
	}
	switch s.Kind {
	case flowcontrolv1.SubjectKindServiceAccount:
		errs = append(errs, validateServiceAccountSubject(s.ServiceAccount, path.Child("serviceAccount"))...)
		forbidUser()
		forbidGroup()
	case flowcontrolv1.SubjectKindUser:
		switch {
		case s.User == nil:
			errs = append(errs, field.Required(path.Child("user"), "user is required when subject kind is 'User'"))
		case s.User.Name == "":
			errs = append(errs, field.Required(path.Child("user", "name"), ""))
		}
		forbidSA()
		forbidGroup()
	case flowcontrolv1.SubjectKindGroup:
		switch {
		case s.Group == nil:
			errs = append(errs, field.Required(path.Child("group"), "group is required when subject kind is 'Group'"))
		case s.Group.Name == "":
			errs = append(errs, field.Required(path.Child("group", "name"), ""))
		}
		forbidSA()
		forbidUser()
	default:
		errs = append(errs, field.NotSupported(path.Child("kind"), s.Kind, []string{
			string(flowcontrolv1.SubjectKindGroup), string(flowcontrolv1.SubjectKindServiceAccount), string(flowcontrolv1.SubjectKindUser),
		}))
	}
	return errs
}

func validateServiceAccountSubject(sa *flowcontrolv1.ServiceAccountSubject, path *field.Path) field.ErrorList {
	if sa == nil {
		return field.ErrorList{field.Required(path, "serviceAccount is required when subject kind is 'ServiceAccount'")}
	}
	var errs field.ErrorList
	if sa.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else if sa.Name != flowcontrolv1.NameAll {
		for _, msg := range apimachineryvalidation.ValidateServiceAccountName(sa.Name, false) {
			errs = append(errs, field.Invalid(path.Child("name"), sa.Name, msg))
		}
	}
	if sa.Namespace == "" {
		errs = append(errs, field.Required(path.Child("namespace"), "must specify namespace for service account"))
	} else {
		for _, msg := range apimachineryvalidation.ValidateNamespaceName(sa.Namespace, false) {
			errs = append(errs, field.Invalid(path.Child("namespace"), sa.Namespace, msg))
		}
	}
	return errs
}

// validateVerbs holds a rule's verbs to "*" alone or known verbs.
func validateVerbs(verbs []string, path *field.Path) field.ErrorList {
	switch {
	case len(verbs) == 0:
		return field.ErrorList{field.Required(path, "verbs must contain at least one value")}
	case slices.Contains(verbs, "*"):
		if len(verbs) > 1 {
			return field.ErrorList{field.Invalid(path, verbs, "if '*' is present, must not specify other verbs")}
		}
	default:
		for _, v := range verbs {
			if !slices.Contains(supportedVerbs, v) {
				return field.ErrorList{field.NotSupported(path, verbs, supportedVerbs)}
			}
		}
	}
	return nil
}

const nsErrIntro = "each member of this list must be '*' or a DNS-1123 label; "

func validateResourceRule(rule *flowcontrolv1.ResourcePolicyRule, path *field.Path) field.ErrorList {
	errs := validateVerbs(rule.Verbs, path.Child("verbs"))
	if len(rule.APIGroups) == 0 {
		errs = append(errs, field.Required(path.Child("apiGroups"), "resource rules must supply at least one api group"))
	} else if len(rule.APIGroups) > 1 && slices.Contains(rule.APIGroups, "*") {
		errs = append(errs, field.Invalid(path.Child("apiGroups"), rule.APIGroups, "if '*' is present, must not specify other api groups"))
	}
	if len(rule.Resources) == 0 {
		errs = append(errs, field.Required(path.Child("resources"), "resource rules must supply at least one resource"))
	} else if len(rule.Resources) > 1 && slices.Contains(rule.Resources, "*") {
		errs = append(errs, field.Invalid(path.Child("resources"), rule.Resources, "if '*' is present, must not specify other resources"))
	}
	switch {
	case len(rule.Namespaces) == 0 && !rule.ClusterScope:
		errs = append(errs, field.Required(path.Child("namespaces"), "resource rules that are not cluster scoped must supply at least one namespace"))
	case slices.Contains(rule.Namespaces, "*"):
		if len(rule.Namespaces) > 1 {
			errs = append(errs, field.Invalid(path.Child("namespaces"), rule.Namespaces, "if '*' is present, must not specify other namespaces"))
		}
	default:
		for i, ns := range rule.Namespaces {
			for _, msg := range apimachineryvalidation.ValidateNamespaceName(ns, false) {
				errs = append(errs, field.Invalid(path.Child("namespaces").Index(i), ns, nsErrIntro+msg))
			}
		}
	}
	return errs
}

func validateNonResourceRule(rule *flowcontrolv1.NonResourcePolicyRule, path *field.Path) field.ErrorList {
	errs := validateVerbs(rule.Verbs, path.Child("verbs"))
	switch urls := rule.NonResourceURLs; {
	case len(urls) == 0:
		errs = append(errs, field.Required(path.Child("nonResourceURLs"), "nonResourceURLs must contain at least one value"))
	case slices.Contains(urls, "*"):
		if len(urls) > 1 {
			errs = append(errs, field.Invalid(path.Child("nonResourceURLs"), urls, "if '*' is present, must not specify other non-resource URLs"))
		}
	default:
		for i, u := range urls {
			if err := validateNonResourceURL(u, path.Child("nonResourceURLs").Index(i)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// validateNonResourceURL is upstream's ValidateNonResourceURLPath: a
// slash first, no white space or double slash, and "*" only as a final
// "/*" that matches everything below.
func validateNonResourceURL(p string, path *field.Path) *field.Error {
	switch {
	case p == "":
		return field.Invalid(path, p, "must not be empty")
	case p == "/":
		return nil
	case !strings.HasPrefix(p, "/"):
		return field.Invalid(path, p, "must start with slash")
	case strings.Contains(p, " "):
		return field.Invalid(path, p, "must not contain white-space")
	case strings.Contains(p, "//"):
		return field.Invalid(path, p, "must not contain double slash")
	}
	if n := strings.Count(p, "*"); n > 1 || (n == 1 && !strings.HasSuffix(p, "/*")) {
		return field.Invalid(path, p, "wildcard can only do suffix matching")
	}
	return nil
}
