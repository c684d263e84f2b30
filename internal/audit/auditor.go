package audit

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Auditor applies a policy to requests and hands their events to a
// writer.
type Auditor struct {
	policy *Policy
	out    EventWriter
	log    *slog.Logger

	events    prometheus.Counter
	errors    *prometheus.CounterVec
	levels    *prometheus.CounterVec
	lastError atomic.Int64 // unix seconds of the last logged write error
}

// Config wires an Auditor.
type Config struct {
	Policy *Policy
	Writer EventWriter
	Log    *slog.Logger
	// Metrics receives upstream's apiserver_audit_* series; nil keeps
	// them unregistered.
	Metrics prometheus.Registerer
}

// New builds an Auditor.
func New(cfg Config) (*Auditor, error) {
	if cfg.Policy == nil || cfg.Writer == nil {
		return nil, errors.New("audit: a policy and a writer are required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	a := &Auditor{
		policy: cfg.Policy,
		out:    cfg.Writer,
		log:    cfg.Log,
		events: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_audit_event_total",
			Help: "Counter of audit events generated and sent to the audit backend.",
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_audit_error_total",
			Help: "Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.",
		}, []string{"plugin"}),
		levels: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_audit_level_total",
			Help: "Counter of policy levels for audit events (1 per request).",
		}, []string{"level"}),
	}
	if cfg.Metrics != nil {
		for _, c := range []prometheus.Collector{a.events, a.errors, a.levels} {
			if err := cfg.Metrics.Register(c); err != nil {
				return nil, fmt.Errorf("audit metrics: %w", err)
			}
		}
	}
	return a, nil
}

// Describe tells the auditor what a request is: the attributes its policy
// reads, and whether it is long-running (watch, exec, logs...), whose
// events include ResponseStarted.
type Describe func(*http.Request) (attrs Attributes, longRunning bool)

// Handler audits the requests that pass through it, as upstream's
// WithAudit filter: it belongs after authentication and before
// impersonation, so that the policy sees the authenticated user. Requests
// without a record (WithRequest) pass untouched.
func (a *Auditor) Handler(next http.Handler, describe Describe) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := recordFrom(req.Context())
		if rec == nil {
			next.ServeHTTP(w, req)
			return
		}
		attrs, longRunning := describe(req)
		if !rec.decide(req, attrs) {
			next.ServeHTTP(w, req)
			return
		}
		rec.process(auditv1.StageRequestReceived)
		defer func() {
			if p := recover(); p != nil {
				rec.setStatus(&metav1.Status{
					Code:    http.StatusInternalServerError,
					Status:  metav1.StatusFailure,
					Reason:  metav1.StatusReasonInternalError,
					Message: fmt.Sprintf("APIServer panic'd: %v", p),
				})
				rec.process(auditv1.StagePanic)
				panic(p)
			}
			// A handler that wrote nothing (a client gone before the
			// answer) still completes, with upstream's stand-in status.
			if rec.setStatusIfNone(&metav1.Status{Code: http.StatusOK, Status: metav1.StatusSuccess, Message: "Connection closed early"}) && longRunning {
				rec.process(auditv1.StageResponseStarted)
			}
			rec.process(auditv1.StageResponseComplete)
		}()
		next.ServeHTTP(wrapWriter(w, rec, longRunning), req)
	})
}

// FailedAuthentication audits the answer to a request that failed
// authentication, as upstream's WithFailedAuthenticationAudit: one
// ResponseStarted event without a user.
func (a *Auditor) FailedAuthentication(next http.Handler, describe Describe) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := recordFrom(req.Context())
		if rec == nil {
			next.ServeHTTP(w, req)
			return
		}
		attrs, _ := describe(req)
		attrs.User = nil
		if !rec.decide(req, attrs) {
			next.ServeHTTP(w, req)
			return
		}
		rec.setStatus(&metav1.Status{Message: authMethods(req)})
		next.ServeHTTP(wrapWriter(w, rec, true), req)
	})
}

