package admissionregistration

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// New expressions are compiled in the environment of the server's minimum
// compatibility version, as upstream compiles them, so that a policy
// accepted now still compiles on the release a cluster may roll back to.

var (
	strictStatelessCompilerOnce sync.Once
	strictStatelessCompiler     plugincel.Compiler
)

// statelessCompiler compiles expressions that may not refer to variables
// (match conditions, and policies without variables). Building its
// environments is costly, so it is made once.
func statelessCompiler() plugincel.Compiler {
	strictStatelessCompilerOnce.Do(func() {
		strictStatelessCompiler = plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	})
	return strictStatelessCompiler
}

// createCompiler returns a compiler that can also declare variables when
// allowComposition is set. That one records the variables compiled with it,
// so each policy needs its own.
func createCompiler(allowComposition bool) plugincel.Compiler {
	if !allowComposition {
		return statelessCompiler()
	}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		// Cannot happen with the base environment; fall back rather than
		// fail the request.
		utilruntime.HandleError(err)
		return plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	}
	return compiler
}

// envTypeFor picks the environment an expression compiles in: one the
// stored object already holds keeps compiling with what it was accepted
// under.
func envTypeFor(preexisting sets.Set[string], expression string) environment.Type {
	if preexisting.Has(expression) {
		return environment.StoredExpressions
	}
	return environment.NewExpressions
}

var (
	celIdentRegex = regexp.MustCompile("^[_a-zA-Z][_a-zA-Z0-9]*$")
	celReserved   = sets.New("true", "false", "null", "in",
		"as", "break", "const", "continue", "else",
		"for", "function", "if", "import", "let",
		"loop", "package", "namespace", "return",
		"var", "void", "while")
)

// isCELIdentifier follows CEL's grammar: IDENT ::= [_a-zA-Z][_a-zA-Z0-9]*
// minus the reserved words, so that a variable can be named in an
// expression as variables.<name>.
func isCELIdentifier(name string) bool {
	return celIdentRegex.MatchString(name) && !celReserved.Has(name)
}

func validateCELCondition(compiler plugincel.Compiler, expression plugincel.ExpressionAccessor, decls plugincel.OptionalVariableDeclarations, envType environment.Type, fldPath *field.Path) field.ErrorList {
	result := compiler.CompileCELExpression(expression, decls, envType)
	if result.Error != nil {
		return field.ErrorList{convertCELError(fldPath, expression, result.Error)}
	}
	return nil
}

func convertCELError(fldPath *field.Path, expression plugincel.ExpressionAccessor, err error) *field.Error {
	if celErr, ok := err.(*apiservercel.Error); ok {
		switch celErr.Type {
		case apiservercel.ErrorTypeRequired:
			return field.Required(fldPath, celErr.Detail)
		case apiservercel.ErrorTypeInvalid:
			return field.Invalid(fldPath, expression.GetExpression(), celErr.Detail)
		case apiservercel.ErrorTypeInternal:
			return field.InternalError(fldPath, celErr)
		}
	}
	return field.InternalError(fldPath, fmt.Errorf("unsupported error type: %w", err))
}

// validateMatchConditionExpression compiles with the stateless compiler:
// match conditions are evaluated before any variable is.
func validateMatchConditionExpression(expression string, opts validationOptions, fldPath *field.Path) field.ErrorList {
	return validateCELCondition(statelessCompiler(), &matchconditions.MatchCondition{Expression: expression},
		plugincel.OptionalVariableDeclarations{HasParams: opts.allowParamsInMatchConditions, HasAuthorizer: true},
		envTypeFor(opts.preexisting.matchConditions, expression), fldPath)
}

