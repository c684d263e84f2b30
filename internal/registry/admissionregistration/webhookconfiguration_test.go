package admissionregistration

import (
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilptr "k8s.io/utils/ptr"
)

func validatingWebhook(name string) admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name:                    name,
		ClientConfig:            serviceClientConfig(),
		Rules:                   podRules(),
		SideEffects:             utilptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1", "v1beta1"},
		MatchConditions:         matchConditions("not-kube-system"),
	}
}

// vwc is a valid configuration with one webhook, changed by mutate.
func vwc(mutate func(*admissionregistrationv1.ValidatingWebhook)) *admissionregistrationv1.ValidatingWebhookConfiguration {
	hook := validatingWebhook("pods.policy.example.com")
	mutate(&hook)
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: objectMeta("policy"),
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{hook},
	}
}

func mutatingWebhook(name string) admissionregistrationv1.MutatingWebhook {
	return admissionregistrationv1.MutatingWebhook{
		Name:                    name,
		ClientConfig:            serviceClientConfig(),
		Rules:                   podRules(),
		SideEffects:             utilptr.To(admissionregistrationv1.SideEffectClassNoneOnDryRun),
		AdmissionReviewVersions: []string{"v1"},
		ReinvocationPolicy:      utilptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
	}
}

func mwc(mutate func(*admissionregistrationv1.MutatingWebhook)) *admissionregistrationv1.MutatingWebhookConfiguration {
	hook := mutatingWebhook("pods.injector.example.com")
	mutate(&hook)
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: objectMeta("injector"),
		Webhooks:   []admissionregistrationv1.MutatingWebhook{hook},
	}
}

func noChange[T any](*T) {}

