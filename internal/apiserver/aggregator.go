package apiserver

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/transport"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/orca-project/orca/internal/apiserver/openapi"
	"github.com/orca-project/orca/internal/registry/apiregistration"
)

// FrontProxy is how the server speaks for its users to extension API
// servers: a client certificate of its own, signed by a CA the extension
// servers trust to vouch for the user headers it sends (upstream's
// --proxy-client-cert-file and --requestheader-client-ca-file).
type FrontProxy struct {
	Client tls.Certificate
	// CAPEM is the front proxy CA; ClientCAPEM the CA of the cluster's
	// client certificates. Both are published in kube-system's
	// extension-apiserver-authentication ConfigMap, where extension
	// servers read them.
	CAPEM, ClientCAPEM []byte
	// AllowedNames are the common names a front proxy's certificate may
	// have.
	AllowedNames []string
}

var apiServicesGVR = apiregistrationv1.SchemeGroupVersion.WithResource("apiservices")

// automanagedLabel marks the APIServices the server keeps for the group
// versions it serves: "onstart" for built-in ones, "true" for those of
// CRDs, as upstream labels them.
const automanagedLabel = "kube-aggregator.kubernetes.io/automanaged"

// availabilityInterval is how often extension API servers are checked,
// as upstream's availability controller resyncs.
const availabilityInterval = 30 * time.Second

// remote is a group version served by an extension API server.
type remote struct {
	svc       *apiregistrationv1.APIService
	transport http.RoundTripper
	// available and discovery are what the last check found: whether the
	// server answered, and the resources it lists; openAPI is its
	// OpenAPI documents, for the server's to merge.
	available bool
	discovery *metav1.APIResourceList
	openAPI   openapi.Remote
}

// aggregation holds the remote group versions, replaced as a whole.
type aggregation struct {
	remotes atomic.Pointer[map[schema.GroupVersion]*remote]
	kick    chan struct{}
	// published identifies the documents last given to
	// OnRemoteOpenAPI; only the APIService loop touches it.
	published string
}

func (s *Server) remotes() map[schema.GroupVersion]*remote {
	if m := s.aggregation.remotes.Load(); m != nil {
		return *m
	}
	return nil
}

// serveAggregated proxies a request for a group version an APIService
// hands to an extension API server; it reports false for any other
// request.
func (s *Server) serveAggregated(w http.ResponseWriter, r *http.Request) bool {
	parts := splitPath(r.URL.Path)
	if len(parts) < 3 || parts[0] != "apis" {
		return false
	}
	rm, ok := s.remotes()[schema.GroupVersion{Group: parts[1], Version: parts[2]}]
	if !ok {
		return false
	}
	if !rm.available {
		proxyError(w, "service unavailable", http.StatusServiceUnavailable)
		return true
	}
	u, ok := UserFrom(r.Context())
	if !ok {
		proxyError(w, "missing user", http.StatusInternalServerError)
		return true
	}
	ref := rm.svc.Spec.Service
	loc, err := s.ResolveEndpoint(ref.Namespace, ref.Name, portOf(ref))
	if err != nil {
		s.log.Warn("extension API server unreachable", "apiservice", rm.svc.Name, "err", err)
		proxyError(w, "service unavailable", http.StatusServiceUnavailable)
		return true
	}
	loc.Path, loc.RawQuery = r.URL.Path, r.URL.RawQuery
	// The user travels in the front proxy's headers, never in the
	// caller's own credentials or impersonation requests.
	r = r.Clone(r.Context())
	for k := range r.Header {
		if strings.HasPrefix(k, "Impersonate-") || strings.HasPrefix(k, "X-Remote-") {
			r.Header.Del(k)
		}
	}
	rt := transport.NewAuthProxyRoundTripper(u.Name, u.UID, u.Groups, u.Extra, rm.transport)
	upgrade := httpstream.IsUpgradeRequest(r)
	if upgrade {
		transport.SetAuthProxyHeaders(r, u.Name, u.UID, u.Groups, u.Extra)
		w = hijackable(w)
	}
	h := proxy.NewUpgradeAwareHandler(loc, rt, true, upgrade, errorResponder{s})
	h.ServeHTTP(w, r)
	return true
}