func validateVariable(compiler plugincel.Compiler, v *admissionregistrationv1.Variable, paramKind *admissionregistrationv1.ParamKind, opts validationOptions, fldPath *field.Path) field.ErrorList {
	allErrors := validateVariableName(v.Name, fldPath.Child("name"))
	if len(v.Expression) == 0 || strings.TrimSpace(v.Expression) == "" {
		return append(allErrors, field.Required(fldPath.Child("expression"), "expression is not specified"))
	}
	composited, ok := compiler.(*plugincel.CompositedCompiler)
	if !ok {
		return append(allErrors, field.InternalError(fldPath, fmt.Errorf("variable composition is not allowed")))
	}
	variable := &validatingpolicy.Variable{Name: v.Name, Expression: v.Expression}
	// Upstream looks variables up among the stored validation
	// expressions; kept so that the same variables ratchet.
	result := composited.CompileAndStoreVariable(variable, plugincel.OptionalVariableDeclarations{
		HasParams:     paramKind != nil,
		HasAuthorizer: true,
	}, envTypeFor(opts.preexisting.validations, v.Expression))
	if result.Error != nil {
		allErrors = append(allErrors, convertCELError(fldPath.Child("expression"), variable, result.Error))
	}
	return allErrors
}

var newlineMatcher = regexp.MustCompile(`[\n\r]+`) // the line breaks of CEL's grammar