var validatingWebhookConfigurationCases = []validationCase{{
	name: "valid, with a service",
	obj:  vwc(noChange),
}, {
	name: "valid, with an https url and no match conditions",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: utilptr.To("https://policy.example.com:8443/validate")}
		h.MatchConditions = nil
		h.SideEffects = utilptr.To(admissionregistrationv1.SideEffectClassNoneOnDryRun)
		h.TimeoutSeconds = utilptr.To[int32](30)
	}),
}, {
	name: "valid, wildcards and excluded rules",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.Rules = []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*/*"}, Scope: utilptr.To(admissionregistrationv1.NamespacedScope)},
		}}
		h.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}},
		}}
	}),
}, {
	name: "no webhooks",
	obj:  &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: objectMeta("empty")},
}, {
	name: "name not fully qualified",
	obj:  vwc(func(h *admissionregistrationv1.ValidatingWebhook) { h.Name = "policy" }),
	want: []string{
		`webhooks[0].name: Invalid value: "policy": should be a domain with at least three segments separated by dots`,
	},
}, {
	name: "duplicate webhook names",
	obj: func() *admissionregistrationv1.ValidatingWebhookConfiguration {
		c := vwc(noChange)
		c.Webhooks = append(c.Webhooks, c.Webhooks[0])
		return c
	}(),
	want: []string{
		`webhooks[1].name: Duplicate value: "pods.policy.example.com"`,
	},
}, {
	name: "both url and service",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.ClientConfig.URL = utilptr.To("https://policy.example.com/validate")
	}),
	want: []string{
		`webhooks[0].clientConfig: Required value: exactly one of url or service is required`,
	},
}, {
	name: "neither url nor service",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.ClientConfig = admissionregistrationv1.WebhookClientConfig{}
	}),
	want: []string{
		`webhooks[0].clientConfig: Required value: exactly one of url or service is required`,
	},
}, {
	name: "url with a query",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: utilptr.To("https://policy.example.com/validate?mode=strict")}
	}),
	want: []string{
		`webhooks[0].clientConfig.url: Invalid value: "mode=strict": query parameters are not permitted in the URL`,
	},
}, {
	name: "url not https, with user and fragment",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: utilptr.To("http://admin@policy.example.com/validate#top")}
	}),
	want: []string{
		`webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
		`webhooks[0].clientConfig.url: Invalid value: "admin": user information is not permitted in the URL`,
		`webhooks[0].clientConfig.url: Invalid value: "top": fragments are not permitted in the URL`,
	},
}, {
	name: "service without name and with a bad path and port",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.ClientConfig.Service.Name = ""
		h.ClientConfig.Service.Path = utilptr.To("validate//Now")
		h.ClientConfig.Service.Port = utilptr.To[int32](70000)
	}),
	want: []string{
		`webhooks[0].clientConfig.service.namespace: Required value`,
		`webhooks[0].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive`,
		`webhooks[0].clientConfig.service.path: Invalid value: "validate//Now": must start with a '/'`,
		`webhooks[0].clientConfig.service.path: Invalid value: "validate//Now": segment[1] may not be empty`,
		`webhooks[0].clientConfig.service.path: Invalid value: "validate//Now": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
	},
}, {
	name: "missing sideEffects",
	obj:  vwc(func(h *admissionregistrationv1.ValidatingWebhook) { h.SideEffects = nil }),
	want: []string{
		`webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun`,
	},
}, {
	name: "sideEffects Some",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.SideEffects = utilptr.To(admissionregistrationv1.SideEffectClassSome)
	}),
	want: []string{
		`webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`,
	},
}, {
	name: "no admissionReviewVersions",
	obj:  vwc(func(h *admissionregistrationv1.ValidatingWebhook) { h.AdmissionReviewVersions = nil }),
	want: []string{
		`webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1`,
	},
}, {
	name: "no known admissionReviewVersion",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.AdmissionReviewVersions = []string{"v2", "v2", "V3"}
	}),
	want: []string{
		`webhooks[0].admissionReviewVersions[1]: Invalid value: "v2": duplicate version`,
		`webhooks[0].admissionReviewVersions[2]: Invalid value: "V3": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
		`webhooks[0].admissionReviewVersions: Invalid value: ["v2","v2","V3"]: must include at least one of v1, v1beta1`,
	},
}, {
	name: "timeoutSeconds 31",
	obj:  vwc(func(h *admissionregistrationv1.ValidatingWebhook) { h.TimeoutSeconds = utilptr.To[int32](31) }),
	want: []string{
		`webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds`,
	},
}, {
	name: "bad policies",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.FailurePolicy = utilptr.To[admissionregistrationv1.FailurePolicyType]("Retry")
		h.MatchPolicy = utilptr.To[admissionregistrationv1.MatchPolicyType]("Close")
	}),
	want: []string{
		`webhooks[0].failurePolicy: Unsupported value: "Retry": supported values: "Fail", "Ignore"`,
		`webhooks[0].matchPolicy: Unsupported value: "Close": supported values: "Equivalent", "Exact"`,
	},
}, {
	name: "rule with no operations",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.Rules[0].Operations = []admissionregistrationv1.OperationType{}
	}),
	want: []string{
		`webhooks[0].rules[0].operations: Required value`,
	},
}, {
	name: "rule with */* among other resources",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.Rules[0].Resources = []string{"*/*", "pods"}
	}),
	want: []string{
		`webhooks[0].rules[0].resources: Invalid value: ["*/*","pods"]: if '*/*' is present, must not specify other resources`,
	},
}, {
	name: "rule with bad operations, groups, versions, resources and scope",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.Rules[0] = admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll, "PATCH"},
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{"*", "apps"},
				APIVersions: []string{"v1", ""},
				Resources:   []string{"*", "pods", "deployments/*", "deployments/scale", "*/status", "pods/status", ""},
				Scope:       utilptr.To[admissionregistrationv1.ScopeType]("Node"),
			},
		}
	}),
	want: []string{
		`webhooks[0].rules[0].operations: Invalid value: ["*","PATCH"]: if '*' is present, must not specify other operations`,
		`webhooks[0].rules[0].operations[1]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"`,
		`webhooks[0].rules[0].apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other API groups`,
		`webhooks[0].rules[0].apiVersions[1]: Required value`,
		`webhooks[0].rules[0].resources[3]: Invalid value: "deployments/scale": if 'deployments/*' is present, must not specify deployments/scale`,
		`webhooks[0].rules[0].resources[5]: Invalid value: "pods/status": if '*/status' is present, must not specify pods/status`,
		`webhooks[0].rules[0].resources[6]: Required value`,
		`webhooks[0].rules[0].resources: Invalid value: ["*","pods","deployments/*","deployments/scale","*/status","pods/status",""]: if '*' is present, must not specify other resources without subresources`,
		`webhooks[0].rules[0].scope: Unsupported value: "Node": supported values: "*", "Cluster", "Namespaced"`,
	},
}, {
	name: "bad selector label value",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "front end"}}
	}),
	want: []string{
		`webhooks[0].objectSelector.matchLabels: Invalid value: "front end": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
	},
}, {
	name: "match condition that does not compile",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.MatchConditions[0].Expression = "request.namespace =="
	}),
	want: []string{
		"webhooks[0].matchConditions[0].expression: Invalid value: \"request.namespace ==\": compilation failed: ERROR: <input>:1:21: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | request.namespace ==\n | ....................^",
	},
}, {
	name: "match condition not a bool, using params, badly named and repeated",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.MatchConditions = []admissionregistrationv1.MatchCondition{
			{Name: "ns", Expression: "request.namespace"},
			{Name: "params", Expression: "params != null"},
			{Name: "bad name!", Expression: "true"},
			{Name: "ns", Expression: " "},
		}
	}),
	want: []string{
		`webhooks[0].matchConditions[0].expression: Invalid value: "request.namespace": must evaluate to bool but got string`,
		"webhooks[0].matchConditions[1].expression: Invalid value: \"params != null\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params != null\n | ^",
		`webhooks[0].matchConditions[2].name: Invalid value: "bad name!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		`webhooks[0].matchConditions[3].expression: Required value`,
		`webhooks[0].matchConditions[3].name: Duplicate value: "ns"`,
	},
}, {
	name: "65 match conditions",
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.MatchConditions = nil
		for i := range 65 {
			h.MatchConditions = append(h.MatchConditions, matchConditions(fmt.Sprintf("c%d", i))...)
		}
	}),
	want: []string{
		`webhooks[0].matchConditions: Too many: 65: must have at most 64 items`,
	},
}, {
	name: "name reserved for manifests",
	obj: func() *admissionregistrationv1.ValidatingWebhookConfiguration {
		c := vwc(noChange)
		c.Name = "policy.static.k8s.io"
		return c
	}(),
	want: []string{
		`metadata.name: Invalid value: "policy.static.k8s.io": names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API`,
	},
}}

