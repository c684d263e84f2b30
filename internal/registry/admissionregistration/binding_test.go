package admissionregistration

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilptr "k8s.io/utils/ptr"
)

func paramRefByName() *admissionregistrationv1.ParamRef {
	return &admissionregistrationv1.ParamRef{
		Name: "limits", Namespace: "default", ParameterNotFoundAction: utilptr.To(admissionregistrationv1.DenyAction),
	}
}

// vapb is a valid binding, changed by mutate.
func vapb(mutate func(*admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec)) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: objectMeta("replica-limit-default"),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "replica-limit",
			ParamRef:          paramRefByName(),
			MatchResources:    &admissionregistrationv1.MatchResources{},
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	mutate(&b.Spec)
	return b
}

var validatingAdmissionPolicyBindingCases = []validationCase{{
	name: "valid",
	obj:  vapb(func(*admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {}),
}, {
	name: "valid, Deny and Audit, parameters by selector",
	obj: vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny, admissionregistrationv1.Audit}
		s.ParamRef = &admissionregistrationv1.ParamRef{
			Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			ParameterNotFoundAction: utilptr.To(admissionregistrationv1.AllowAction),
		}
		s.MatchResources = nil
	}),
}, {
	name: "valid, Warn and Audit, no parameters",
	obj: vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn, admissionregistrationv1.Audit}
		s.ParamRef = nil
	}),
}, {
	name: "Deny and Warn",
	obj: vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny, admissionregistrationv1.Warn}
	}),
	want: []string{
		`spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)`,
	},
}, {
	name: "duplicate and unknown actions",
	obj: vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit, "Log", admissionregistrationv1.Audit}
	}),
	want: []string{
		`spec.validationActions[1]: Unsupported value: "Log": supported values: "Audit", "Deny", "Warn"`,
		`spec.validationActions[2]: Duplicate value: "Audit"`,
	},
}, {
	name: "no actions, no policy name",
	obj: vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.PolicyName = ""
		s.ValidationActions = nil
		s.ParamRef.Name = "."
	}),
	want: []string{
		`spec.paramRef.name: Invalid value: ".": may not be '.'`,
		`spec.policyName: Required value`,
		`spec.validationActions: Required value`,
	},
}, {
	name: "bad policy name",
	obj: vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.PolicyName = "Replica_Limit"
	}),
	want: []string{
		`spec.policyName: Invalid value: "Replica_Limit": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
	},
}, {
	name: "paramRef with both name and selector",
	obj: vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.ParamRef.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	}),
	want: []string{
		`spec.paramRef.name: Forbidden: name and selector are mutually exclusive`,
		`spec.paramRef.selector: Forbidden: name and selector are mutually exclusive`,
	},
}, {
	name: "paramRef with neither, nor an action",
	obj: vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.ParamRef = &admissionregistrationv1.ParamRef{Namespace: "default"}
	}),
	want: []string{
		`spec.paramRef: Required value: one of name or selector must be specified`,
		`spec.paramRef.parameterNotFoundAction: Required value`,
	},
}, {
	name: "paramRef with an unknown action and a bad selector",
	obj: vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.ParamRef = &admissionregistrationv1.ParamRef{
			Selector:                &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn}}},
			ParameterNotFoundAction: utilptr.To[admissionregistrationv1.ParameterNotFoundActionType]("Ignore"),
		}
	}),
	want: []string{
		`spec.paramRef.selector.matchExpressions[0].values: Required value: must be specified when ` + "`operator`" + ` is 'In' or 'NotIn'`,
		`spec.paramRef.parameterNotFoundAction: Unsupported value: "Ignore": supported values: "Deny", "Allow"`,
	},
}, {
	name: "bad match resources",
	obj: vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.MatchResources = &admissionregistrationv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a b"}},
			ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"*", "deployments"}},
				},
			}},
		}
	}),
	want: []string{
		`spec.matchResources.namespaceSelector.matchLabels: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
		`spec.matchResources.resourceRules[0].resources: Invalid value: ["*","deployments"]: if '*' is present, must not specify other resources without subresources`,
	},
}, {
	name: "name reserved for manifests",
	obj: func() *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		b := vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) { s.ValidationActions = nil })
		b.Name = "limits.static.k8s.io"
		return b
	}(),
	want: []string{
		`metadata.name: Invalid value: "limits.static.k8s.io": names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API`,
		`spec.validationActions: Required value`,
	},
}}

