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

// ValidatingWebhookConfigurations is the validatingwebhookconfigurations
// resource. Upstream gives its objects a generation that counts changes
// to the webhooks; the server starts it at 1, but only bumps it for a
// spec, which these objects lack, so PrepareForUpdate does.
var ValidatingWebhookConfigurations = &registry.Resource{
	Group: admissionregistrationv1.GroupName, Version: "v1", Name: "validatingwebhookconfigurations",
	Singular: "validatingwebhookconfiguration", Kind: "ValidatingWebhookConfiguration",
	Categories:             []string{"api-extensions"},
	New:                    func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
	NewList:                func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} },
	TracksGeneration:       true,
	Default:                registry.Typed(defaultValidatingWebhookConfiguration),
	PrepareForUpdate:       registry.Typed2(prepareValidatingWebhookConfigurationUpdate),
	Validate:               registry.TypedValidate(validateValidatingWebhookConfiguration),
	ValidateUpdate:         registry.TypedValidateUpdate(validateValidatingWebhookConfigurationUpdate),
	ValidateUpdateReplaces: true,
	Table:                  validatingwebhookconfigurationTable,
}

func defaultValidatingWebhookConfiguration(obj *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range obj.Webhooks {
		defaultValidatingWebhook(&obj.Webhooks[i])
	}
}

// defaultValidatingWebhook is upstream's SetDefaults_ValidatingWebhook
// with the defaults of what the webhook holds. Absent selectors match
// everything, which an empty one says explicitly.
func defaultValidatingWebhook(hook *admissionregistrationv1.ValidatingWebhook) {
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
	defaultClientConfig(&hook.ClientConfig)
	defaultRules(hook.Rules)
}

func prepareValidatingWebhookConfigurationUpdate(obj, old *admissionregistrationv1.ValidatingWebhookConfiguration) {
	if !reflect.DeepEqual(old.Webhooks, obj.Webhooks) {
		obj.Generation = old.Generation + 1
	}
}

func validateValidatingWebhookConfiguration(obj *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	errs := validateWebhooks(validatingWebhookViews(obj.Webhooks), createOptions)
	return dedupe(append(errs, validateStaticSuffix(obj.Name)...))
}

// validateValidatingWebhookConfigurationUpdate replaces Validate on
// updates, relaxing what the stored object already breaks.
func validateValidatingWebhookConfigurationUpdate(obj, old *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	hooks := validatingWebhookViews(obj.Webhooks)
	return dedupe(validateWebhooks(hooks, webhookUpdateOptions(hooks, validatingWebhookViews(old.Webhooks))))
}
