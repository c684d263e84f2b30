// Package apiserver serves the Kubernetes REST API over Orca's storage:
// discovery, the verbs on every registered resource, watch, patch, tables,
// health and metrics. A request passes authentication, authorization and
// admission before it reaches storage, as upstream's request path does.
package apiserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/util/webhook"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/apiserver/openapi"
	"github.com/orca-project/orca/internal/audit"
	"github.com/orca-project/orca/internal/flowcontrol"
	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/storage"
	"github.com/orca-project/orca/internal/storage/cache"
)

// Config wires a Server.
type Config struct {
	Store     *storage.Store
	Resources []*registry.Resource
	Version   version.Info
	Log       *slog.Logger
	// Metrics is where the server registers its Prometheus collectors.
	Metrics *prometheus.Registry
	// Authenticator identifies the caller; nil lets every request through
	// (tests of the handler alone).
	Authenticator Authenticator
	// Authorizer decides what an authenticated caller may do; nil allows
	// everything.
	Authorizer Authorizer
	// RuleResolver lists a user's rules for SelfSubjectRulesReview (kubectl
	// auth can-i --list); nil answers that the list is incomplete.
	RuleResolver authorizer.RuleResolver
	// Anonymous lets requests without credentials through as
	// system:anonymous (upstream's --anonymous-auth); the authorizer then
	// decides. Without it they get 401.
	Anonymous bool
	// PodExplanations serves pods/explanation; nil answers 404.
	PodExplanations PodExplanations
	// Admission builds the admission chain once the server exists, so
	// that plugins can read and write through it. Nil admits everything.
	Admission func(admission.Objects) admission.Chain
	// Extra mounts further handlers (OpenAPI) behind authentication.
	Extra map[string]http.Handler
	// Public mounts handlers in front of authentication, by path prefix:
	// the web console's files, which hold no data of the cluster's.
	Public map[string]http.Handler
	// Transformers, when set, give each resource's stored values their
	// transformer (encryption at rest), chosen by the resource the values
	// are stored as.
	Transformers value.ResourceTransformers
	// MaxBodyBytes caps request bodies; 3 MiB as upstream when zero.
	MaxBodyBytes int64
	// CompactInterval is how often old etcd history is compacted; 5
	// minutes when zero, negative disables compaction.
	CompactInterval time.Duration
	// Allocator assigns service cluster IPs and node ports; nil assigns
	// nothing.
	Allocator Allocator
	// KubernetesService, when set, is the `kubernetes` Service in default
	// that start-up creates and reconciles, with its endpoints.
	KubernetesService *KubernetesService
	// ServiceAccountTokens, when set, serves serviceaccounts/token and
	// accepts the tokens it issues as bearer tokens.
	ServiceAccountTokens *ServiceAccountTokens
	// KubeletClientTLS is the API server's client certificate for the
	// kubelets (pods/log, exec, attach, portforward). Their serving
	// certificates are verified only if it sets RootCAs.
	KubeletClientTLS *tls.Config
	// Auditor, when set, audits requests (--audit-policy-file).
	Auditor *audit.Auditor
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight cap the
	// read-only and the mutating requests running at once, as upstream's
	// --max-requests-inflight and --max-mutating-requests-inflight; 0
	// leaves a kind unlimited.
	MaxRequestsInFlight, MaxMutatingRequestsInFlight int
	// FlowControl, when set, admits requests by API Priority and Fairness
	// in the max-in-flight limit's place (upstream's
	// --enable-priority-and-fairness); the two limits above are then
	// only its share of seats, which its creator has summed.
	FlowControl *flowcontrol.Dispatcher
	// Computed supplies the objects of Computed resources, by resource;
	// a Computed resource without a source lists nothing.
	Computed map[schema.GroupVersionResource]func(context.Context) []runtime.Object
	// FrontProxy, when set, lets the server proxy to extension API
	// servers as its users' front proxy (API aggregation).
	FrontProxy *FrontProxy
	// OnRemoteOpenAPI, when set, is given the OpenAPI documents of the
	// available extension servers whenever they change.
	OnRemoteOpenAPI func([]openapi.Remote)
	// OnCustomResources, when set, is told the established
	// CustomResourceDefinitions being served whenever they change (the
	// OpenAPI documents describe them).
	OnCustomResources func([]*apiextensionsv1.CustomResourceDefinition)
}

