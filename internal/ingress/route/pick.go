package route

import "math"

// Pick chooses a backend by weight. r is a number in [0, 1) from the
// caller's random source, which keeps the choice itself deterministic:
// the main backend takes r below its share, the canary the rest. Values
// outside [0, 1) are clamped into it.
func (m *Match) Pick(r float64) *Backend {
	total := 0
	for _, b := range m.Backends {
		total += b.Weight
	}
	if total <= 0 {
		return m.main()
	}
	at := min(max(r, 0), math.Nextafter(1, 0)) * float64(total)
	sum := 0
	for i := range m.Backends {
		sum += m.Backends[i].Weight
		if at < float64(sum) {
			return &m.Backends[i].Backend
		}
	}
	return m.main() // unreachable: at < total
}

// PickByHeader is Pick after the canary's header, as ingress-nginx checks
// it before the weights: with CanaryHeaderValue set, a request whose
// header has that value goes to the canary; without it, "always" sends
// a request to the canary and "never" keeps it on the main backend. Any
// other value is ignored. header looks a request header up, as
// http.Header.Get does.
func (m *Match) PickByHeader(header func(name string) string, r float64) *Backend {
	if canary := m.canary(); canary != nil && m.CanaryHeader != "" {
		v := header(m.CanaryHeader)
		switch {
		case m.CanaryHeaderValue != "":
			if v == m.CanaryHeaderValue {
				return canary
			}
		case v == "always":
			return canary
		case v == "never":
			return m.main()
		}
	}
	return m.Pick(r)
}

func (m *Match) main() *Backend { return &m.Backends[0].Backend }

// canary is the canary's backend, nil if the match has none.
func (m *Match) canary() *Backend {
	if len(m.Backends) < 2 {
		return nil
	}
	return &m.Backends[1].Backend
}
