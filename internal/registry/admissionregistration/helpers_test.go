package admissionregistration

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
)

// validationCase is one object checked the way the server checks it:
// defaulted, then validated as a create (old is nil), an update, or a
// write through /status. want holds the errors' full messages, in order.
type validationCase struct {
	name   string
	obj    runtime.Object
	old    runtime.Object
	status bool
	want   []string
}

func resourceOf(obj runtime.Object) *registry.Resource {
	switch obj.(type) {
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		return ValidatingWebhookConfigurations
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		return MutatingWebhookConfigurations
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		return ValidatingAdmissionPolicies
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		return ValidatingAdmissionPolicyBindings
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		return MutatingAdmissionPolicies
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		return MutatingAdmissionPolicyBindings
	}
	panic("no resource for " + obj.GetObjectKind().GroupVersionKind().String())
}

// validateCase runs the hooks the server runs for the case's write.
func validateCase(tc validationCase) field.ErrorList {
	res := resourceOf(tc.obj)
	obj := tc.obj.DeepCopyObject()
	res.Default(obj)
	if tc.old == nil {
		return res.Validate(obj)
	}
	old := tc.old.DeepCopyObject()
	res.Default(old)
	if tc.status {
		return res.ValidateStatusUpdate(obj, old)
	}
	if !res.ValidateUpdateReplaces {
		panic("update validation must replace Validate")
	}
	return res.ValidateUpdate(obj, old)
}

func runValidationCases(t *testing.T, cases []validationCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateCase(tc)
			got := make([]string, len(errs))
			for i, e := range errs {
				got[i] = e.Error()
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got %d errors:\n  %s\nwant %d:\n  %s", len(got), strings.Join(got, "\n  "), len(tc.want), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func objectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name}
}

func serviceClientConfig() admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
		Namespace: "webhooks", Name: "policy", Path: utilptr.To("/validate"),
	}}
}

func podRules() []admissionregistrationv1.RuleWithOperations {
	return []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods", "pods/status"}},
	}}
}

func matchConditions(names ...string) []admissionregistrationv1.MatchCondition {
	mcs := make([]admissionregistrationv1.MatchCondition, len(names))
	for i, n := range names {
		mcs[i] = admissionregistrationv1.MatchCondition{Name: n, Expression: "request.namespace != 'kube-system'"}
	}
	return mcs
}

func matchResources() *admissionregistrationv1.MatchResources {
	return &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
		RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
		},
	}}}
}