// Server is the API server's HTTP handler and the caches behind it.
type Server struct {
	cfg Config
	log *slog.Logger
	// endpointLease is the etcd lease this server's `kubernetes` endpoint
	// is held under (0: none yet).
	endpointLease atomic.Int64
	codecs        *codecs
	// watchEncodings are recent watch events' objects, encoded once for
	// all their watchers.
	watchEncodings *sharedEncodings
	resources      map[schema.GroupVersionResource]*resource
	ordered        []*resource
	metrics        *metrics
	handler        http.Handler
	admission      admission.Chain
	kubelet        *http.Transport
	tokens         *tokens
	// maxInFlight is nil without in-flight limits or with API Priority
	// and Fairness, which has apf instead.
	maxInFlight *maxInFlight
	apf         *apfGauges

	// podTransport reaches pods, service endpoints and nodes' other
	// ports for the proxy subresources.
	podTransport *http.Transport
	// proxyable says which addresses the proxy subresources may reach.
	proxyable func(net.IP) bool

	// custom are the resources CustomResourceDefinitions add.
	custom custom
	// aggregation are the group versions APIServices hand to extension
	// API servers.
	aggregation aggregation
	// conversion makes the converters of CRDs with conversion webhooks.
	conversion func() (*conversion.CRConverterFactory, error)

	readyMu sync.Mutex
	ready   bool
	checks  []healthCheck
}

// New builds a server; Run starts its caches.
func New(cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 3 * 1024 * 1024
	}
	if cfg.CompactInterval == 0 {
		cfg.CompactInterval = 5 * time.Minute
	}
	if cfg.Metrics == nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	s := &Server{
		cfg:            cfg,
		log:            cfg.Log,
		codecs:         newCodecs(),
		watchEncodings: newSharedEncodings(),
		resources:      map[schema.GroupVersionResource]*resource{},
		kubelet:        newKubeletTransport(cfg.KubeletClientTLS),
	}
	s.conversion = sync.OnceValues(func() (*conversion.CRConverterFactory, error) {
		return conversion.NewCRConverterFactory(s, webhook.NewDefaultAuthenticationInfoResolverWrapper(nil, nil, nil, nil))
	})
	s.aggregation.kick = make(chan struct{}, 1)
	s.podTransport = newPodTransport()
	s.proxyable = proxyableIP
	for _, rr := range cfg.Resources {
		gvr := rr.GroupVersionResource()
		if _, dup := s.resources[gvr]; dup {
			return nil, fmt.Errorf("resource %s registered twice", gvr)
		}
		r := s.bindResource(rr)
		s.resources[gvr] = r
		s.ordered = append(s.ordered, r)
	}
	tokens, err := newTokens(cfg.ServiceAccountTokens)
	if err != nil {
		return nil, err
	}
	s.tokens = tokens
	m, err := newMetrics(cfg.Metrics)
	if err != nil {
		return nil, err
	}
	s.metrics = m
	if cfg.FlowControl != nil {
		if s.apf, err = newAPFGauges(cfg.Metrics); err != nil {
			return nil, err
		}
	} else if s.maxInFlight, err = newMaxInFlight(cfg.MaxRequestsInFlight, cfg.MaxMutatingRequestsInFlight, cfg.Metrics); err != nil {
		return nil, err
	}
	s.checks = []healthCheck{
		{name: "ping", check: func(context.Context) error { return nil }},
		{name: "etcd", check: s.checkEtcd},
		{name: "informer-sync", readyOnly: true, check: s.checkCachesReady},
	}
	if cfg.Admission != nil {
		s.admission = cfg.Admission(objects{s})
	}
	s.handler = s.buildHandler()
	return s, nil
}

// bindResource binds a resource to the server's storage: its store, with the
// transformer of what it is stored as, and a watch cache unless it keeps
// no objects.
func (s *Server) bindResource(rr *registry.Resource) *resource {
	r := newResource(rr, s.cfg.Store)
	if s.cfg.Transformers != nil {
		r.store = r.store.WithTransformer(s.cfg.Transformers.TransformerForResource(r.storedGroupResource()))
	}
	if rr.CreateOnly || rr.Computed {
		return r
	}
	r.cache = cache.New(cache.Config{
		Client:      s.cfg.Store.Client(),
		Codec:       r.store.Codec(),
		Transformer: r.store.Transformer(),
		Prefix:      r.prefix,
		Name:        r.typ(),
		New:         rr.New,
		NewBookmark: r.newWithKind,
		Log:         s.log,
	})
	return r
}

// Handler returns the server's HTTP handler with its filter chain.
func (s *Server) Handler() http.Handler { return s.handler }

// Run starts the watch caches and the compactor, creates the default
// namespaces, and blocks until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	go s.maxInFlight.report(ctx)
	go s.apf.report(ctx)
	var wg sync.WaitGroup
	cached := s.cachedResources()
	for _, r := range cached {
		wg.Add(1)
		go func(r *resource) {
			defer wg.Done()
			r.cache.Run(ctx)
		}(r)
	}
	defer wg.Wait()
	for _, r := range cached {
		select {
		case <-r.cache.Ready():
		case <-ctx.Done():
			return nil
		}
	}
	s.startCustom(ctx)
	if err := s.bootstrap(ctx); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	// Custom resources are served from the start, as built-in ones.
	crds := s.startCRDs(ctx)
	// Ready waits for the built-in APIServices to be registered, as
	// upstream's readyz waits for autoregister-completion: a client that
	// saw the server ready sees no writes it did not make.
	s.registerLocalAPIServices(ctx)
	go s.runCRDs(ctx, crds)
	go s.runAPIServices(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.runEndpointReconciler(ctx)
	}()
	s.readyMu.Lock()
	s.ready = true
	s.readyMu.Unlock()
	s.log.Info("API server ready")
	if s.cfg.CompactInterval > 0 {
		go s.compactLoop(ctx)
	}
	<-ctx.Done()
	return nil
}