// proxyError is upstream's plain-text answer when an extension API server
// cannot be reached.
func proxyError(w http.ResponseWriter, msg string, code int) {
	http.Error(w, msg, code)
}

func portOf(ref *apiregistrationv1.ServiceReference) int32 {
	if ref.Port != nil {
		return *ref.Port
	}
	return 443
}

// runAPIServices keeps what APIServices declare: an APIService for every
// group version the server serves itself, and for every other one a
// transport to its extension server, whose availability is checked on
// every change and every 30 seconds and written in its status.
func (s *Server) runAPIServices(ctx context.Context) {
	res := s.resources[apiServicesGVR]
	if res == nil || res.cache == nil {
		return
	}
	// An APIService, or the services and endpoints behind one, changing
	// is worth a look.
	for _, gvr := range []schema.GroupVersionResource{apiServicesGVR, servicesGVR, endpointSlicesGVR} {
		watched := s.resources[gvr]
		if watched == nil || watched.cache == nil {
			continue
		}
		go onChange(ctx, watched, s.kickAggregation)
	}
	tick := time.NewTicker(availabilityInterval)
	defer tick.Stop()
	for {
		s.syncAPIServices(ctx, res)
		select {
		case <-ctx.Done():
			return
		case <-s.aggregation.kick:
			// Changes come in bursts; one pass covers a burst.
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
			select {
			case <-s.aggregation.kick:
			default:
			}
		case <-tick.C:
		}
	}
}

// kickAggregation asks the APIService loop for a pass (an APIService or
// the served group versions changed).
func (s *Server) kickAggregation() {
	select {
	case s.aggregation.kick <- struct{}{}:
	default:
	}
}

// registerLocalAPIServices makes one pass over the local APIServices
// before the server reports ready.
func (s *Server) registerLocalAPIServices(ctx context.Context) {
	if res := s.resources[apiServicesGVR]; res != nil && res.cache != nil {
		s.syncLocalAPIServices(ctx, res, cachedAPIServices(res))
	}
}

func cachedAPIServices(res *resource) map[string]*apiregistrationv1.APIService {
	items, _ := res.cache.List("", nil)
	existing := map[string]*apiregistrationv1.APIService{}
	for _, o := range items {
		svc := o.(*apiregistrationv1.APIService)
		existing[svc.Name] = svc
	}
	return existing
}

func (s *Server) syncAPIServices(ctx context.Context, res *resource) {
	existing := cachedAPIServices(res)
	s.syncLocalAPIServices(ctx, res, existing)
	old := s.remotes()
	next := map[schema.GroupVersion]*remote{}
	for _, svc := range existing {
		if svc.Spec.Service == nil {
			continue
		}
		gv := schema.GroupVersion{Group: svc.Spec.Group, Version: svc.Spec.Version}
		rm := &remote{svc: svc}
		if prev, ok := old[gv]; ok && sameBackend(prev.svc, svc) {
			rm.transport, rm.available, rm.discovery, rm.openAPI = prev.transport, prev.available, prev.discovery, prev.openAPI
		}
		if rm.transport == nil {
			rt, err := s.remoteTransport(svc)
			if err != nil {
				s.log.Warn("apiservice", "name", svc.Name, "err", err)
				continue
			}
			rm.transport = rt
		}
		next[gv] = rm
	}
	s.aggregation.remotes.Store(&next)
	for _, rm := range next {
		cond, discovery := s.checkAvailability(ctx, rm)
		rm.available = cond.Status == apiregistrationv1.ConditionTrue
		if discovery != nil {
			rm.discovery = discovery
			rm.openAPI = s.remoteOpenAPI(ctx, rm)
		}
		if err := s.setAPIServiceCondition(ctx, res, rm.svc, cond); err != nil {
			s.log.Warn("apiservice status", "name", rm.svc.Name, "err", err)
		}
	}
	s.publishRemoteOpenAPI(next)
}

