package admissionregistration

import (
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
)

// MutatingWebhookConfigurations is the mutatingwebhookconfigurations
// resource. Upstream gives its objects a generation that counts changes
// to the webhooks; the server starts it at 1, but only bumps it for a
// spec, which these objects lack, so PrepareForUpdate does.
var MutatingWebhookConfigurations = &registry.Resource{
	Group: admissionregistrationv1.GroupName, Version: "v1", Name: "mutatingwebhookconfigurations",
	Singular: "mutatingwebhookconfiguration", Kind: "MutatingWebhookConfiguration",
	Categories:             []string{"api-extensions"},
	New:                    func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
	NewList:                func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfigurationList{} },
	TracksGeneration:       true,
	Default:                registry.Typed(defaultMutatingWebhookConfiguration),
	PrepareForUpdate:       registry.Typed2(prepareMutatingWebhookConfigurationUpdate),
	Validate:               registry.TypedValidate(validateMutatingWebhookConfiguration),
	ValidateUpdate:         registry.TypedValidateUpdate(validateMutatingWebhookConfigurationUpdate),
	ValidateUpdateReplaces: true,
	Table:                  mutatingwebhookconfigurationTable,
}

func defaultMutatingWebhookConfiguration(obj *admissionregistrationv1.MutatingWebhookConfiguration) {
	for i := range obj.Webhooks {
		defaultMutatingWebhook(&obj.Webhooks[i])
	}
}

// defaultMutatingWebhook is upstream's SetDefaults_MutatingWebhook
// with the defaults of what the webhook holds. Absent selectors match
// everything, which an empty one says explicitly.
func defaultMutatingWebhook(hook *admissionregistrationv1.MutatingWebhook) {
	if hook.FailurePolicy == nil {
		hook.FailurePolicy = utilptr.To(admissionregistrationv1.Fail)
	}
	if hook.MatchPolicy == nil {
		hook.MatchPolicy = utilptr.To(admissionregistrationv1.Equivalent)
	}
	if hook.NamespaceSelector == nil {
		hook.NamespaceSelector = &metav1.LabelSelector{}
	}
	if hook.ObjectSelector == nil {
		hook.ObjectSelector = &metav1.LabelSelector{}
	}
	if hook.TimeoutSeconds == nil {
		hook.TimeoutSeconds = utilptr.To[int32](10)
	}
	if hook.ReinvocationPolicy == nil {
		hook.ReinvocationPolicy = utilptr.To(admissionregistrationv1.NeverReinvocationPolicy)
	}
	defaultClientConfig(&hook.ClientConfig)
	defaultRules(hook.Rules)
}

func prepareMutatingWebhookConfigurationUpdate(obj, old *admissionregistrationv1.MutatingWebhookConfiguration) {
	if !reflect.DeepEqual(old.Webhooks, obj.Webhooks) {
		obj.Generation = old.Generation + 1
	}
}

func validateMutatingWebhookConfiguration(obj *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	errs := validateWebhooks(mutatingWebhookViews(obj.Webhooks), createOptions)
	return dedupe(append(errs, validateStaticSuffix(obj.Name)...))
}

// validateMutatingWebhookConfigurationUpdate replaces Validate on
// updates, relaxing what the stored object already breaks.
func validateMutatingWebhookConfigurationUpdate(obj, old *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	hooks := mutatingWebhookViews(obj.Webhooks)
	return dedupe(validateWebhooks(hooks, webhookUpdateOptions(hooks, mutatingWebhookViews(old.Webhooks))))
}