// Objects stored before a rule existed keep what they had; a new object
// or a change must follow it.
var validatingWebhookConfigurationUpdateCases = []validationCase{{
	name: "unknown admissionReviewVersions may stay",
	old:  vwc(func(h *admissionregistrationv1.ValidatingWebhook) { h.AdmissionReviewVersions = []string{"v2"} }),
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.AdmissionReviewVersions = []string{"v3"}
		h.TimeoutSeconds = utilptr.To[int32](5)
	}),
}, {
	name: "known admissionReviewVersions may not go",
	old:  vwc(noChange),
	obj:  vwc(func(h *admissionregistrationv1.ValidatingWebhook) { h.AdmissionReviewVersions = []string{"v2"} }),
	want: []string{
		`webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1`,
	},
}, {
	name: "side effects may stay",
	old: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.SideEffects = utilptr.To(admissionregistrationv1.SideEffectClassUnknown)
	}),
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.SideEffects = utilptr.To(admissionregistrationv1.SideEffectClassSome)
	}),
}, {
	name: "side effects may not come",
	old:  vwc(noChange),
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.SideEffects = utilptr.To(admissionregistrationv1.SideEffectClassSome)
	}),
	want: []string{
		`webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`,
	},
}, {
	name: "duplicate names may stay",
	old: func() *admissionregistrationv1.ValidatingWebhookConfiguration {
		c := vwc(noChange)
		c.Webhooks = append(c.Webhooks, c.Webhooks[0])
		return c
	}(),
	obj: func() *admissionregistrationv1.ValidatingWebhookConfiguration {
		c := vwc(noChange)
		c.Webhooks = append(c.Webhooks, c.Webhooks[0], c.Webhooks[0])
		return c
	}(),
}, {
	name: "invalid label values in expressions may stay",
	old: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a b"}},
		}}
	}),
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "team", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"c d"}},
		}}
	}),
}, {
	name: "but not in matchLabels, which were always checked",
	old: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a b"}},
		}}
	}),
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "c d"}}
	}),
	want: []string{
		`webhooks[0].namespaceSelector.matchLabels: Invalid value: "c d": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
	},
}, {
	name: "invalid label values may not come",
	old:  vwc(noChange),
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "team", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"c d"}},
		}}
	}),
	want: []string{
		`webhooks[0].objectSelector.matchExpressions[0].values[0]: Invalid value: "c d": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
	},
}, {
	name: "unchanged match conditions are not compiled",
	old: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.MatchConditions[0].Expression = "no.such.variable"
	}),
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.MatchConditions[0].Expression = "no.such.variable"
		h.TimeoutSeconds = utilptr.To[int32](20)
	}),
}, {
	name: "changed match conditions are",
	old: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.MatchConditions[0].Expression = "no.such.variable"
	}),
	obj: vwc(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.MatchConditions[0].Expression = "no.such.variable"
		h.MatchConditions = append(h.MatchConditions, matchConditions("second")...)
	}),
	want: []string{
		"webhooks[0].matchConditions[0].expression: Invalid value: \"no.such.variable\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'no' (in container '')\n | no.such.variable\n | ^",
	},
}, {
	name: "the static suffix is checked on create only",
	old: func() *admissionregistrationv1.ValidatingWebhookConfiguration {
		c := vwc(noChange)
		c.Name = "policy.static.k8s.io"
		return c
	}(),
	obj: func() *admissionregistrationv1.ValidatingWebhookConfiguration {
		c := vwc(noChange)
		c.Name = "policy.static.k8s.io"
		return c
	}(),
}}