// remoteOpenAPI fetches an extension server's OpenAPI v2 document and its
// v3 document of the group version; what it cannot fetch stays empty.
func (s *Server) remoteOpenAPI(ctx context.Context, rm *remote) openapi.Remote {
	out := openapi.Remote{Group: rm.svc.Spec.Group, Version: rm.svc.Spec.Version}
	ref := rm.svc.Spec.Service
	base, err := s.ResolveEndpoint(ref.Namespace, ref.Name, portOf(ref))
	if err != nil {
		return out
	}
	fetch := func(path string) []byte {
		u := *base
		u.Path, u.RawQuery, _ = strings.Cut(path, "?")
		body, err := s.fetchRemote(ctx, rm, u.String())
		if err != nil {
			return nil
		}
		return body
	}
	out.V2 = fetch("/openapi/v2")
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if data := fetch("/openapi/v3"); data != nil && json.Unmarshal(data, &index) == nil {
		if p, ok := index.Paths["apis/"+out.Group+"/"+out.Version]; ok {
			out.V3 = fetch(p.ServerRelativeURL)
		}
	}
	return out
}

// fetchRemote GETs a JSON document from an extension server as the
// server itself, within five seconds.
func (s *Server) fetchRemote(ctx context.Context, rm *remote, loc string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	rt := transport.NewAuthProxyRoundTripper("system:kube-aggregator", "", []string{"system:masters"}, nil, rm.transport)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return nil, fmt.Errorf("bad status from %s: %d", loc, resp.StatusCode)
	}
	return body, nil
}

// publishRemoteOpenAPI hands the available extension servers' documents
// to OnRemoteOpenAPI when they changed.
func (s *Server) publishRemoteOpenAPI(remotes map[schema.GroupVersion]*remote) {
	if s.cfg.OnRemoteOpenAPI == nil {
		return
	}
	var docs []openapi.Remote
	h := sha256.New()
	for _, rm := range remotes {
		if !rm.available {
			continue
		}
		docs = append(docs, rm.openAPI)
	}
	sort.Slice(docs, func(i, j int) bool {
		return docs[i].Group+"/"+docs[i].Version < docs[j].Group+"/"+docs[j].Version
	})
	for _, d := range docs {
		fmt.Fprintf(h, "%s/%s %x %x;", d.Group, d.Version, sha256.Sum256(d.V2), sha256.Sum256(d.V3))
	}
	key := string(h.Sum(nil))
	if key == s.aggregation.published {
		return
	}
	s.aggregation.published = key
	s.cfg.OnRemoteOpenAPI(docs)
}

// sameBackend reports whether two versions of an APIService reach their
// server the same way.
func sameBackend(a, b *apiregistrationv1.APIService) bool {
	return fmt.Sprint(a.Spec.Service, string(a.Spec.CABundle), a.Spec.InsecureSkipTLSVerify) ==
		fmt.Sprint(b.Spec.Service, string(b.Spec.CABundle), b.Spec.InsecureSkipTLSVerify)
}

// remoteTransport reaches an extension server over TLS, verified with the
// APIService's caBundle (or not at all, if it says so) for the name
// <service>.<namespace>.svc, presenting the front proxy's certificate.
func (s *Server) remoteTransport(svc *apiregistrationv1.APIService) (http.RoundTripper, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: svc.Spec.Service.Name + "." + svc.Spec.Service.Namespace + ".svc"}
	if svc.Spec.InsecureSkipTLSVerify {
		cfg.InsecureSkipVerify = true
	} else {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(svc.Spec.CABundle) {
			return nil, fmt.Errorf("spec.caBundle holds no certificate")
		}
		cfg.RootCAs = pool
	}
	if fp := s.cfg.FrontProxy; fp != nil {
		cfg.Certificates = []tls.Certificate{fp.Client}
	}
	return &http.Transport{
		TLSClientConfig:     cfg,
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 20,
	}, nil
}

