// Package webhook calls the admission webhooks that
// MutatingWebhookConfigurations and ValidatingWebhookConfigurations
// register. The dispatch is upstream's own (k8s.io/apiserver's webhook
// admission plugins): matching by rules, matchPolicy, namespace and
// object selectors and CEL match conditions, AdmissionReview v1 and
// v1beta1 over TLS with the configuration's caBundle, JSON patches and
// reinvocation, failure policies and timeouts, dry run and side effects,
// warnings. This package adapts the server's admission attributes to
// theirs and gives them the server's ways to reach a service and to know
// its objects.
package webhook

import (
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/bridge"
)

// Names of the plugins, as upstream names them.
const (
	MutatingPluginName   = "MutatingAdmissionWebhook"
	ValidatingPluginName = "ValidatingAdmissionWebhook"
)

// Config is what the plugins need from the server.
type Config struct {
	// Client and Informers reach the server itself (a loopback client):
	// the informers keep the webhook configurations and namespaces the
	// plugins match against, and must be started by the caller.
	Client    kubernetes.Interface
	Informers informers.SharedInformerFactory
	// Resolver turns a webhook's service reference into an address.
	Resolver webhookutil.ServiceResolver
}

// Mutating is the MutatingAdmissionWebhook plugin.
type Mutating struct {
	p       *mutating.Plugin
	configs *bridge.Presence
}

// Validating is the ValidatingAdmissionWebhook plugin.
type Validating struct {
	p       *validating.Plugin
	configs *bridge.Presence
}

// initializable is what both upstream plugins need set before use.
type initializable interface {
	SetAuthenticationInfoResolverWrapper(webhookutil.AuthenticationInfoResolverWrapper)
	SetServiceResolver(webhookutil.ServiceResolver)
	SetExternalKubeClientSet(kubernetes.Interface)
	SetExternalKubeInformerFactory(informers.SharedInformerFactory)
	ValidateInitialization() error
}

func initialize(p initializable, cfg Config) error {
	// Webhooks get no credentials of the server's unless a kubeconfig
	// names some, as upstream without --admission-control-config-file.
	p.SetAuthenticationInfoResolverWrapper(webhookutil.NewDefaultAuthenticationInfoResolverWrapper(nil, nil, nil, nil))
	p.SetServiceResolver(cfg.Resolver)
	p.SetExternalKubeClientSet(cfg.Client)
	p.SetExternalKubeInformerFactory(cfg.Informers)
	return p.ValidateInitialization()
}

// New builds both plugins; their informers are registered with
// cfg.Informers.
func New(cfg Config) (*Mutating, *Validating, error) {
	m, err := mutating.NewMutatingWebhook(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("mutating admission webhook: %w", err)
	}
	if err := initialize(m, cfg); err != nil {
		return nil, nil, fmt.Errorf("mutating admission webhook: %w", err)
	}
	v, err := validating.NewValidatingAdmissionWebhook(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("validating admission webhook: %w", err)
	}
	if err := initialize(v, cfg); err != nil {
		return nil, nil, fmt.Errorf("validating admission webhook: %w", err)
	}
	admreg := cfg.Informers.Admissionregistration().V1()
	mc, err := bridge.NewPresence(admreg.MutatingWebhookConfigurations().Informer())
	if err != nil {
		return nil, nil, fmt.Errorf("mutating admission webhook: %w", err)
	}
	vc, err := bridge.NewPresence(admreg.ValidatingWebhookConfigurations().Informer())
	if err != nil {
		return nil, nil, fmt.Errorf("validating admission webhook: %w", err)
	}
	return &Mutating{m, mc}, &Validating{v, vc}, nil
}

// Name is the plugin's name.
func (*Mutating) Name() string { return MutatingPluginName }

// Admit calls the mutating webhooks that match the request; their patches
// change a.Object in place.
func (m *Mutating) Admit(ctx context.Context, a *admission.Attributes) error {
	if m.configs.None() {
		return nil
	}
	return bridge.Call(ctx, a, m.p, m.p.Admit)
}

// Name is the plugin's name.
func (*Validating) Name() string { return ValidatingPluginName }

// Validate calls the validating webhooks that match the request, in
// parallel; any refusal refuses the request.
func (v *Validating) Validate(ctx context.Context, a *admission.Attributes) error {
	if v.configs.None() {
		return nil
	}
	return bridge.Call(ctx, a, v.p, v.p.Validate)
}
