package admissionregistration

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/client-go/util/jsonpath"

	"github.com/orca-project/orca/internal/registry"
)

// ValidatingAdmissionPolicies is the validatingadmissionpolicies resource.
// Its status is the type checking the policy controller reports; a status
// write keeps all metadata, as upstream's status strategy resets it.
var ValidatingAdmissionPolicies = &registry.Resource{
	Group: admissionregistrationv1.GroupName, Version: "v1", Name: "validatingadmissionpolicies",
	Singular: "validatingadmissionpolicy", Kind: "ValidatingAdmissionPolicy",
	Categories:             []string{"api-extensions"},
	New:                    func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicy{} },
	NewList:                func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyList{} },
	Status:                 true,
	StatusResetsMetadata:   []string{"labels", "annotations", "finalizers", "ownerReferences"},
	TracksGeneration:       true,
	Default:                registry.Typed(defaultValidatingAdmissionPolicy),
	Validate:               registry.TypedValidate(validateValidatingAdmissionPolicy),
	ValidateUpdate:         registry.TypedValidateUpdate(validateValidatingAdmissionPolicyUpdate),
	ValidateUpdateReplaces: true,
	ValidateStatusUpdate:   registry.TypedValidateUpdate(validateValidatingAdmissionPolicyStatusUpdate),
	Table:                  validatingadmissionpolicyTable,
}

// maxAuditAnnotations bounds what one policy adds to every audit event.
const maxAuditAnnotations = 20

func defaultValidatingAdmissionPolicy(obj *admissionregistrationv1.ValidatingAdmissionPolicy) {
	defaultPolicyFailurePolicy(&obj.Spec.FailurePolicy)
	defaultMatchResources(obj.Spec.MatchConstraints)
}

func validateValidatingAdmissionPolicy(obj *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	errs := validateValidatingAdmissionPolicySpec(obj.Name, &obj.Spec, validationOptions{}, field.NewPath("spec"))
	return dedupe(append(errs, validateStaticSuffix(obj.Name)...))
}

// validateValidatingAdmissionPolicyUpdate replaces Validate on updates:
// the stored expressions keep compiling in the environment they were
// accepted in, and match conditions are left alone while neither they nor
// the paramKind they may refer to change.
func validateValidatingAdmissionPolicyUpdate(obj, old *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	opts := validationOptions{
		ignoreMatchConditions: apiequality.Semantic.DeepEqual(obj.Spec.ParamKind, old.Spec.ParamKind) &&
			apiequality.Semantic.DeepEqual(obj.Spec.MatchConditions, old.Spec.MatchConditions),
		preexisting: validatingPolicyExpressions(old),
	}
	return dedupe(validateValidatingAdmissionPolicySpec(obj.Name, &obj.Spec, opts, field.NewPath("spec")))
}

func validatingPolicyExpressions(p *admissionregistrationv1.ValidatingAdmissionPolicy) preexistingExpressions {
	pre := preexistingExpressions{
		matchConditions:       matchConditionExpressions(p.Spec.MatchConditions),
		validations:           sets.New[string](),
		validationMessages:    sets.New[string](),
		auditAnnotationValues: sets.New[string](),
	}
	for _, v := range p.Spec.Validations {
		pre.validations.Insert(v.Expression)
		if len(v.MessageExpression) > 0 {
			pre.validationMessages.Insert(v.MessageExpression)
		}
	}
	for _, a := range p.Spec.AuditAnnotations {
		pre.auditAnnotationValues.Insert(a.ValueExpression)
	}
	return pre
}

// auditAnnotationValue is how upstream's internal AuditAnnotation, which
// has no JSON names, prints in the too-many error.
type auditAnnotationValue struct {
	Key             string
	ValueExpression string
}

