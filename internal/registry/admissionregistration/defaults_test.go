package admissionregistration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilptr "k8s.io/utils/ptr"
)

func TestDefaults(t *testing.T) {
	allScopes := utilptr.To(admissionregistrationv1.AllScopes)
	rule := func(scope *admissionregistrationv1.ScopeType) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}, Scope: scope},
		}
	}
	namedRule := func(scope *admissionregistrationv1.ScopeType) admissionregistrationv1.NamedRuleWithOperations {
		return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: rule(scope)}
	}
	defaultedMatch := &admissionregistrationv1.MatchResources{
		MatchPolicy:          utilptr.To(admissionregistrationv1.Equivalent),
		NamespaceSelector:    &metav1.LabelSelector{},
		ObjectSelector:       &metav1.LabelSelector{},
		ResourceRules:        []admissionregistrationv1.NamedRuleWithOperations{namedRule(allScopes)},
		ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{namedRule(allScopes)},
	}
	explicitMatch := &admissionregistrationv1.MatchResources{
		MatchPolicy:          utilptr.To(admissionregistrationv1.Exact),
		NamespaceSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		ObjectSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"c": "d"}},
		ResourceRules:        []admissionregistrationv1.NamedRuleWithOperations{namedRule(utilptr.To(admissionregistrationv1.ClusterScope))},
		ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{namedRule(utilptr.To(admissionregistrationv1.NamespacedScope))},
	}
	withUnsetMatch := func() *admissionregistrationv1.MatchResources {
		return &admissionregistrationv1.MatchResources{
			ResourceRules:        []admissionregistrationv1.NamedRuleWithOperations{namedRule(nil)},
			ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{namedRule(nil)},
		}
	}

	tests := []struct {
		name      string
		obj, want runtime.Object
	}{{
		name: "validating webhook",
		obj: &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "s"}},
			Rules:        []admissionregistrationv1.RuleWithOperations{rule(nil)},
		}, {
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: utilptr.To("https://x.example.com")},
		}}},
		want: &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			ClientConfig:      admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "s", Port: utilptr.To[int32](443)}},
			Rules:             []admissionregistrationv1.RuleWithOperations{rule(allScopes)},
			FailurePolicy:     utilptr.To(admissionregistrationv1.Fail),
			MatchPolicy:       utilptr.To(admissionregistrationv1.Equivalent),
			NamespaceSelector: &metav1.LabelSelector{},
			ObjectSelector:    &metav1.LabelSelector{},
			TimeoutSeconds:    utilptr.To[int32](10),
		}, {
			ClientConfig:      admissionregistrationv1.WebhookClientConfig{URL: utilptr.To("https://x.example.com")},
			FailurePolicy:     utilptr.To(admissionregistrationv1.Fail),
			MatchPolicy:       utilptr.To(admissionregistrationv1.Equivalent),
			NamespaceSelector: &metav1.LabelSelector{},
			ObjectSelector:    &metav1.LabelSelector{},
			TimeoutSeconds:    utilptr.To[int32](10),
		}}},
	}, {
		name: "validating webhook, explicit values kept",
		obj: &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			ClientConfig:      admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "s", Port: utilptr.To[int32](8443)}},
			Rules:             []admissionregistrationv1.RuleWithOperations{rule(utilptr.To(admissionregistrationv1.ClusterScope))},
			FailurePolicy:     utilptr.To(admissionregistrationv1.Ignore),
			MatchPolicy:       utilptr.To(admissionregistrationv1.Exact),
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			ObjectSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"c": "d"}},
			TimeoutSeconds:    utilptr.To[int32](3),
		}}},
		want: &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			ClientConfig:      admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "s", Port: utilptr.To[int32](8443)}},
			Rules:             []admissionregistrationv1.RuleWithOperations{rule(utilptr.To(admissionregistrationv1.ClusterScope))},
			FailurePolicy:     utilptr.To(admissionregistrationv1.Ignore),
			MatchPolicy:       utilptr.To(admissionregistrationv1.Exact),
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			ObjectSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"c": "d"}},
			TimeoutSeconds:    utilptr.To[int32](3),
		}}},
	}, {
		name: "mutating webhook",
		obj: &admissionregistrationv1.MutatingWebhookConfiguration{Webhooks: []admissionregistrationv1.MutatingWebhook{{
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "s"}},
			Rules:        []admissionregistrationv1.RuleWithOperations{rule(nil)},
		}, {
			ReinvocationPolicy: utilptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
			TimeoutSeconds:     utilptr.To[int32](30),
		}}},
		want: &admissionregistrationv1.MutatingWebhookConfiguration{Webhooks: []admissionregistrationv1.MutatingWebhook{{
			ClientConfig:       admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "s", Port: utilptr.To[int32](443)}},
			Rules:              []admissionregistrationv1.RuleWithOperations{rule(allScopes)},
			FailurePolicy:      utilptr.To(admissionregistrationv1.Fail),
			MatchPolicy:        utilptr.To(admissionregistrationv1.Equivalent),
			NamespaceSelector:  &metav1.LabelSelector{},
			ObjectSelector:     &metav1.LabelSelector{},
			TimeoutSeconds:     utilptr.To[int32](10),
			ReinvocationPolicy: utilptr.To(admissionregistrationv1.NeverReinvocationPolicy),
		}, {
			FailurePolicy:      utilptr.To(admissionregistrationv1.Fail),
			MatchPolicy:        utilptr.To(admissionregistrationv1.Equivalent),
			NamespaceSelector:  &metav1.LabelSelector{},
			ObjectSelector:     &metav1.LabelSelector{},
			TimeoutSeconds:     utilptr.To[int32](30),
			ReinvocationPolicy: utilptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
		}}},
	}, {
		name: "validating policy",
		obj: &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: withUnsetMatch(),
		}},
		want: &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    utilptr.To(admissionregistrationv1.Fail),
			MatchConstraints: defaultedMatch,
		}},
	}, {
		name: "validating policy, explicit values and no constraints",
		obj: &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: utilptr.To(admissionregistrationv1.Ignore),
		}},
		want: &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: utilptr.To(admissionregistrationv1.Ignore),
		}},
	}, {
		name: "validating binding",
		obj: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			MatchResources: withUnsetMatch(),
			// Upstream gives parameterNotFoundAction no default in v1.
			ParamRef: &admissionregistrationv1.ParamRef{Name: "p"},
		}},
		want: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			MatchResources: defaultedMatch,
			ParamRef:       &admissionregistrationv1.ParamRef{Name: "p"},
		}},
	}, {
		name: "validating binding, explicit match",
		obj: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			MatchResources: explicitMatch.DeepCopy(),
		}},
		want: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			MatchResources: explicitMatch,
		}},
	}, {
		name: "mutating policy",
		obj: &admissionregistrationv1.MutatingAdmissionPolicy{Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: withUnsetMatch(),
		}},
		want: &admissionregistrationv1.MutatingAdmissionPolicy{Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			FailurePolicy:    utilptr.To(admissionregistrationv1.Fail),
			MatchConstraints: defaultedMatch,
		}},
	}, {
		name: "mutating binding",
		obj: &admissionregistrationv1.MutatingAdmissionPolicyBinding{Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{
			MatchResources: withUnsetMatch(),
		}},
		want: &admissionregistrationv1.MutatingAdmissionPolicyBinding{Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{
			MatchResources: defaultedMatch,
		}},
	}, {
		name: "mutating binding without match",
		obj:  &admissionregistrationv1.MutatingAdmissionPolicyBinding{},
		want: &admissionregistrationv1.MutatingAdmissionPolicyBinding{},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.obj.DeepCopyObject()
			resourceOf(obj).Default(obj)
			if diff := cmp.Diff(tc.want, obj); diff != "" {
				t.Errorf("defaulted object differs (-want +got):\n%s", diff)
			}
		})
	}
}
