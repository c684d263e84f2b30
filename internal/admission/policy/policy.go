// Package policy enforces admission policies written in CEL:
// ValidatingAdmissionPolicies and MutatingAdmissionPolicies with their
// bindings. Matching, parameters (paramKind and paramRef), variables,
// validation actions Deny, Warn and Audit, messageExpression, audit
// annotations, and mutations by apply configuration or JSON patch are
// upstream's own (k8s.io/apiserver's policy admission plugins); this
// package gives them the server's requests and its ways to read objects.
package policy

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/bridge"
)

// Names of the plugins, as upstream names them.
const (
	ValidatingPluginName = "ValidatingAdmissionPolicy"
	MutatingPluginName   = "MutatingAdmissionPolicy"
)

// Config is what the plugins need from the server.
type Config struct {
	// Client, Dynamic and Informers reach the server itself (a loopback
	// client): the informers keep the policies, bindings, namespaces and
	// parameters, and must be started by the caller.
	Client    kubernetes.Interface
	Dynamic   dynamic.Interface
	Informers informers.SharedInformerFactory
	// Mapper finds the resource of a policy's paramKind.
	Mapper meta.RESTMapper
	// Authorizer answers the policies' authorizer checks.
	Authorizer authorizer.UnconditionalAuthorizer
	// Stop ends the plugins' background work.
	Stop <-chan struct{}
}

// Validating is the ValidatingAdmissionPolicy plugin.
type Validating struct {
	p *validating.Plugin
	// policies are counted because bindings without a policy do nothing.
	policies *bridge.Presence
}

// Mutating is the MutatingAdmissionPolicy plugin.
type Mutating struct {
	p        *mutating.Plugin
	policies *bridge.Presence
}

// initializable is what both upstream plugins need set before use.
type initializable interface {
	SetExternalKubeInformerFactory(informers.SharedInformerFactory)
	SetExternalKubeClientSet(kubernetes.Interface)
	SetRESTMapper(meta.RESTMapper)
	SetDynamicClient(dynamic.Interface)
	SetDrainedNotification(<-chan struct{})
	SetUnconditionalAuthorizer(authorizer.UnconditionalAuthorizer)
	SetEnabled(bool)
	ValidateInitialization() error
}

func initialize(p initializable, cfg Config) error {
	p.SetExternalKubeInformerFactory(cfg.Informers)
	p.SetExternalKubeClientSet(cfg.Client)
	p.SetRESTMapper(cfg.Mapper)
	p.SetDynamicClient(cfg.Dynamic)
	p.SetDrainedNotification(cfg.Stop)
	p.SetUnconditionalAuthorizer(cfg.Authorizer)
	// Both are served by default in 1.37 (MutatingAdmissionPolicy is GA
	// since 1.36).
	p.SetEnabled(true)
	return p.ValidateInitialization()
}

// New builds both plugins; their informers are registered with
// cfg.Informers.
func New(cfg Config) (*Validating, *Mutating, error) {
	if cfg.Authorizer == nil {
		cfg.Authorizer = allowAll{}
	}
	v, err := validating.NewPlugin(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("validating admission policy: %w", err)
	}
	if err := initialize(v, cfg); err != nil {
		return nil, nil, fmt.Errorf("validating admission policy: %w", err)
	}
	m, err := mutating.NewPlugin(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("mutating admission policy: %w", err)
	}
	if err := initialize(m, cfg); err != nil {
		return nil, nil, fmt.Errorf("mutating admission policy: %w", err)
	}
	admreg := cfg.Informers.Admissionregistration().V1()
	vp, err := bridge.NewPresence(admreg.ValidatingAdmissionPolicies().Informer())
	if err != nil {
		return nil, nil, fmt.Errorf("validating admission policy: %w", err)
	}
	mp, err := bridge.NewPresence(admreg.MutatingAdmissionPolicies().Informer())
	if err != nil {
		return nil, nil, fmt.Errorf("mutating admission policy: %w", err)
	}
	return &Validating{v, vp}, &Mutating{m, mp}, nil
}

// Name is the plugin's name.
func (*Validating) Name() string { return ValidatingPluginName }

// Validate evaluates the bound validating policies that match the
// request.
func (v *Validating) Validate(ctx context.Context, a *admission.Attributes) error {
	if v.policies.None() {
		return nil
	}
	return bridge.Call(ctx, a, v.p, v.p.Validate)
}

// Name is the plugin's name.
func (*Mutating) Name() string { return MutatingPluginName }

// Admit applies the bound mutating policies that match the request to
// a.Object.
func (m *Mutating) Admit(ctx context.Context, a *admission.Attributes) error {
	if m.policies.None() {
		return nil
	}
	return bridge.Call(ctx, a, m.p, m.p.Admit)
}

// allowAll answers every authorizer check of a policy with allow, for a
// server that authorizes nothing.
type allowAll struct{}

func (allowAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}
