package apiserver

import (
	"context"
	"net/http"
	"net/http/pprof"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/json"

	"github.com/orca-project/orca/internal/audit"
)

// User is an authenticated caller.
type User struct {
	Name   string
	UID    string
	Groups []string
	// Extra holds what the authenticator adds (a service-account token's
	// pod and node), as upstream's user.Info.
	Extra map[string][]string
}

// Authenticator identifies the caller of a request, or reports ok=false.
type Authenticator interface {
	Authenticate(r *http.Request) (User, bool)
}

// ClientCertAuthenticator trusts client certificates signed by the
// cluster CA: the common name is the user and the organizations are its
// groups, as upstream's x509 authenticator reads them. The TLS handshake
// (ClientAuth VerifyClientCertIfGiven with the CA pool) has already
// verified the chain once per connection; verifying again on every request
// cost a third of the server's CPU.
type ClientCertAuthenticator struct{}

// Authenticate implements Authenticator.
func (ClientCertAuthenticator) Authenticate(r *http.Request) (User, bool) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return User{}, false
	}
	leaf := r.TLS.VerifiedChains[0][0]
	return User{Name: leaf.Subject.CommonName, Groups: leaf.Subject.Organization}, true
}

// UnionAuthenticator tries each authenticator in turn and takes the
// first identity, adding system:authenticated as upstream's authenticated
// group adder does.
type UnionAuthenticator []Authenticator

// Authenticate implements Authenticator.
func (u UnionAuthenticator) Authenticate(r *http.Request) (User, bool) {
	for _, a := range u {
		if a == nil {
			continue
		}
		if user, ok := a.Authenticate(r); ok {
			if !slices.Contains(user.Groups, AllAuthenticated) {
				user.Groups = append(slices.Clip(user.Groups), AllAuthenticated)
			}
			return user, true
		}
	}
	return User{}, false
}

// AllAuthenticated is the group of every authenticated user.
const AllAuthenticated = "system:authenticated"

type userKey struct{}

// UserFrom returns the caller of a request's context: the user it
// impersonates, else the one authenticated.
func UserFrom(ctx context.Context) (User, bool) {
	if u, ok := ctx.Value(userKey{}).(User); ok {
		return u, true
	}
	if st, ok := stateOf(ctx); ok && st.hasUser {
		return st.user, true
	}
	return User{}, false
}

// public paths need no identity, as upstream's system:public-info-viewer
// role grants to everyone.
func isPublic(path string) bool {
	switch path {
	case "/healthz", "/livez", "/readyz", "/version", "/version/":
		return true
	}
	return strings.HasPrefix(path, "/healthz/") || strings.HasPrefix(path, "/livez/") || strings.HasPrefix(path, "/readyz/")
}

// statusRecorder remembers the response code for metrics.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// buildHandler assembles the filter chain in upstream's order: request
// attributes and audit ID, panic recovery, authentication (client
// certificates, then bearer tokens), audit, impersonation, API Priority
// and Fairness or else the max-in-flight limit, authorization, then
// routing with its metrics.
func (s *Server) buildHandler() http.Handler {
	metricsHandler := promhttp.HandlerFor(s.cfg.Metrics, promhttp.HandlerOpts{})
	// The configured authenticator (client certificates) goes first, then
	// the service-account tokens the server issues, then bootstrap tokens.
	authn := s.cfg.Authenticator
	if authn != nil {
		union := UnionAuthenticator{authn}
		if s.tokens != nil {
			union = append(union, s.newTokenAuthenticator())
		}
		authn = append(union, &bootstrapAuthenticator{objects: coreObjects{s}, now: time.Now, log: s.log})
	}
	route := func(w http.ResponseWriter, r *http.Request) {
		if s.serveAggregated(w, r) {
			return
		}
		if st := stateFrom(r.Context()); st.resource {
			ri := st.info
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w}
			s.serveResource(rec, r, ri)
			if rec.code == 0 {
				rec.code = http.StatusOK
			}
			verb, scope := verbLabel(ri, r), scopeLabel(ri)
			if ri.Verb != "watch" {
				s.metrics.latency.WithLabelValues(verb, ri.Group, ri.Version, ri.Resource, ri.Subresource, scope).Observe(time.Since(start).Seconds())
			}
			s.metrics.requests.WithLabelValues(verb, ri.Group, ri.Version, ri.Resource, ri.Subresource, scope, strconv.Itoa(rec.code)).Inc()
			return
		}
		if s.serveDiscovery(w, r) || s.serveHealth(w, r) || s.serveOIDC(w, r) {
			return
		}
		switch {
		case r.URL.Path == "/version" || r.URL.Path == "/version/":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(s.cfg.Version)
			return
		case r.URL.Path == "/metrics":
			metricsHandler.ServeHTTP(w, r)
			return
		case strings.HasPrefix(r.URL.Path, "/debug/pprof"):
			// Profiling is on, as upstream's --profiling defaults to true;
			// like everything but health and version it needs a client
			// certificate.
			servePprof(w, r)
			return
		}
		for prefix, h := range s.cfg.Extra {
			if r.URL.Path == prefix || strings.HasPrefix(r.URL.Path, prefix+"/") {
				h.ServeHTTP(w, r)
				return
			}
		}
		s.writeError(w, r, errNotFoundPath())
	}
	var h http.Handler = http.HandlerFunc(route)
	if authn != nil {
		h = s.withAuthorization(h)
	}
	if s.cfg.FlowControl != nil {
		h = s.withPriorityAndFairness(h)
	} else {
		h = s.withMaxInFlight(h)
	}
	unauthorized := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, apierrors.NewUnauthorized("Unauthorized"))
	}))
	if authn != nil {
		h = s.withImpersonation(h)
	}
	if a := s.cfg.Auditor; a != nil {
		h = a.Handler(h, s.describe)
		unauthorized = a.FailedAuthentication(unauthorized, s.describe)
	}
	if authn != nil {
		h = s.withAuthentication(h, authn, unauthorized)
	}
	h = s.withRecovery(h)
	h = s.withRequestStart(h)
	if len(s.cfg.Public) > 0 {
		// Public files (the web console's) are served as a sign-in page
		// is; what the page then asks of the API goes through the whole
		// chain.
		api := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for prefix, public := range s.cfg.Public {
				if r.URL.Path == prefix || strings.HasPrefix(r.URL.Path, prefix+"/") {
					public.ServeHTTP(w, r)
					return
				}
			}
			api.ServeHTTP(w, r)
		})
	}
	return h
}

