package serverlb

import "slices"

// choice is all the choice of a server depends on.
type choice struct {
	// servers are the known API servers, host:port, in the LB's order.
	servers []string
	// down are the servers the health checks found unreachable; a
	// server not in it (not yet checked) counts as healthy.
	down map[string]bool
	// current is the server the last connection went to.
	current string
	// fallback is the server given on the command line; it may or may
	// not be among servers.
	fallback string
}

// order returns the servers a new connection tries, in turn: the current
// one while it is healthy and still listed (stickiness: watches and
// long connections stay on one server rather than spread for nothing),
// then the other healthy servers, then the fallback, then the unhealthy
// servers as a last resort (a health check may lag the truth either way).
// An unhealthy fallback that is not listed comes last of all.
func order(c choice) []string {
	out := make([]string, 0, len(c.servers)+1)
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if !c.down[c.current] && slices.Contains(c.servers, c.current) {
		add(c.current)
	}
	for _, s := range c.servers {
		if !c.down[s] {
			add(s)
		}
	}
	if !c.down[c.fallback] {
		add(c.fallback)
	}
	for _, s := range c.servers {
		add(s)
	}
	add(c.fallback)
	return out
}

// failThreshold is how many checks in a row must fail before a server is
// unhealthy: one lost dial is not an outage.
const failThreshold = 2

// health is what the checks know of one server.
type health struct {
	fails int // consecutive failed checks
	down  bool
}

// observe returns the health after one more check: a success makes the
// server healthy again at once, failThreshold failures in a row make it
// unhealthy.
func (h health) observe(ok bool) health {
	if ok {
		return health{}
	}
	h.fails++
	if h.fails >= failThreshold {
		h.down = true
	}
	return h
}
