package server

import (
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/orca-project/orca/internal/admission"
	certadmission "github.com/orca-project/orca/internal/admission/certificates"
	"github.com/orca-project/orca/internal/admission/defaulttolerationseconds"
	"github.com/orca-project/orca/internal/admission/limitranger"
	"github.com/orca-project/orca/internal/admission/namespacelifecycle"
	"github.com/orca-project/orca/internal/admission/noderestriction"
	"github.com/orca-project/orca/internal/admission/podresize"
	"github.com/orca-project/orca/internal/admission/podsecurity"
	"github.com/orca-project/orca/internal/admission/priority"
	"github.com/orca-project/orca/internal/admission/resourcequota"
	"github.com/orca-project/orca/internal/admission/runtimeclass"
	"github.com/orca-project/orca/internal/admission/serviceaccount"
	"github.com/orca-project/orca/internal/auth/rbac"
)

// admissionPlugins keeps the server's storage for start-up work that
// goes through it (the built-in priority classes).
type admissionPlugins struct {
	objects admission.Objects
	// authz, when it enforces RBAC, also checks role and binding writes
	// for escalation.
	authz *authz
	// podSecurity holds the PodSecurity defaults and exemptions
	// (upstream's defaults when nil).
	podSecurity *podsecurity.Checker
}

// loadAdmissionConfig reads --admission-control-config-file and builds
// what the plugins take from it, so that a bad file stops the server
// before anything starts.
func loadAdmissionConfig(path string) (*podsecurity.Checker, error) {
	cfg, err := admission.LoadConfiguration(path)
	if err != nil {
		return nil, err
	}
	data, err := cfg.For(podsecurity.PluginName)
	if err != nil {
		return nil, err
	}
	psa, err := podsecurity.ParseConfig(data)
	if err != nil {
		return nil, err
	}
	return podsecurity.NewChecker(psa)
}

// chain builds the admission chain in upstream's order: namespace
// lifecycle first so nothing else works for a dying namespace, PodSecurity
// after the plugins that fill in a pod's service account, quota last so
// that only requests every other plugin accepted are charged.
func (p *admissionPlugins) chain(objects admission.Objects) admission.Chain {
	p.objects = objects
	chain := admission.Chain{
		namespacelifecycle.New(objects),
		limitranger.New(objects),
		serviceaccount.New(objects),
		noderestriction.New(),
	}
	if p.authz != nil && p.authz.enforcesRBAC() {
		// Upstream checks escalation in the RBAC registry; here it is a
		// validating step with the same knowledge of object and user.
		chain = append(chain, rbac.NewEscalationCheck(p.authz.rbac, p.authz.chain))
	}
	if p.podSecurity == nil {
		// Upstream's defaults (privileged everywhere) cannot fail.
		p.podSecurity, _ = podsecurity.NewChecker(nil)
	}
	return append(chain,
		podsecurity.New(objects, p.podSecurity),
		priority.New(objects),
		defaulttolerationseconds.New(),
		runtimeclass.New(objects),
		certadmission.NewNodePodCertificates(objects),
		certadmission.NewApproval(p.authorizer()),
		certadmission.NewSigning(p.authorizer()),
		certadmission.NewAttest(p.authorizer()),
		certadmission.SubjectRestriction{},
		certadmission.NewPodCertificateSigning(p.authorizer()),
		podresize.New(objects),
		resourcequota.New(objects),
	)
}

// bootstrap creates what the plugins rely on; it is idempotent and runs
// on every start, once the API server is ready.
func (p *admissionPlugins) bootstrap(ctx context.Context) error {
	if p.objects == nil {
		return nil
	}
	if err := priority.Bootstrap(ctx, p.objects); err != nil {
		return fmt.Errorf("admission bootstrap: %w", err)
	}
	return nil
}

// authorizer is what the certificate plugins ask about signers: the
// server's authorizers, or nil (everything allowed) when the server has
// none.
func (p *admissionPlugins) authorizer() authorizer.UnconditionalAuthorizer {
	if p.authz == nil {
		return nil
	}
	return p.authz.chain
}