func validateValidation(compiler plugincel.Compiler, v *admissionregistrationv1.Validation, paramKind *admissionregistrationv1.ParamKind, opts validationOptions, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	trimmedExpression := strings.TrimSpace(v.Expression)
	trimmedMsg := strings.TrimSpace(v.Message)
	trimmedMessageExpression := strings.TrimSpace(v.MessageExpression)
	if len(trimmedExpression) == 0 {
		allErrors = append(allErrors, field.Required(fldPath.Child("expression"), "expression is not specified"))
	} else {
		allErrors = append(allErrors, validateCELCondition(compiler, &validatingpolicy.ValidationCondition{Expression: v.Expression},
			plugincel.OptionalVariableDeclarations{HasParams: paramKind != nil, HasAuthorizer: true},
			envTypeFor(opts.preexisting.validations, v.Expression), fldPath.Child("expression"))...)
	}
	if len(v.MessageExpression) > 0 && len(trimmedMessageExpression) == 0 {
		allErrors = append(allErrors, field.Invalid(fldPath.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
	} else if len(trimmedMessageExpression) != 0 {
		// The untrimmed expression, so that the compiler's columns point
		// into what the client wrote. Upstream declares params here only
		// when a paramKind is set, and no authorizer.
		allErrors = append(allErrors, validateCELCondition(compiler, &validatingpolicy.MessageExpressionCondition{MessageExpression: v.MessageExpression},
			plugincel.OptionalVariableDeclarations{HasParams: opts.allowParamsInMatchConditions, HasAuthorizer: false},
			envTypeFor(opts.preexisting.validationMessages, v.MessageExpression), fldPath.Child("messageExpression"))...)
	}
	if len(v.Message) > 0 && len(trimmedMsg) == 0 {
		allErrors = append(allErrors, field.Invalid(fldPath.Child("message"), v.Message, "must be non-empty if specified"))
	} else if newlineMatcher.MatchString(trimmedMsg) {
		// A message becomes an HTTP header value in warnings and audit.
		allErrors = append(allErrors, field.Invalid(fldPath.Child("message"), v.Message, "must not contain line breaks"))
	}
	if v.Reason != nil && !slices.Contains(supportedValidationReasons, string(*v.Reason)) {
		allErrors = append(allErrors, field.NotSupported(fldPath.Child("reason"), *v.Reason, supportedValidationReasons))
	}
	return allErrors
}

// maxAuditAnnotationValueExpressionLength is below the 10 kB an annotation
// value may reach, since an expression that concatenates strings often
// yields more than its own length.
const maxAuditAnnotationValueExpressionLength = 5 * 1024

// validateAuditAnnotation checks a key as the audit annotation it becomes,
// "<policy name>/<key>".
func validateAuditAnnotation(compiler plugincel.Compiler, policyName string, a *admissionregistrationv1.AuditAnnotation, paramKind *admissionregistrationv1.ParamKind, opts validationOptions, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	if len(policyName) != 0 {
		allErrors = append(allErrors, validateQualifiedName(policyName+"/"+a.Key, fldPath.Child("key"))...)
	} else {
		allErrors = append(allErrors, field.Invalid(fldPath.Child("key"), a.Key, "requires metadata.name be non-empty"))
	}
	trimmed := strings.TrimSpace(a.ValueExpression)
	switch {
	case len(trimmed) == 0:
		allErrors = append(allErrors, field.Required(fldPath.Child("valueExpression"), "valueExpression is not specified"))
	case len(trimmed) > maxAuditAnnotationValueExpressionLength:
		allErrors = append(allErrors, field.Required(fldPath.Child("valueExpression"), fmt.Sprintf("must not exceed %d bytes in length", maxAuditAnnotationValueExpressionLength)))
	default:
		result := compiler.CompileCELExpression(&validatingpolicy.AuditAnnotationCondition{ValueExpression: trimmed},
			plugincel.OptionalVariableDeclarations{HasParams: paramKind != nil, HasAuthorizer: true},
			envTypeFor(opts.preexisting.auditAnnotationValues, a.ValueExpression))
		if result.Error != nil {
			switch result.Error.Type {
			case apiservercel.ErrorTypeRequired:
				allErrors = append(allErrors, field.Required(fldPath.Child("valueExpression"), result.Error.Detail))
			case apiservercel.ErrorTypeInvalid:
				allErrors = append(allErrors, field.Invalid(fldPath.Child("valueExpression"), a.ValueExpression, result.Error.Detail))
			default:
				allErrors = append(allErrors, field.InternalError(fldPath.Child("valueExpression"), result.Error))
			}
		}
	}
	return allErrors
}

func validateMutation(compiler plugincel.Compiler, m *admissionregistrationv1.Mutation, paramKind *admissionregistrationv1.ParamKind, opts validationOptions, fldPath *field.Path) field.ErrorList {
	var allErrors field.ErrorList
	switch m.PatchType {
	case "":
		allErrors = append(allErrors, field.Required(fldPath.Child("patchType"), ""))
	case admissionregistrationv1.PatchTypeJSONPatch:
		if m.JSONPatch == nil {
			allErrors = append(allErrors, field.Required(fldPath.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
		} else {
			// Upstream ratchets JSON patches by the stored apply
			// configurations; kept so that the same expressions ratchet.
			allErrors = append(allErrors, validatePatchExpression(compiler, &patch.JSONPatchCondition{Expression: strings.TrimSpace(m.JSONPatch.Expression)},
				m.JSONPatch.Expression, paramKind, opts, fldPath.Child("jsonPatch"))...)
		}
		if m.ApplyConfiguration != nil {
			allErrors = append(allErrors, field.Invalid(fldPath.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
		}
	case admissionregistrationv1.PatchTypeApplyConfiguration:
		if m.ApplyConfiguration == nil {
			allErrors = append(allErrors, field.Required(fldPath.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
		} else {
			allErrors = append(allErrors, validatePatchExpression(compiler, &patch.ApplyConfigurationCondition{Expression: strings.TrimSpace(m.ApplyConfiguration.Expression)},
				m.ApplyConfiguration.Expression, paramKind, opts, fldPath.Child("applyConfiguration"))...)
		}
		if m.JSONPatch != nil {
			allErrors = append(allErrors, field.Invalid(fldPath.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
		}
	default:
		allErrors = append(allErrors, field.NotSupported(fldPath.Child("patchType"), m.PatchType, supportedPatchTypes))
	}
	return allErrors
}

// validatePatchExpression compiles a mutation's expression, trimmed in
// accessor; raw is what the client wrote, which ratcheting compares.
func validatePatchExpression(compiler plugincel.Compiler, accessor plugincel.ExpressionAccessor, raw string, paramKind *admissionregistrationv1.ParamKind, opts validationOptions, fldPath *field.Path) field.ErrorList {
	if len(accessor.GetExpression()) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("expression"), "")}
	}
	result := compiler.CompileCELExpression(accessor,
		plugincel.OptionalVariableDeclarations{HasParams: paramKind != nil, HasAuthorizer: true, HasPatchTypes: true},
		envTypeFor(opts.preexisting.applyConfigurations, raw))
	if result.Error != nil {
		return field.ErrorList{convertCELError(fldPath.Child("expression"), accessor, result.Error)}
	}
	return nil
}
