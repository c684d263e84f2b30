package apiserver

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	authnv1 "k8s.io/api/authentication/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/orca-project/orca/internal/audit"
)

// requestState is what the handler chain learns about a request once, at
// its start, for the filters and the router to share.
type requestState struct {
	info requestInfo
	// resource tells a request for an API object from one for a plain
	// path; info then holds only the lower-case method as its verb.
	resource bool
	// longRunning requests (watches, exec, logs...) have no in-flight slot
	// and get a ResponseStarted audit stage.
	longRunning bool
	// user is the authenticated caller (hasUser once known), before any
	// impersonation, which a context value records.
	user    User
	hasUser bool
	// manager is the field manager of a write, "" until known.
	manager string
}

type requestStateKey struct{}

// stateOf is the request's state, when the request has passed
// withRequestStart.
func stateOf(ctx context.Context) (*requestState, bool) {
	st, ok := ctx.Value(requestStateKey{}).(*requestState)
	return st, ok
}

func stateFrom(ctx context.Context) *requestState {
	if st, ok := stateOf(ctx); ok {
		return st
	}
	return &requestState{}
}

// withRequestStart is the outermost filter: it reads the request's
// attributes, gives it an audit ID (the client's Audit-ID header, else a
// new UUID, echoed back as upstream's WithAuditInit does) and, with
// auditing on, starts its audit record.
func (s *Server) withRequestStart(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received := time.Now()
		id := r.Header.Get(auditv1.HeaderAuditID)
		if id == "" {
			id = uuid.NewString()
		}
		if w.Header().Get(auditv1.HeaderAuditID) == "" {
			w.Header().Set(auditv1.HeaderAuditID, id)
		}
		st := &requestState{}
		st.info, st.resource = parseRequestInfo(r)
		if !st.resource {
			st.info = requestInfo{Verb: strings.ToLower(r.Method)}
		}
		st.longRunning = longRunning(r, st)
		// The filters after this one record what they learn (the caller,
		// the field manager) in st rather than each deriving a context:
		// every r.WithContext copies the request.
		ctx := withWarnings(context.WithValue(r.Context(), requestStateKey{}, st), w.Header())
		if s.cfg.Auditor != nil {
			ctx = s.cfg.Auditor.WithRequest(ctx, id, received)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// longRunning is kube-apiserver's check: watch and proxy verbs, the
// streaming subresources (every pods/log, followed or not), and
// profiling.
func longRunning(r *http.Request, st *requestState) bool {
	if !st.resource {
		return strings.HasPrefix(r.URL.Path, "/debug/pprof/")
	}
	switch st.info.Verb {
	case "watch", "proxy":
		return true
	}
	switch st.info.Subresource {
	case "attach", "exec", "proxy", "log", "portforward":
		return true
	}
	return false
}

// describe gives the auditor a request's policy attributes: the
// authenticated user (the audit filter runs before impersonation) and
// what the request asks for.
func (s *Server) describe(r *http.Request) (audit.Attributes, bool) {
	st := stateFrom(r.Context())
	a := audit.Attributes{Verb: st.info.Verb, ResourceRequest: st.resource, Path: r.URL.Path}
	if st.resource {
		ri := st.info
		a.APIGroup, a.APIVersion, a.Resource, a.Subresource, a.Namespace, a.Name = ri.Group, ri.Version, ri.Resource, ri.Subresource, ri.Namespace, ri.Name
	}
	if u, ok := UserFrom(r.Context()); ok && u.Name != "" {
		a.User = userInfo(u)
	}
	return a, st.longRunning
}

func userInfo(u User) *authnv1.UserInfo {
	info := &authnv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		info.Extra = map[string]authnv1.ExtraValue{}
		for k, v := range u.Extra {
			info.Extra[k] = v
		}
	}
	return info
}
