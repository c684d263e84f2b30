package apiserver

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/orca-project/orca/internal/apiserver/inflight"
	"github.com/orca-project/orca/internal/flowcontrol"
)

// API Priority and Fairness in the request path: the filter that hands
// each request to the dispatcher, estimates its width and answers 429
// when it is refused. Deciding is internal/flowcontrol's.

const (
	// defaultWaitLimit is how long a request without a deadline may wait
	// in its queue: upstream's request timeout (60 s) over 4.
	defaultWaitLimit = 15 * time.Second
	// maxWaitLimit caps every request's wait, as upstream's.
	maxWaitLimit = time.Minute
	// objectsPerSeat and maxListSeats are upstream's list estimate by
	// object count: a seat per 100 objects, at most 10.
	objectsPerSeat = 100
	maxListSeats   = 10
)

// apfGauges are upstream's apiserver_current_inflight_requests and
// apiserver_current_inqueue_requests under API Priority and Fairness:
// each second's high-water mark of the requests executing and waiting,
// by kind.
type apfGauges struct {
	executing, waiting          inflight.Watermark
	executingGauge, queuedGauge *prometheus.GaugeVec
}

func newAPFGauges(reg prometheus.Registerer) (*apfGauges, error) {
	g := &apfGauges{
		executingGauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests",
			Help: "Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
		}, []string{"request_kind"}),
		queuedGauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inqueue_requests",
			Help: "Maximal number of queued requests in this apiserver per request kind in last second.",
		}, []string{"request_kind"}),
	}
	for _, c := range []*prometheus.GaugeVec{g.executingGauge, g.queuedGauge} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
		for _, k := range []inflight.Kind{inflight.ReadOnly, inflight.Mutating} {
			c.WithLabelValues(k.String()).Set(0)
		}
	}
	return g, nil
}

func (g *apfGauges) report(ctx context.Context) {
	if g == nil {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, p := range []struct {
			w *inflight.Watermark
			g *prometheus.GaugeVec
		}{{&g.executing, g.executingGauge}, {&g.waiting, g.queuedGauge}} {
			ro, mu := p.w.Take()
			p.g.WithLabelValues(inflight.ReadOnly.String()).Set(float64(ro))
			p.g.WithLabelValues(inflight.Mutating.String()).Set(float64(mu))
		}
	}
}

// withPriorityAndFairness admits each request through the dispatcher, as
// upstream's filter, in the max-in-flight filter's place. Long-running
// requests other than watches are not limited; a watch holds its seat
// until it is initialized (its current state handed to the stream), not
// for its life. The answer carries the UIDs of the FlowSchema and level
// that classified it, refused or not.
func (s *Server) withPriorityAndFairness(next http.Handler) http.Handler {
	d := s.cfg.FlowControl
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateFrom(r.Context())
		watch := st.resource && st.info.Verb == "watch"
		if st.longRunning && !watch {
			next.ServeHTTP(w, r)
			return
		}
		u, _ := UserFrom(r.Context())
		req := flowcontrol.Request{User: u.Name, Groups: u.Groups, ResourceRequest: st.resource, Verb: st.info.Verb}
		if st.resource {
			ri := st.info
			req.APIGroup, req.Resource, req.Subresource, req.Namespace = ri.Group, ri.Resource, ri.Subresource, ri.Namespace
		} else {
			req.Path = r.URL.Path
		}
		kind := inflight.KindOf(st.info.Verb)
		waitCtx, cancel := waitContext(r.Context(), time.Now())
		cls, ticket, _ := d.Admit(waitCtx, req, flowcontrol.Work{
			Seats: s.seats(r, st),
			Queued: func(in bool) {
				if in {
					s.apf.waiting.Add(kind, 1)
				} else {
					s.apf.waiting.Add(kind, -1)
				}
			},
		})
		cancel()
		w.Header().Set(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID, string(cls.PriorityLevelUID))
		w.Header().Set(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID, string(cls.FlowSchemaUID))
		if ticket == nil {
			s.tooManyRequests(w, r, st, d.RetryAfter(cls.PriorityLevel))
			return
		}
		s.apf.executing.Add(kind, 1)
		finish := sync.OnceFunc(func() {
			ticket.Finish()
			s.apf.executing.Add(kind, -1)
		})
		defer finish()
		if watch {
			r = r.WithContext(context.WithValue(r.Context(), watchInitKey{}, finish))
		}
		next.ServeHTTP(w, r)
	})
}

// waitContext bounds how long a request may wait in its queue: a quarter
// of what its deadline leaves, else 15 s, never more than a minute.
func waitContext(ctx context.Context, arrived time.Time) (context.Context, context.CancelFunc) {
	limit := defaultWaitLimit
	if dl, ok := ctx.Deadline(); ok {
		limit = dl.Sub(arrived) / 4
	}
	return context.WithDeadline(ctx, arrived.Add(min(limit, maxWaitLimit)))
}

type watchInitKey struct{}

// watchInitialized tells API Priority and Fairness that a watch has
// handed its current state to its stream: from then on it holds no seat.
func watchInitialized(ctx context.Context) {
	if f, ok := ctx.Value(watchInitKey{}).(func()); ok {
		f()
	}
}

// seats estimates a request's width as upstream's work estimator does by
// object count: a list takes a seat per 100 objects of its resource (it
// reads them all from the cache, whatever its namespace or page size), at
// most 10; a list of one object by name, and any other request, one.
// Upstream also charges writes for the watchers they wake; Orca does not.
func (s *Server) seats(r *http.Request, st *requestState) int {
	if !st.resource || st.info.Verb != "list" {
		return 1
	}
	if fs := r.URL.Query().Get("fieldSelector"); fs != "" {
		if sel, err := fields.ParseSelector(fs); err == nil {
			if _, one := sel.RequiresExactMatch("metadata.name"); one {
				return 1
			}
		}
	}
	res, err := s.lookup(st.info)
	if err != nil || res.cache == nil {
		return 1
	}
	return max(1, min(maxListSeats, int(math.Ceil(float64(res.cache.Len())/objectsPerSeat))))
}

// tooManyRequests refuses a request that found no room: upstream's
// message, as a Status telling the client when to come back, counted in
// the request metrics with code 429.
func (s *Server) tooManyRequests(w http.ResponseWriter, r *http.Request, st *requestState, retryAfter int64) {
	if st.resource {
		ri := st.info
		s.metrics.requests.WithLabelValues(verbLabel(ri, r), ri.Group, ri.Version, ri.Resource, ri.Subresource, scopeLabel(ri), "429").Inc()
	}
	w.Header().Set("Retry-After", strconv.FormatInt(retryAfter, 10))
	s.writeError(w, r, errTooManyRequests(int(retryAfter)))
}