// cachedResources are the resources with objects to keep: all but the
// reviews.
func (s *Server) cachedResources() []*resource {
	var out []*resource
	for _, r := range s.ordered {
		if r.cache != nil {
			out = append(out, r)
		}
	}
	return out
}

// Ready reports whether the server has finished starting.
func (s *Server) Ready() bool {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	return s.ready
}

func (s *Server) lookup(ri requestInfo) (*resource, error) {
	gvr := schema.GroupVersionResource{Group: ri.Group, Version: ri.Version, Resource: ri.Resource}
	r, ok := s.resources[gvr]
	if !ok {
		r, ok = s.customResource(gvr)
	}
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, "")
	}
	return r, nil
}

// serveResource dispatches a resource request by verb and subresource.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, ri requestInfo) {
	res, err := s.lookup(ri)
	if err != nil {
		s.writeError(w, r, errNotFoundPath())
		return
	}
	if !res.Namespaced && ri.Namespace != "" {
		s.writeError(w, r, errNotFoundPath())
		return
	}
	if res.Namespaced && ri.Namespace == "" && !(ri.Verb == "list" || ri.Verb == "watch") {
		s.writeError(w, r, errNotFoundPath())
		return
	}
	if r, err = withFieldManager(r, ri); err != nil {
		s.writeError(w, r, err)
		return
	}
	if res.Deprecated != "" {
		admission.AddWarning(r.Context(), res.Deprecated)
	}
	if res.CreateOnly {
		s.serveReview(w, r, res, ri)
		return
	}
	if res.Computed {
		s.serveComputed(w, r, res, ri)
		return
	}
	switch ri.Subresource {
	case "":
		s.serveMain(w, r, res, ri)
	case "status":
		if !res.Status {
			s.writeError(w, r, errNotFoundPath())
			return
		}
		s.serveStatus(w, r, res, ri)
	case "scale":
		if res.Scale == nil {
			s.writeError(w, r, errNotFoundPath())
			return
		}
		s.serveScale(w, r, res, ri)
	case "binding":
		if res.Name != "pods" || ri.Verb != "create" {
			s.writeError(w, r, errNotFoundPath())
			return
		}
		s.serveBinding(w, r, res, ri)
	case "eviction":
		if res.Name != "pods" || res.Group != "" || ri.Verb != "create" {
			s.writeError(w, r, errNotFoundPath())
			return
		}
		s.serveEviction(w, r, res, ri)
	case "token":
		if res.Name != "serviceaccounts" || ri.Verb != "create" {
			s.writeError(w, r, errNotFoundPath())
			return
		}
		s.serveToken(w, r, res, ri)
	case "log", "exec", "attach", "portforward":
		if res.Name != "pods" || ri.Group != "" {
			s.writeError(w, r, errNotFoundPath())
			return
		}
		s.servePodConnect(w, r, res, ri)
	case "proxy":
		if !proxySubresourceOf(res.GroupVersionResource()) {
			s.writeError(w, r, errNotFoundPath())
			return
		}
		s.serveProxy(w, r, res, ri)
	case "explanation":
		if res.Name != "pods" || res.Group != "" || ri.Verb != "get" {
			s.writeError(w, r, errNotFoundPath())
			return
		}
		s.servePodExplanation(w, r, res, ri)
	case "finalize":
		if res.Name != "namespaces" || ri.Verb != "update" {
			s.writeError(w, r, errNotFoundPath())
			return
		}
		s.serveFinalize(w, r, res, ri)
	default:
		if _, ok := res.Subresources[ri.Subresource]; !ok {
			s.writeError(w, r, errNotFoundPath())
			return
		}
		s.serveStatus(w, r, res, ri)
	}
}

func (s *Server) serveMain(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	switch ri.Verb {
	case "get":
		s.handleGet(w, r, res, ri)
	case "list":
		s.handleList(w, r, res, ri)
	case "watch":
		s.handleWatch(w, r, res, ri)
	case "create":
		if ri.Name != "" {
			s.writeError(w, r, apierrors.NewMethodNotSupported(res.GroupResource(), "create"))
			return
		}
		s.handleCreate(w, r, res, ri)
	case "update":
		s.handleUpdate(w, r, res, ri)
	case "patch":
		s.handlePatch(w, r, res, ri)
	case "delete":
		s.handleDelete(w, r, res, ri)
	case "deletecollection":
		s.handleDeleteCollection(w, r, res, ri)
	default:
		s.writeError(w, r, apierrors.NewMethodNotSupported(res.GroupResource(), strings.ToLower(r.Method)))
	}
}

// errNotFoundPath is upstream's 404 for a path that names no resource.
func errNotFoundPath() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{},
	}}
}