func validateValidatingAdmissionPolicySpec(name string, spec *admissionregistrationv1.ValidatingAdmissionPolicySpec, opts validationOptions, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	// A compiler that composes variables keeps them, so each policy gets
	// its own, made only when an expression needs compiling.
	var compiler plugincel.Compiler
	getCompiler := func() plugincel.Compiler {
		if compiler == nil {
			compiler = createCompiler(len(spec.Variables) > 0)
		}
		return compiler
	}
	allErrors = append(allErrors, validatePolicyFailurePolicy(spec.FailurePolicy, fldPath.Child("failurePolicy"))...)
	if spec.ParamKind != nil {
		opts.allowParamsInMatchConditions = true
		allErrors = append(allErrors, validateParamKind(*spec.ParamKind, fldPath.Child("paramKind"))...)
	}
	if spec.MatchConstraints == nil {
		allErrors = append(allErrors, field.Required(fldPath.Child("matchConstraints"), ""))
	} else {
		allErrors = append(allErrors, validateMatchResources(spec.MatchConstraints, fldPath.Child("matchConstraints"))...)
		// The resource rules give the expressions the type of the object.
		if len(spec.MatchConstraints.ResourceRules) == 0 {
			allErrors = append(allErrors, field.Required(fldPath.Child("matchConstraints", "resourceRules"), ""))
		}
	}
	if !opts.ignoreMatchConditions {
		allErrors = append(allErrors, validateMatchConditions(spec.MatchConditions, opts, fldPath.Child("matchConditions"))...)
	}
	for i := range spec.Variables {
		allErrors = append(allErrors, validateVariable(getCompiler(), &spec.Variables[i], spec.ParamKind, opts, fldPath.Child("variables").Index(i))...)
	}
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		allErrors = append(allErrors, field.Required(fldPath.Child("validations"), "validations or auditAnnotations must contain at least one item"))
		allErrors = append(allErrors, field.Required(fldPath.Child("auditAnnotations"), "validations or auditAnnotations must contain at least one item"))
		return allErrors
	}
	for i := range spec.Validations {
		allErrors = append(allErrors, validateValidation(getCompiler(), &spec.Validations[i], spec.ParamKind, opts, fldPath.Child("validations").Index(i))...)
	}
	if spec.AuditAnnotations != nil {
		if len(spec.AuditAnnotations) > maxAuditAnnotations {
			value := make([]auditAnnotationValue, len(spec.AuditAnnotations))
			for i, a := range spec.AuditAnnotations {
				value[i] = auditAnnotationValue(a)
			}
			allErrors = append(allErrors, field.Invalid(fldPath.Child("auditAnnotations"), value, fmt.Sprintf("must not have more than %d auditAnnotations", maxAuditAnnotations)))
		}
		keys := sets.New[string]()
		for i := range spec.AuditAnnotations {
			a := &spec.AuditAnnotations[i]
			allErrors = append(allErrors, validateAuditAnnotation(getCompiler(), name, a, spec.ParamKind, opts, fldPath.Child("auditAnnotations").Index(i))...)
			if keys.Has(a.Key) {
				allErrors = append(allErrors, field.Duplicate(fldPath.Child("auditAnnotations").Index(i).Child("key"), a.Key))
			}
			keys.Insert(a.Key)
		}
	}
	return allErrors
}

// validateValidatingAdmissionPolicyStatusUpdate checks what the policy
// controller writes through /status.
func validateValidatingAdmissionPolicyStatusUpdate(obj, _ *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	statusPath := field.NewPath("status")
	var allErrors field.ErrorList
	if tc := obj.Status.TypeChecking; tc != nil {
		warningsPath := statusPath.Child("typeChecking", "expressionWarnings")
		for i, w := range tc.ExpressionWarnings {
			if w.Warning == "" {
				allErrors = append(allErrors, field.Required(warningsPath.Index(i).Child("warning"), ""))
			}
			allErrors = append(allErrors, validateFieldRef(w.FieldRef, warningsPath.Index(i).Child("fieldRef"))...)
		}
	}
	return dedupe(append(allErrors, metav1validation.ValidateConditions(obj.Status.Conditions, statusPath.Child("conditions"))...))
}

// validateFieldRef only parses the JSONPath, so that a newer controller's
// references still pass after a rollback.
func validateFieldRef(fieldRef string, fldPath *field.Path) field.ErrorList {
	fieldRef = strings.TrimSpace(fieldRef)
	if fieldRef == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if err := jsonpath.New("spec").Parse(fmt.Sprintf("{%s}", fieldRef)); err != nil {
		return field.ErrorList{field.Invalid(fldPath, fieldRef, fmt.Sprintf("invalid JSONPath: %v", err))}
	}
	return nil
}