// withRecovery answers a handler's panic with a 500, logged with its
// stack.
func (s *Server) withRecovery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				s.writeError(w, r, apierrors.NewInternalError(errPanic))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// withAuthentication puts the caller in the request's context, or
// answers with unauthorized.
func (s *Server) withAuthentication(next http.Handler, authn Authenticator, unauthorized http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := websocketBearer(r); err != nil {
			s.log.Debug("WebSocket bearer token rejected", "path", r.URL.Path, "err", err)
			unauthorized.ServeHTTP(w, r)
			return
		}
		u, ok := authn.Authenticate(r)
		switch {
		case ok:
		case s.cfg.Anonymous && r.Header.Get("Authorization") == "":
			// No credentials at all: the anonymous user, whom
			// authorization then allows only the public paths.
			u = Anonymous
		case isPublic(r.URL.Path) && s.cfg.Authorizer == nil:
			// Without an authorizer, health and version stay open.
		default:
			// Credentials that do not hold are refused as such,
			// not downgraded to anonymous.
			unauthorized.ServeHTTP(w, r)
			return
		}
		// As upstream: the credentials have done their work, and must
		// not travel on with a request the server proxies (to a pod, a
		// node or an extension API server).
		r.Header.Del("Authorization")
		if st, ok := stateOf(r.Context()); ok {
			st.user, st.hasUser = u, true
		} else {
			r = r.WithContext(context.WithValue(r.Context(), userKey{}, u))
		}
		next.ServeHTTP(w, r)
	})
}

// withImpersonation lets the request continue as the user its
// Impersonate-* headers name, when the caller may impersonate them.
func (s *Server) withImpersonation(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := UserFrom(r.Context())
		target, impersonating, err := s.impersonate(r, u)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if impersonating {
			ctx := context.WithValue(r.Context(), impersonatorKey{}, u)
			audit.LogImpersonatedUser(ctx, *userInfo(target))
			r = r.WithContext(context.WithValue(ctx, userKey{}, target))
		}
		next.ServeHTTP(w, r)
	})
}

// withAuthorization refuses what the caller may not do.
func (s *Server) withAuthorization(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := UserFrom(r.Context())
		if err := s.authorize(r, u); err != nil {
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// verbLabel is the verb as upstream's request metrics name it: the HTTP
// verb its handlers are installed under (POST for a create, PUT for an
// update), APPLY for a server-side apply patch, CONNECT for the
// streaming subresources, WATCH for every watch.
func verbLabel(ri requestInfo, r *http.Request) string {
	switch ri.Subresource {
	case "exec", "attach", "portforward", "proxy":
		return "CONNECT"
	}
	switch ri.Verb {
	case "create":
		return "POST"
	case "update":
		return "PUT"
	case "patch":
		if r.Header.Get("Content-Type") == string(types.ApplyPatchType) {
			return "APPLY"
		}
		return "PATCH"
	case "":
		return r.Method
	}
	return strings.ToUpper(ri.Verb)
}

type panicError struct{}

func (panicError) Error() string { return "the server hit an internal error handling this request" }

var errPanic = panicError{}

func servePprof(w http.ResponseWriter, r *http.Request) {
	switch strings.TrimPrefix(r.URL.Path, "/debug/pprof/") {
	case "cmdline":
		pprof.Cmdline(w, r)
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		pprof.Index(w, r)
	}
}