var validatingAdmissionPolicyBindingUpdateCases = []validationCase{{
	name: "valid update",
	old:  vapb(func(*admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {}),
	obj: vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn}
	}),
}, {
	name: "actions removed",
	old:  vapb(func(*admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {}),
	obj: vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.ValidationActions = nil
		s.PolicyName = "Bad"
	}),
	want: []string{
		`spec.policyName: Invalid value: "Bad": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		`spec.validationActions: Required value`,
	},
}, {
	name: "actions already missing",
	old:  vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) { s.ValidationActions = nil }),
	obj: vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.ValidationActions = nil
		s.PolicyName = "other"
	}),
	want: []string{
		`spec.validationActions: Required value: at least one validation action is required`,
	},
}, {
	name: "nothing changed",
	old:  vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) { s.PolicyName = "" }),
	obj:  vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) { s.PolicyName = "" }),
	want: []string{
		`spec.policyName: Required value`,
	},
}}

// mapb is a valid binding, changed by mutate.
func mapb(mutate func(*admissionregistrationv1.MutatingAdmissionPolicyBindingSpec)) *admissionregistrationv1.MutatingAdmissionPolicyBinding {
	b := &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: objectMeta("sidecar-prod"),
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{
			PolicyName:     "sidecar",
			ParamRef:       paramRefByName(),
			MatchResources: matchResources(),
		},
	}
	mutate(&b.Spec)
	return b
}

var mutatingAdmissionPolicyBindingCases = []validationCase{{
	name: "valid",
	obj:  mapb(func(*admissionregistrationv1.MutatingAdmissionPolicyBindingSpec) {}),
}, {
	name: "valid, minimal",
	obj: mapb(func(s *admissionregistrationv1.MutatingAdmissionPolicyBindingSpec) {
		s.ParamRef, s.MatchResources = nil, nil
	}),
}, {
	name: "no policy name, DELETE, paramRef with name and selector",
	obj: mapb(func(s *admissionregistrationv1.MutatingAdmissionPolicyBindingSpec) {
		s.PolicyName = ""
		s.MatchResources.ResourceRules[0].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}
		s.ParamRef.Selector = &metav1.LabelSelector{}
	}),
	want: []string{
		`spec.policyName: Required value`,
		`spec.paramRef.name: Forbidden: name and selector are mutually exclusive`,
		`spec.paramRef.selector: Forbidden: name and selector are mutually exclusive`,
		`spec.matchResources.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"`,
	},
}}

var mutatingAdmissionPolicyBindingUpdateCases = []validationCase{{
	name: "update checks the spec again",
	old:  mapb(func(*admissionregistrationv1.MutatingAdmissionPolicyBindingSpec) {}),
	obj: mapb(func(s *admissionregistrationv1.MutatingAdmissionPolicyBindingSpec) {
		s.ParamRef.ParameterNotFoundAction = nil
	}),
	want: []string{
		`spec.paramRef.parameterNotFoundAction: Required value`,
	},
}}

func TestValidateValidatingAdmissionPolicyBinding(t *testing.T) {
	runValidationCases(t, validatingAdmissionPolicyBindingCases)
}

func TestValidateValidatingAdmissionPolicyBindingUpdate(t *testing.T) {
	runValidationCases(t, validatingAdmissionPolicyBindingUpdateCases)
}

func TestValidateMutatingAdmissionPolicyBinding(t *testing.T) {
	runValidationCases(t, mutatingAdmissionPolicyBindingCases)
}

func TestValidateMutatingAdmissionPolicyBindingUpdate(t *testing.T) {
	runValidationCases(t, mutatingAdmissionPolicyBindingUpdateCases)
}