var mutatingWebhookConfigurationCases = []validationCase{{
	name: "valid",
	obj:  mwc(noChange),
}, {
	name: "valid, with an url and match conditions",
	obj: mwc(func(h *admissionregistrationv1.MutatingWebhook) {
		h.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: utilptr.To("https://10.0.0.1/mutate")}
		h.MatchConditions = matchConditions("a", "b")
	}),
}, {
	name: "bad reinvocation policy and name",
	obj: mwc(func(h *admissionregistrationv1.MutatingWebhook) {
		h.Name = "Injector"
		h.ReinvocationPolicy = utilptr.To[admissionregistrationv1.ReinvocationPolicyType]("Always")
	}),
	want: []string{
		`webhooks[0].name: Invalid value: "Injector": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		`webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"`,
	},
}, {
	name: "duplicate names, missing sideEffects, timeout 0",
	obj: func() *admissionregistrationv1.MutatingWebhookConfiguration {
		c := mwc(func(h *admissionregistrationv1.MutatingWebhook) {
			h.SideEffects = nil
			h.TimeoutSeconds = utilptr.To[int32](0)
		})
		c.Webhooks = append(c.Webhooks, c.Webhooks[0])
		return c
	}(),
	want: []string{
		`webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun`,
		`webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds`,
		`webhooks[1].sideEffects: Required value: must specify one of None, NoneOnDryRun`,
		`webhooks[1].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds`,
		`webhooks[1].name: Duplicate value: "pods.injector.example.com"`,
	},
}, {
	name: "url with a query",
	obj: mwc(func(h *admissionregistrationv1.MutatingWebhook) {
		h.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: utilptr.To("https://injector.example.com/mutate?x=1")}
	}),
	want: []string{
		`webhooks[0].clientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL`,
	},
}, {
	name: "match condition with a syntax error",
	obj: mwc(func(h *admissionregistrationv1.MutatingWebhook) {
		h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "a", Expression: "object.metadata.name.size( > 3"}}
	}),
	want: []string{
		"webhooks[0].matchConditions[0].expression: Invalid value: \"object.metadata.name.size( > 3\": compilation failed: ERROR: <input>:1:28: Syntax error: extraneous input '>' expecting {'[', '{', '(', ')', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | object.metadata.name.size( > 3\n | ...........................^\nERROR: <input>:1:31: Syntax error: missing ')' at '<EOF>'\n | object.metadata.name.size( > 3\n | ..............................^",
	},
}}

