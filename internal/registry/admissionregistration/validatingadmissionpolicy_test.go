package admissionregistration

import (
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilptr "k8s.io/utils/ptr"
)

// vap is a valid policy using every part of the spec, changed by mutate.
func vap(mutate func(*admissionregistrationv1.ValidatingAdmissionPolicySpec)) *admissionregistrationv1.ValidatingAdmissionPolicy {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: objectMeta("replica-limit"),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: matchResources(),
			MatchConditions:  []admissionregistrationv1.MatchCondition{{Name: "has-params", Expression: "params != null"}},
			Variables:        []admissionregistrationv1.Variable{{Name: "replicas", Expression: "object.spec.replicas"}},
			Validations: []admissionregistrationv1.Validation{{
				Expression:        "variables.replicas <= int(params.data.maxReplicas)",
				MessageExpression: "'at most ' + params.data.maxReplicas + ' replicas'",
				Reason:            utilptr.To(metav1.StatusReasonInvalid),
			}},
			AuditAnnotations: []admissionregistrationv1.AuditAnnotation{{
				Key: "high-replica-count", ValueExpression: "'Deployment spec.replicas set to ' + string(object.spec.replicas)",
			}},
		},
	}
	mutate(&p.Spec)
	return p
}

var validatingAdmissionPolicyCases = []validationCase{{
	name: "valid",
	obj:  vap(func(*admissionregistrationv1.ValidatingAdmissionPolicySpec) {}),
}, {
	name: "valid, without params or variables",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.ParamKind, s.MatchConditions, s.Variables, s.AuditAnnotations = nil, nil, nil, nil
		s.FailurePolicy = utilptr.To(admissionregistrationv1.Ignore)
		s.Validations = []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5", Message: "too many replicas"}}
	}),
}, {
	name: "valid, audit annotations only",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.Validations = nil
	}),
}, {
	name: "validation that does not compile",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.Validations[0].Expression = "object.spec.replicas <="
	}),
	want: []string{
		"spec.validations[0].expression: Invalid value: \"object.spec.replicas <=\": compilation failed: ERROR: <input>:1:24: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | object.spec.replicas <=\n | .......................^",
	},
}, {
	name: "validation that is not a bool",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.Validations[0].Expression = "'replicas'"
	}),
	want: []string{
		`spec.validations[0].expression: Invalid value: "'replicas'": must evaluate to bool but got string`,
	},
}, {
	name: "paramKind without apiVersion",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.ParamKind.APIVersion = ""
	}),
	want: []string{
		`spec.paramKind.apiVersion: Required value`,
	},
}, {
	name: "malformed paramKind",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1/x", Kind: "Config Map"}
	}),
	want: []string{
		`spec.paramKind.apiVersion: Invalid value: "example.com/v1/x": unexpected GroupVersion string: example.com/v1/x`,
		`spec.paramKind.kind: Invalid value: "Config Map": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
	},
}, {
	name: "paramKind with a bad group and no version",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "Example.com/", Kind: ""}
	}),
	want: []string{
		`spec.paramKind.apiVersion: Invalid value: "Example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		`spec.paramKind.apiVersion: Invalid value: "Example.com/": version must be specified`,
		`spec.paramKind.kind: Required value`,
	},
}, {
	name: "params without paramKind",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.ParamKind = nil
	}),
	want: []string{
		"spec.matchConditions[0].expression: Invalid value: \"params != null\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params != null\n | ^",
		"spec.validations[0].expression: Invalid value: \"variables.replicas <= int(params.data.maxReplicas)\": compilation failed: ERROR: <input>:1:27: undeclared reference to 'params' (in container '')\n | variables.replicas <= int(params.data.maxReplicas)\n | ..........................^",
		"spec.validations[0].messageExpression: Invalid value: \"'at most ' + params.data.maxReplicas + ' replicas'\": compilation failed: ERROR: <input>:1:14: undeclared reference to 'params' (in container '')\n | 'at most ' + params.data.maxReplicas + ' replicas'\n | .............^",
	},
}, {
	name: "no validations or audit annotations",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.Validations, s.AuditAnnotations = nil, nil
	}),
	want: []string{
		`spec.validations: Required value: validations or auditAnnotations must contain at least one item`,
		`spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item`,
	},
}, {
	name: "bad failure policy and match constraints",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.FailurePolicy = utilptr.To[admissionregistrationv1.FailurePolicyType]("Maybe")
		s.MatchConstraints.MatchPolicy = utilptr.To[admissionregistrationv1.MatchPolicyType]("Loose")
		s.MatchConstraints.ResourceRules = nil
		s.MatchConstraints.ExcludeResourceRules = []admissionregistrationv1.NamedRuleWithOperations{{
			ResourceNames: []string{"..", "web", "web", "a/b"},
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
			},
		}}
	}),
	want: []string{
		`spec.failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"`,
		`spec.matchConstraints.matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"`,
		`spec.matchConstraints.excludeResourceRules[0].resourceNames[0]: Invalid value: "..": may not be '..'`,
		`spec.matchConstraints.excludeResourceRules[0].resourceNames[2]: Duplicate value: "web"`,
		`spec.matchConstraints.excludeResourceRules[0].resourceNames[3]: Invalid value: "a/b": may not contain '/'`,
		`spec.matchConstraints.resourceRules: Required value`,
	},
}, {
	name: "no match constraints",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.MatchConstraints = nil
	}),
	want: []string{
		`spec.matchConstraints: Required value`,
	},
}, {
	name: "bad variables",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.Variables = []admissionregistrationv1.Variable{
			{Name: "replicas", Expression: "object.spec.replicas"},
			{Name: "in", Expression: "variables.replicas + 1"},
			{Name: "", Expression: " "},
			{Name: "broken", Expression: "variables.nothing"},
		}
	}),
	want: []string{
		`spec.variables[1].name: Invalid value: "in": must be a valid CEL identifier`,
		`spec.variables[2].name: Required value: name is not specified`,
		`spec.variables[2].expression: Required value: expression is not specified`,
		"spec.variables[3].expression: Invalid value: \"variables.nothing\": compilation failed: ERROR: <input>:1:10: undefined field 'nothing'\n | variables.nothing\n | .........^",
	},
}, {
	name: "bad messages and reason",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.Validations = []admissionregistrationv1.Validation{
			{Expression: "true", Message: " ", MessageExpression: " ", Reason: utilptr.To(metav1.StatusReasonNotFound)},
			{Expression: "true", Message: "line one\nline two", MessageExpression: "1"},
			{Expression: " "},
		}
	}),
	want: []string{
		`spec.validations[0].messageExpression: Invalid value: " ": must be non-empty if specified`,
		`spec.validations[0].message: Invalid value: " ": must be non-empty if specified`,
		`spec.validations[0].reason: Unsupported value: "NotFound": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"`,
		`spec.validations[1].messageExpression: Invalid value: "1": must evaluate to string but got int`,
		`spec.validations[1].message: Invalid value: "line one\nline two": must not contain line breaks`,
		`spec.validations[2].expression: Required value: expression is not specified`,
	},
}, {
	name: "bad audit annotations",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{
			{Key: "count", ValueExpression: "string(object.spec.replicas)"},
			{Key: "count", ValueExpression: "object.spec.replicas"},
			{Key: "bad key", ValueExpression: " "},
			{Key: "long", ValueExpression: "'" + strings.Repeat("x", 5*1024) + "'"},
		}
	}),
	want: []string{
		`spec.auditAnnotations[1].valueExpression: Invalid value: "object.spec.replicas": must evaluate to one of [string null_type] but got dyn`,
		`spec.auditAnnotations[1].key: Duplicate value: "count"`,
		`spec.auditAnnotations[2].key: Invalid value: "replica-limit/bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		`spec.auditAnnotations[2].valueExpression: Required value: valueExpression is not specified`,
		`spec.auditAnnotations[3].valueExpression: Required value: must not exceed 5120 bytes in length`,
	},
}, {
	name: "too many audit annotations",
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.AuditAnnotations = nil
		for i := range 21 {
			s.AuditAnnotations = append(s.AuditAnnotations, admissionregistrationv1.AuditAnnotation{Key: fmt.Sprintf("k%d", i), ValueExpression: "'v'"})
		}
	}),
	want: []string{
		`spec.auditAnnotations: Invalid value: [{"Key":"k0","ValueExpression":"'v'"},{"Key":"k1","ValueExpression":"'v'"},{"Key":"k2","ValueExpression":"'v'"},{"Key":"k3","ValueExpression":"'v'"},{"Key":"k4","ValueExpression":"'v'"},{"Key":"k5","ValueExpression":"'v'"},{"Key":"k6","ValueExpression":"'v'"},{"Key":"k7","ValueExpression":"'v'"},{"Key":"k8","ValueExpression":"'v'"},{"Key":"k9","ValueExpression":"'v'"},{"Key":"k10","ValueExpression":"'v'"},{"Key":"k11","ValueExpression":"'v'"},{"Key":"k12","ValueExpression":"'v'"},{"Key":"k13","ValueExpression":"'v'"},{"Key":"k14","ValueExpression":"'v'"},{"Key":"k15","ValueExpression":"'v'"},{"Key":"k16","ValueExpression":"'v'"},{"Key":"k17","ValueExpression":"'v'"},{"Key":"k18","ValueExpression":"'v'"},{"Key":"k19","ValueExpression":"'v'"},{"Key":"k20","ValueExpression":"'v'"}]: must not have more than 20 auditAnnotations`,
	},
}}

var validatingAdmissionPolicyUpdateCases = []validationCase{{
	name: "unchanged match conditions are not compiled",
	old: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.MatchConditions[0].Expression = "nothing"
	}),
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.MatchConditions[0].Expression = "nothing"
		s.Validations[0].Message = "too many"
	}),
}, {
	name: "nor while the paramKind stays",
	old: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.MatchConditions[0].Expression = "nothing"
	}),
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.MatchConditions[0].Expression = "nothing"
		s.ParamKind.Kind = "Secret"
	}),
	want: []string{
		"spec.matchConditions[0].expression: Invalid value: \"nothing\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'nothing' (in container '')\n | nothing\n | ^",
	},
}, {
	name: "other rules still hold",
	old:  vap(func(*admissionregistrationv1.ValidatingAdmissionPolicySpec) {}),
	obj: vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.Validations[0].Expression = "1"
	}),
	want: []string{
		`spec.validations[0].expression: Invalid value: "1": must evaluate to bool but got int`,
	},
}}

var validatingAdmissionPolicyStatusCases = []validationCase{{
	name:   "valid status",
	old:    vap(func(*admissionregistrationv1.ValidatingAdmissionPolicySpec) {}),
	status: true,
	obj: func() *admissionregistrationv1.ValidatingAdmissionPolicy {
		p := vap(func(*admissionregistrationv1.ValidatingAdmissionPolicySpec) {})
		p.Status = admissionregistrationv1.ValidatingAdmissionPolicyStatus{
			ObservedGeneration: 1,
			TypeChecking: &admissionregistrationv1.TypeChecking{ExpressionWarnings: []admissionregistrationv1.ExpressionWarning{
				{FieldRef: "spec.validations[0].expression", Warning: "no such field"},
			}},
			Conditions: []metav1.Condition{{
				Type: "Ready", Status: metav1.ConditionTrue, Reason: "Checked", LastTransitionTime: metav1.Unix(1700000000, 0),
			}},
		}
		return p
	}(),
}, {
	name:   "status may be written whatever the spec",
	old:    vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) { s.Validations[0].Expression = "1" }),
	status: true,
	obj:    vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) { s.Validations[0].Expression = "1" }),
}, {
	name:   "bad status",
	old:    vap(func(*admissionregistrationv1.ValidatingAdmissionPolicySpec) {}),
	status: true,
	obj: func() *admissionregistrationv1.ValidatingAdmissionPolicy {
		p := vap(func(*admissionregistrationv1.ValidatingAdmissionPolicySpec) {})
		p.Status = admissionregistrationv1.ValidatingAdmissionPolicyStatus{
			TypeChecking: &admissionregistrationv1.TypeChecking{ExpressionWarnings: []admissionregistrationv1.ExpressionWarning{
				{FieldRef: " ", Warning: ""},
				{FieldRef: "spec.validations[", Warning: "w"},
			}},
			Conditions: []metav1.Condition{{Type: "Ready", Status: "Maybe"}},
		}
		return p
	}(),
	want: []string{
		`status.typeChecking.expressionWarnings[0].warning: Required value`,
		`status.typeChecking.expressionWarnings[0].fieldRef: Required value`,
		`status.typeChecking.expressionWarnings[1].fieldRef: Invalid value: "spec.validations[": invalid JSONPath: unterminated array`,
		`status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"`,
		`status.conditions[0].lastTransitionTime: Required value`,
		`status.conditions[0].reason: Required value`,
	},
}}

func TestValidateValidatingAdmissionPolicy(t *testing.T) {
	runValidationCases(t, validatingAdmissionPolicyCases)
}

func TestValidateValidatingAdmissionPolicyUpdate(t *testing.T) {
	runValidationCases(t, validatingAdmissionPolicyUpdateCases)
}

func TestValidateValidatingAdmissionPolicyStatus(t *testing.T) {
	runValidationCases(t, validatingAdmissionPolicyStatusCases)
}
