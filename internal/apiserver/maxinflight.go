package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/orca-project/orca/internal/apiserver/inflight"
)

// maxInFlight is upstream's max-in-flight filter: at most so many
// read-only and so many mutating requests run at once; the rest are told
// to come back.
type maxInFlight struct {
	limits  *inflight.Limiter
	current *prometheus.GaugeVec
}

func newMaxInFlight(readOnly, mutating int, reg prometheus.Registerer) (*maxInFlight, error) {
	if readOnly < 0 {
		return nil, fmt.Errorf("--max-requests-inflight can not be negative value")
	}
	if mutating < 0 {
		return nil, fmt.Errorf("--max-mutating-requests-inflight can not be negative value")
	}
	if readOnly == 0 && mutating == 0 {
		return nil, nil
	}
	m := &maxInFlight{
		limits: inflight.New(readOnly, mutating),
		current: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests",
			Help: "Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
		}, []string{"request_kind"}),
	}
	if err := reg.Register(m.current); err != nil {
		return nil, err
	}
	for _, k := range []inflight.Kind{inflight.ReadOnly, inflight.Mutating} {
		m.current.WithLabelValues(k.String()).Set(0)
	}
	return m, nil
}

// report publishes each second's high-water marks, as upstream's
// watermark maintenance does.
func (m *maxInFlight) report(ctx context.Context) {
	if m == nil {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			ro, mu := m.limits.TakeWatermarks()
			m.current.WithLabelValues(inflight.ReadOnly.String()).Set(float64(ro))
			m.current.WithLabelValues(inflight.Mutating.String()).Set(float64(mu))
		}
	}
}

// errTooManyRequests is the answer when no seat or slot is free:
// upstream's message, as a Status that tells clients when to retry.
func errTooManyRequests(retryAfter int) error {
	return apierrors.NewTooManyRequests("Too many requests, please try again later.", retryAfter)
}

// withMaxInFlight limits the requests it passes on. Long-running requests
// take no slot, and members of system:masters are served even when the
// slots are full: they are the administrators and the server's own
// loopback clients, who must always get an answer.
func (s *Server) withMaxInFlight(next http.Handler) http.Handler {
	m := s.maxInFlight
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateFrom(r.Context())
		if st.longRunning {
			next.ServeHTTP(w, r)
			return
		}
		kind := inflight.KindOf(st.info.Verb)
		if m.limits.Acquire(kind) {
			defer m.limits.Release(kind)
			next.ServeHTTP(w, r)
			return
		}
		if u, ok := UserFrom(r.Context()); ok && slices.Contains(u.Groups, user.SystemPrivilegedGroup) {
			next.ServeHTTP(w, r)
			return
		}
		s.tooManyRequests(w, r, st, 1)
	})
}