// checkAvailability is upstream's availability check: the service
// exists and has the port, an endpoint serves it, and the group version's
// discovery answers within five seconds.
func (s *Server) checkAvailability(ctx context.Context, rm *remote) (apiregistrationv1.APIServiceCondition, *metav1.APIResourceList) {
	ref := rm.svc.Spec.Service
	unavailable := func(reason, msg string) apiregistrationv1.APIServiceCondition {
		return apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionFalse, Reason: reason, Message: msg}
	}
	svcRes := s.resources[servicesGVR]
	obj, err := s.get(ctx, svcRes, ref.Namespace, ref.Name, "0")
	if err != nil {
		return unavailable("ServiceNotFound", fmt.Sprintf("service/%s in %q is not present", ref.Name, ref.Namespace)), nil
	}
	svc := obj.(*corev1.Service)
	port := portOf(ref)
	found := false
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			found = true
		}
	}
	if !found {
		return unavailable("ServicePortError", fmt.Sprintf("service/%s in %q is not listening on port %d", ref.Name, ref.Namespace, port)), nil
	}
	loc, err := s.ResolveEndpoint(ref.Namespace, ref.Name, port)
	if err != nil {
		return unavailable("MissingEndpoints", fmt.Sprintf("endpoints for service/%s in %q have no addresses with port name %q", ref.Name, ref.Namespace, portName(svc, port))), nil
	}
	loc.Path = "/apis/" + rm.svc.Spec.Group + "/" + rm.svc.Spec.Version
	discovery, err := s.discover(ctx, rm, loc)
	if err != nil {
		return unavailable("FailedDiscoveryCheck", fmt.Sprintf("failing or missing response from %s: %v", loc, err)), nil
	}
	return apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue, Reason: "Passed", Message: "all checks passed"}, discovery
}

func portName(svc *corev1.Service, port int32) string {
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			return p.Name
		}
	}
	return ""
}

// discover reads an extension server's discovery of one group version, as
// the server itself (system:kube-aggregator, as upstream's check does).
func (s *Server) discover(ctx context.Context, rm *remote, loc *url.URL) (*metav1.APIResourceList, error) {
	body, err := s.fetchRemote(ctx, rm, loc.String())
	if err != nil {
		return nil, err
	}
	list := &metav1.APIResourceList{}
	if err := json.Unmarshal(body, list); err != nil {
		return nil, fmt.Errorf("decode discovery from %s: %w", loc, err)
	}
	return list, nil
}

// setAPIServiceCondition writes an APIService's Available condition when
// it changed (status aside from time).
func (s *Server) setAPIServiceCondition(ctx context.Context, res *resource, svc *apiregistrationv1.APIService, cond apiregistrationv1.APIServiceCondition) error {
	for _, c := range svc.Status.Conditions {
		if c.Type == cond.Type && c.Status == cond.Status && c.Reason == cond.Reason && c.Message == cond.Message {
			return nil
		}
	}
	_, err := s.update(ctx, res, "", svc.Name, false, func(cur runtime.Object) (runtime.Object, error) {
		c := cur.(*apiregistrationv1.APIService)
		if c.UID != svc.UID {
			return nil, fmt.Errorf("apiservice %s was replaced", svc.Name)
		}
		apiregistration.SetCondition(c, cond)
		c.SetGroupVersionKind(res.GroupVersionKind())
		return c, nil
	})
	return err
}

// syncLocalAPIServices creates an APIService for every group version the
// server serves itself and removes those of CRD versions no longer
// served, as upstream's autoregistration does.
func (s *Server) syncLocalAPIServices(ctx context.Context, res *resource, existing map[string]*apiregistrationv1.APIService) {
	want := map[string]*apiregistrationv1.APIService{}
	for _, r := range s.served() {
		gv := r.GroupVersion()
		name := gv.Version + "." + gv.Group
		if _, ok := want[name]; ok {
			continue
		}
		group, ver, builtin := localPriority(gv)
		label := "true"
		if builtin {
			label = "onstart"
		}
		want[name] = &apiregistrationv1.APIService{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{automanagedLabel: label}},
			Spec: apiregistrationv1.APIServiceSpec{
				Group: gv.Group, Version: gv.Version, GroupPriorityMinimum: group, VersionPriority: ver,
			},
		}
	}
	for name, svc := range want {
		if _, ok := existing[name]; ok {
			continue
		}
		if _, err := s.create(ctx, res, "", svc, false); err != nil && !apierrors.IsAlreadyExists(err) {
			s.log.Warn("local apiservice", "name", name, "err", err)
		}
	}
	for name, svc := range existing {
		if _, ok := want[name]; ok || svc.Spec.Service != nil || svc.Labels[automanagedLabel] != "true" {
			continue
		}
		if _, _, err := s.delete(ctx, res, "", name, &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			s.log.Warn("local apiservice", "name", name, "err", err)
		}
	}
}

