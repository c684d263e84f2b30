package server

import (
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/orca-project/orca/internal/admission"
	certadmission "github.com/orca-project/orca/internal/admission/certificates"
	"github.com/orca-project/orca/internal/admission/defaultingressclass"
	"github.com/orca-project/orca/internal/admission/defaultstorageclass"
	"github.com/orca-project/orca/internal/admission/defaulttolerationseconds"
	"github.com/orca-project/orca/internal/admission/limitranger"
	"github.com/orca-project/orca/internal/admission/namespacelifecycle"
	"github.com/orca-project/orca/internal/admission/noderestriction"
	"github.com/orca-project/orca/internal/admission/podresize"
	"github.com/orca-project/orca/internal/admission/podsecurity"
	"github.com/orca-project/orca/internal/admission/policy"
	"github.com/orca-project/orca/internal/admission/priority"
	"github.com/orca-project/orca/internal/admission/pvcresize"
	"github.com/orca-project/orca/internal/admission/resourcequota"
	"github.com/orca-project/orca/internal/admission/runtimeclass"
	"github.com/orca-project/orca/internal/admission/serviceaccount"
	"github.com/orca-project/orca/internal/admission/storageprotection"
	"github.com/orca-project/orca/internal/admission/webhook"
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
	// loopback reaches the server as itself, for the plugins that watch
	// their configuration (admission webhooks); informers is theirs,
	// started once the server serves.
	loopback  *rest.Config
	informers informers.SharedInformerFactory
	stop      chan struct{}
	// err is what went wrong building the chain.
	err error
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
		noderestriction.New(objects),
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
	chain = append(chain,
		podsecurity.New(objects, p.podSecurity),
		priority.New(objects),
		defaulttolerationseconds.New(),
		defaultstorageclass.New(objects),
		storageprotection.New(),
		pvcresize.New(objects),
		runtimeclass.New(objects),
		defaultingressclass.New(objects),
		certadmission.NewNodePodCertificates(objects),
		certadmission.NewApproval(p.authorizer()),
		certadmission.NewSigning(p.authorizer()),
		certadmission.NewAttest(p.authorizer()),
		certadmission.SubjectRestriction{},
		certadmission.NewPodCertificateSigning(p.authorizer()),
		podresize.New(objects),
	)
	if p.loopback != nil {
		extensions, err := p.extensions(objects)
		if err != nil {
			p.err = err
		}
		chain = append(chain, extensions...)
	}
	return append(chain, resourcequota.New(objects))
}

// extensions builds the plugins users extend admission with, in
// upstream's order: mutating policies, mutating webhooks, validating
// policies, validating webhooks. They watch their configuration through
// a loopback client, with informers of their own.
func (p *admissionPlugins) extensions(objects admission.Objects) ([]admission.Plugin, error) {
	client, err := kubernetes.NewForConfig(p.loopback)
	if err != nil {
		return nil, fmt.Errorf("admission extensions: %w", err)
	}
	dyn, err := dynamic.NewForConfig(p.loopback)
	if err != nil {
		return nil, fmt.Errorf("admission extensions: %w", err)
	}
	resolver, ok := objects.(webhookutil.ServiceResolver)
	if !ok {
		return nil, fmt.Errorf("admission webhooks: the server resolves no services")
	}
	p.informers = informers.NewSharedInformerFactory(client, 0)
	p.stop = make(chan struct{})
	mutatingHooks, validatingHooks, err := webhook.New(webhook.Config{Client: client, Informers: p.informers, Resolver: resolver})
	if err != nil {
		return nil, err
	}
	validatingPolicies, mutatingPolicies, err := policy.New(policy.Config{
		Client: client, Dynamic: dyn, Informers: p.informers,
		Mapper:     restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery())),
		Authorizer: p.authorizer(),
		Stop:       p.stop,
	})
	if err != nil {
		return nil, err
	}
	return []admission.Plugin{mutatingPolicies, mutatingHooks, validatingPolicies, validatingHooks}, nil
}

// start runs what the plugins watch until ctx ends; it is called once
// the server serves, which their informers list through.
func (p *admissionPlugins) start(ctx context.Context) {
	if p.informers == nil {
		return
	}
	p.informers.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		close(p.stop)
	}()
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
