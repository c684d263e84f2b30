package admissionregistration

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	utilptr "k8s.io/utils/ptr"
)

const sidecarApplyConfiguration = `Object{
	spec: Object.spec{
		template: Object.spec.template{
			spec: Object.spec.template.spec{
				initContainers: [Object.spec.template.spec.initContainers{name: "mesh-proxy", image: "mesh/proxy:v1.0.0"}]
			}
		}
	}
}`

// mutatingPolicy is a valid policy, changed by mutate.
func mutatingPolicy(mutate func(*admissionregistrationv1.MutatingAdmissionPolicySpec)) *admissionregistrationv1.MutatingAdmissionPolicy {
	p := &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: objectMeta("sidecar"),
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "SidecarConfig"},
			MatchConstraints: matchResources(),
			MatchConditions:  matchConditions("outside-kube-system"),
			Variables:        []admissionregistrationv1.Variable{{Name: "hasProxy", Expression: "object.spec.template.spec.initContainers.exists(c, c.name == 'mesh-proxy')"}},
			Mutations: []admissionregistrationv1.Mutation{{
				PatchType:          admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: sidecarApplyConfiguration},
			}},
			ReinvocationPolicy: admissionregistrationv1.IfNeededReinvocationPolicy,
		},
	}
	mutate(&p.Spec)
	return p
}

var mutatingAdmissionPolicyCases = []validationCase{{
	name: "valid",
	obj:  mutatingPolicy(func(*admissionregistrationv1.MutatingAdmissionPolicySpec) {}),
}, {
	name: "valid, with a JSON patch",
	obj: mutatingPolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
		s.Mutations = []admissionregistrationv1.Mutation{{
			PatchType: admissionregistrationv1.PatchTypeJSONPatch,
			JSONPatch: &admissionregistrationv1.JSONPatch{Expression: `[JSONPatch{op: "add", path: "/metadata/labels/injected", value: "true"}]`},
		}}
		s.ReinvocationPolicy = admissionregistrationv1.NeverReinvocationPolicy
	}),
}, {
	name: "no mutations, no reinvocation policy",
	obj: mutatingPolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
		s.Mutations = nil
		s.ReinvocationPolicy = ""
	}),
	want: []string{
		`spec.mutations: Required value: mutations must contain at least one item`,
		`spec.reinvocationPolicy: Required value`,
	},
}, {
	name: "bad mutations",
	obj: mutatingPolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
		s.Mutations = []admissionregistrationv1.Mutation{
			{},
			{PatchType: admissionregistrationv1.PatchTypeJSONPatch, ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: "Object{}"}},
			{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration, JSONPatch: &admissionregistrationv1.JSONPatch{Expression: "[]"}},
			{PatchType: "Merge"},
			{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration, ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: "  "}},
			{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration, ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: "'not an object'"}},
			{PatchType: admissionregistrationv1.PatchTypeJSONPatch, JSONPatch: &admissionregistrationv1.JSONPatch{Expression: "[JSONPatch{op: "}},
		}
		s.ReinvocationPolicy = "Sometimes"
	}),
	want: []string{
		`spec.mutations[0].patchType: Required value`,
		`spec.mutations[1].jsonPatch: Required value: must be specified when patchType is JSONPatch`,
		`spec.mutations[1].applyConfiguration: Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch`,
		`spec.mutations[2].applyConfiguration: Required value: must be specified when patchType is ApplyConfiguration`,
		`spec.mutations[2].jsonPatch: Invalid value: "{jsonPatch}": must not be specified when patchType is ApplyConfiguration`,
		`spec.mutations[3].patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch"`,
		`spec.mutations[4].applyConfiguration.expression: Required value`,
		`spec.mutations[5].applyConfiguration.expression: Invalid value: "'not an object'": must evaluate to Object but got string`,
		"spec.mutations[6].jsonPatch.expression: Invalid value: \"[JSONPatch{op:\": compilation failed: ERROR: <input>:1:15: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | [JSONPatch{op:\n | ..............^",
		`spec.reinvocationPolicy: Unsupported value: "Sometimes": supported values: "IfNeeded", "Never"`,
	},
}, {
	name: "DELETE cannot be mutated",
	obj: mutatingPolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
		s.MatchConstraints.ResourceRules[0].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Delete}
	}),
	want: []string{
		`spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"`,
	},
}, {
	name: "bad variable and match condition, params without paramKind",
	obj: mutatingPolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
		s.ParamKind = nil
		s.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "p", Expression: "params.enabled"}}
		s.Variables = append(s.Variables, admissionregistrationv1.Variable{Name: "1st", Expression: "variables.hasProxy"})
	}),
	want: []string{
		"spec.matchConditions[0].expression: Invalid value: \"params.enabled\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.enabled\n | ^",
		`spec.variables[1].name: Invalid value: "1st": must be a valid CEL identifier`,
	},
}}

var mutatingAdmissionPolicyUpdateCases = []validationCase{{
	name: "unchanged match conditions are not compiled",
	old: mutatingPolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
		s.MatchConditions[0].Expression = "nothing"
	}),
	obj: mutatingPolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
		s.MatchConditions[0].Expression = "nothing"
		s.ReinvocationPolicy = admissionregistrationv1.NeverReinvocationPolicy
	}),
}, {
	name: "changed mutations are",
	old:  mutatingPolicy(func(*admissionregistrationv1.MutatingAdmissionPolicySpec) {}),
	obj: mutatingPolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
		s.Mutations[0].ApplyConfiguration.Expression = "Object{"
		s.FailurePolicy = utilptr.To(admissionregistrationv1.Ignore)
	}),
	want: []string{
		"spec.mutations[0].applyConfiguration.expression: Invalid value: \"Object{\": compilation failed: ERROR: <input>:1:8: Syntax error: mismatched input '<EOF>' expecting {'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}\n | Object{\n | .......^",
	},
}}

func TestValidateMutatingAdmissionPolicy(t *testing.T) {
	runValidationCases(t, mutatingAdmissionPolicyCases)
}

func TestValidateMutatingAdmissionPolicyUpdate(t *testing.T) {
	runValidationCases(t, mutatingAdmissionPolicyUpdateCases)
}