func authMethods(req *http.Request) string {
	var methods []string
	if _, _, ok := req.BasicAuth(); ok {
		methods = append(methods, "basic")
	}
	if parts := strings.Fields(req.Header.Get("Authorization")); len(parts) > 1 && strings.EqualFold(parts[0], "bearer") {
		methods = append(methods, "bearer")
	}
	if strings.TrimSpace(req.URL.Query().Get("access_token")) != "" {
		methods = append(methods, "access_token")
	}
	if req.TLS != nil && len(req.TLS.PeerCertificates) > 0 {
		methods = append(methods, "x509")
	}
	if len(methods) == 0 {
		return "Authentication failed, no credentials provided"
	}
	return "Authentication failed, attempted: " + strings.Join(methods, ", ")
}

// decide evaluates the policy once per request and, when the request is
// audited, fills in the event's metadata. It reports whether the request
// is audited.
func (r *record) decide(req *http.Request, attrs Attributes) bool {
	cfg := r.auditor.policy.Evaluate(attrs)
	r.auditor.levels.WithLabelValues(string(cfg.Level)).Inc()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.decided = true
	r.cfg = cfg
	r.event.Level = cfg.Level
	if cfg.Level == auditv1.LevelNone {
		r.event.Annotations = nil
		return false
	}
	r.fillMetadataLocked(req, attrs)
	return true
}

func (r *record) setStatus(st *metav1.Status) {
	r.mu.Lock()
	r.event.ResponseStatus = st
	r.mu.Unlock()
}

// setStatusIfNone sets st unless a status was recorded, and reports
// whether it did.
func (r *record) setStatusIfNone(st *metav1.Status) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.event.ResponseStatus != nil {
		return false
	}
	r.event.ResponseStatus = st
	return true
}

func (r *record) setCode(code int) {
	r.mu.Lock()
	if r.event.ResponseStatus == nil {
		r.event.ResponseStatus = &metav1.Status{}
	}
	r.event.ResponseStatus.Code = int32(code)
	r.mu.Unlock()
}

// process writes the event as it stands at stage, unless the policy omits
// that stage. The lock is held while writing so that a stage's event is
// never changed under the writer.
func (r *record) process(stage auditv1.Stage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.cfg.OmitStages {
		if s == stage {
			return
		}
	}
	ev := &r.event
	ev.Stage = stage
	if stage == auditv1.StageRequestReceived {
		ev.StageTimestamp = ev.RequestReceivedTimestamp
	} else {
		ev.StageTimestamp = metav1.NewMicroTime(time.Now())
	}
	r.auditor.write(ev)
}

// write hands an event to the writer. As upstream's default "blocking"
// mode, a failed write does not fail the request; it is counted, and
// logged at most once a minute so that a full disk does not flood the log.
func (a *Auditor) write(ev *auditv1.Event) {
	a.events.Inc()
	if err := a.out.WriteEvent(ev); err != nil {
		a.errors.WithLabelValues("log").Inc()
		now := time.Now().Unix()
		if last := a.lastError.Load(); now-last >= 60 && a.lastError.CompareAndSwap(last, now) {
			a.log.Error("could not write audit event", "auditID", ev.AuditID, "err", err)
		}
	}
}

// auditWriter notes the response code in the event and, for long-running
// requests, writes the ResponseStarted stage when the answer begins.
type auditWriter struct {
	http.ResponseWriter
	rec         *record
	longRunning bool
	once        sync.Once
}

func wrapWriter(w http.ResponseWriter, rec *record, longRunning bool) http.ResponseWriter {
	aw := &auditWriter{ResponseWriter: w, rec: rec, longRunning: longRunning}
	// Upgrades (exec, attach, port-forward) need the connection; only an
	// HTTP/1 writer has one to give.
	if _, ok := w.(http.Hijacker); ok {
		return hijackWriter{aw}
	}
	return aw
}

func (w *auditWriter) started(code int) {
	w.once.Do(func() {
		w.rec.setCode(code)
		if w.longRunning {
			w.rec.process(auditv1.StageResponseStarted)
		}
	})
}

func (w *auditWriter) WriteHeader(code int) {
	w.started(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *auditWriter) Write(b []byte) (int, error) {
	w.started(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// Flush sends the header if nothing was written yet, so it starts the
// response too.
func (w *auditWriter) Flush() {
	w.started(http.StatusOK)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *auditWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type hijackWriter struct{ *auditWriter }

// Hijack records the switch of protocols before handing the connection
// over, as nothing is written through the writer afterwards.
func (w hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.started(http.StatusSwitchingProtocols)
	return w.ResponseWriter.(http.Hijacker).Hijack()
}