var mutatingWebhookConfigurationUpdateCases = []validationCase{{
	name: "unknown admissionReviewVersions may stay",
	old:  mwc(func(h *admissionregistrationv1.MutatingWebhook) { h.AdmissionReviewVersions = []string{"v0"} }),
	obj: mwc(func(h *admissionregistrationv1.MutatingWebhook) {
		h.AdmissionReviewVersions = []string{"v0"}
		h.ReinvocationPolicy = utilptr.To(admissionregistrationv1.NeverReinvocationPolicy)
	}),
}, {
	name: "but other rules still hold",
	old:  mwc(func(h *admissionregistrationv1.MutatingWebhook) { h.AdmissionReviewVersions = []string{"v0"} }),
	obj: mwc(func(h *admissionregistrationv1.MutatingWebhook) {
		h.AdmissionReviewVersions = []string{"v0"}
		h.TimeoutSeconds = utilptr.To[int32](31)
	}),
	want: []string{
		`webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds`,
	},
}, {
	name: "side effects may stay",
	old: mwc(func(h *admissionregistrationv1.MutatingWebhook) {
		h.SideEffects = utilptr.To(admissionregistrationv1.SideEffectClassSome)
	}),
	obj: mwc(func(h *admissionregistrationv1.MutatingWebhook) {
		h.SideEffects = utilptr.To(admissionregistrationv1.SideEffectClassSome)
	}),
}}

func TestValidateValidatingWebhookConfiguration(t *testing.T) {
	runValidationCases(t, validatingWebhookConfigurationCases)
}

func TestValidateValidatingWebhookConfigurationUpdate(t *testing.T) {
	runValidationCases(t, validatingWebhookConfigurationUpdateCases)
}

func TestValidateMutatingWebhookConfiguration(t *testing.T) {
	runValidationCases(t, mutatingWebhookConfigurationCases)
}

func TestValidateMutatingWebhookConfigurationUpdate(t *testing.T) {
	runValidationCases(t, mutatingWebhookConfigurationUpdateCases)
}

func TestWebhookConfigurationGeneration(t *testing.T) {
	old := vwc(noChange)
	old.Generation = 3
	same := old.DeepCopy()
	prepareValidatingWebhookConfigurationUpdate(same, old)
	if same.Generation != 3 {
		t.Errorf("unchanged webhooks: generation %d, want 3", same.Generation)
	}
	changed := old.DeepCopy()
	changed.Webhooks[0].TimeoutSeconds = utilptr.To[int32](5)
	prepareValidatingWebhookConfigurationUpdate(changed, old)
	if changed.Generation != 4 {
		t.Errorf("changed webhooks: generation %d, want 4", changed.Generation)
	}

	oldM := mwc(noChange)
	oldM.Generation = 1
	changedM := oldM.DeepCopy()
	changedM.Webhooks = nil
	prepareMutatingWebhookConfigurationUpdate(changedM, oldM)
	if changedM.Generation != 2 {
		t.Errorf("changed mutating webhooks: generation %d, want 2", changedM.Generation)
	}
}