// localPriority is upstream's priority of a built-in group version
// (kube-apiserver's table); a CRD's group versions get 1000 and 100, as
// upstream registers them.
func localPriority(gv schema.GroupVersion) (group, ver int32, builtin bool) {
	if p, ok := builtinPriorities[gv]; ok {
		return p[0], p[1], true
	}
	return 1000, 100, false
}

var builtinPriorities = map[schema.GroupVersion][2]int32{
	{Group: "", Version: "v1"}:                             {18000, 1},
	{Group: "events.k8s.io", Version: "v1"}:                {17750, 15},
	{Group: "apps", Version: "v1"}:                         {17800, 15},
	{Group: "authentication.k8s.io", Version: "v1"}:        {17700, 15},
	{Group: "authorization.k8s.io", Version: "v1"}:         {17600, 15},
	{Group: "autoscaling", Version: "v1"}:                  {17500, 15},
	{Group: "autoscaling", Version: "v2"}:                  {17500, 30},
	{Group: "batch", Version: "v1"}:                        {17400, 15},
	{Group: "certificates.k8s.io", Version: "v1"}:          {17300, 15},
	{Group: "networking.k8s.io", Version: "v1"}:            {17200, 15},
	{Group: "policy", Version: "v1"}:                       {17100, 15},
	{Group: "rbac.authorization.k8s.io", Version: "v1"}:    {17000, 15},
	{Group: "storage.k8s.io", Version: "v1"}:               {16800, 15},
	{Group: "apiextensions.k8s.io", Version: "v1"}:         {16700, 15},
	{Group: "admissionregistration.k8s.io", Version: "v1"}: {16700, 15},
	{Group: "apiregistration.k8s.io", Version: "v1"}:       {18000, 15},
	{Group: "scheduling.k8s.io", Version: "v1"}:            {16600, 15},
	{Group: "coordination.k8s.io", Version: "v1"}:          {16500, 15},
	{Group: "node.k8s.io", Version: "v1"}:                  {16300, 15},
	{Group: "discovery.k8s.io", Version: "v1"}:             {16200, 15},
	{Group: "resource.k8s.io", Version: "v1"}:              {16200, 21},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}: {16100, 21},
	{Group: "storagemigration.k8s.io", Version: "v1"}:      {15800, 15},
}

// remoteGroups lists the extension servers' groups for discovery: each
// with its versions by priority, highest first, as upstream sorts them.
func (s *Server) remoteGroups() []metav1.APIGroup {
	byGroup := map[string][]*apiregistrationv1.APIService{}
	for _, rm := range s.remotes() {
		byGroup[rm.svc.Spec.Group] = append(byGroup[rm.svc.Spec.Group], rm.svc)
	}
	names := make([]string, 0, len(byGroup))
	for g := range byGroup {
		names = append(names, g)
	}
	sort.Strings(names)
	var out []metav1.APIGroup
	for _, g := range names {
		svcs := byGroup[g]
		sort.Slice(svcs, func(i, j int) bool {
			if svcs[i].Spec.VersionPriority != svcs[j].Spec.VersionPriority {
				return svcs[i].Spec.VersionPriority > svcs[j].Spec.VersionPriority
			}
			return version.CompareKubeAwareVersionStrings(svcs[i].Spec.Version, svcs[j].Spec.Version) > 0
		})
		grp := metav1.APIGroup{Name: g}
		for _, svc := range svcs {
			grp.Versions = append(grp.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g + "/" + svc.Spec.Version, Version: svc.Spec.Version})
		}
		grp.PreferredVersion = grp.Versions[0]
		out = append(out, grp)
	}
	return out
}
