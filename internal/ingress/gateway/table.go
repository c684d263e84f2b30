package gateway

import (
	"cmp"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/orca-project/orca/internal/ingress/route"
)

// Table is the Gateway API routing of the nodes' ports, built by Build.
// It is read-only once built and safe for concurrent use.
type Table struct {
	ports map[int32]*portRoutes
	// certs are the HTTPS listeners' certificates by hostname ("" for a
	// listener without one).
	certs map[string]*route.TLSCert
	// own are each Gateway's routes alone, by the addresses of its own
	// Service: a request sent there is routed by its Gateway only, while
	// the shared addresses (the nodes', orca-ingress's) route by every
	// Gateway at once.
	own map[string]*Table
}

func newTable() *Table {
	return &Table{ports: map[int32]*portRoutes{}, certs: map[string]*route.TLSCert{}, own: map[string]*Table{}}
}

// For is the table of the Gateway whose own address addr is, and false
// for any other address.
func (t *Table) For(addr string) (*Table, bool) {
	if t == nil {
		return nil, false
	}
	own, ok := t.own[addr]
	return own, ok
}

// sort orders every host's entries by precedence and the wildcards from
// the longest.
func (t *Table) sort() {
	for _, pr := range t.ports {
		for _, hr := range pr.exact {
			hr.sortEntries()
		}
		for _, hr := range pr.wild {
			hr.sortEntries()
		}
		slices.SortFunc(pr.wild, func(a, c *hostRoutes) int {
			return cmp.Or(cmp.Compare(len(c.pattern), len(a.pattern)), strings.Compare(a.pattern, c.pattern))
		})
		if pr.any != nil {
			pr.any.sortEntries()
		}
	}
}

// portRoutes are the routes of one port by the host they are for.
type portRoutes struct {
	exact map[string]*hostRoutes
	// wild are the wildcard hosts, the longest (most specific) first.
	wild []*hostRoutes
	any  *hostRoutes
}

// hostRoutes are the matches of one host pattern, by precedence.
type hostRoutes struct {
	pattern string
	entries []*entry
}

// entry is one match of one rule.
type entry struct {
	match *Match
	rule  *Rule
	prec  precedence
}

// precedence orders matches as the specification ranks them: Exact
// paths, then regular expressions, then the longest prefix; a method;
// more header matches; more query matches; the older route, then by
// namespace/name; then rule and match order.
type precedence struct {
	pathKind            int // 0 Exact, 1 RegularExpression, 2 PathPrefix
	pathLen             int
	method              bool
	headers, queries    int
	created             int64
	route               string
	ruleIndex, matchIdx int
}

func comparePrecedence(a, b precedence) int {
	return cmp.Or(
		cmp.Compare(a.pathKind, b.pathKind),
		cmp.Compare(b.pathLen, a.pathLen),
		cmpBool(b.method, a.method),
		cmp.Compare(b.headers, a.headers),
		cmp.Compare(b.queries, a.queries),
		cmp.Compare(a.created, b.created),
		strings.Compare(a.route, b.route),
		cmp.Compare(a.ruleIndex, b.ruleIndex),
		cmp.Compare(a.matchIdx, b.matchIdx),
	)
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// Match is one HTTPRouteMatch, compiled.
type Match struct {
	PathType gwv1.PathMatchType
	// Path is the path as written; for PathPrefix without its trailing
	// slash ("" for "/").
	Path    string
	pathRE  *regexp.Regexp
	Method  string
	Headers []valueMatch
	Query   []valueMatch
}

type valueMatch struct {
	name, value string
	re          *regexp.Regexp
}

// Rule is what a request that matched gets.
type Rule struct {
	// Route is the HTTPRoute the rule is of.
	Route types.NamespacedName
	// Fail answers 500: a rule not accepted (an unsupported filter), or
	// one with no backend and no redirect.
	Fail bool
	// Redirect, when set, answers with a redirect.
	Redirect *gwv1.HTTPRequestRedirectFilter
	// Rewrite, when set, changes the host or path sent to the backend.
	Rewrite *gwv1.HTTPURLRewriteFilter
	// RequestHeaders and ResponseHeaders modify the request and the
	// answer, in order.
	RequestHeaders, ResponseHeaders []*gwv1.HTTPHeaderFilter
	Backends                        []Backend
}

// Backend is one backendRef of a rule.
type Backend struct {
	route.Backend
	Weight int32
	// Invalid backends (not found, not permitted, not a Service) take
	// their share of requests as 500s.
	Invalid bool
	// RequestHeaders and ResponseHeaders are the backend's own filters.
	RequestHeaders, ResponseHeaders []*gwv1.HTTPHeaderFilter
}

// Pick chooses a backend by weight with r in [0, 1); nil when every
// weight is zero.
func (r *Rule) Pick(x float64) *Backend {
	var total int64
	for _, b := range r.Backends {
		total += int64(b.Weight)
	}
	if total <= 0 {
		return nil
	}
	at := int64(min(max(x, 0), 0.9999999999) * float64(total))
	var sum int64
	for i := range r.Backends {
		sum += int64(r.Backends[i].Weight)
		if at < sum {
			return &r.Backends[i]
		}
	}
	return nil
}

// Route finds the rule for a request that came in on port for host (the
// request's host, lowercased and without its port): the host's routes
// first (exact, then wildcards from the longest, then routes for any
// host), each by precedence. It returns the match too, whose path a
// ReplacePrefixMatch replaces.
func (t *Table) Route(port int32, host string, r *http.Request) (*Rule, *Match, bool) {
	if t == nil {
		return nil, nil, false
	}
	pr := t.ports[port]
	if pr == nil {
		return nil, nil, false
	}
	host = normalize(host)
	try := func(hr *hostRoutes) (*Rule, *Match, bool) {
		if hr == nil {
			return nil, nil, false
		}
		for _, e := range hr.entries {
			if e.match.matches(r) {
				return e.rule, e.match, true
			}
		}
		return nil, nil, false
	}
	if rule, m, ok := try(pr.exact[host]); ok {
		return rule, m, true
	}
	for _, hr := range pr.wild {
		if covers(hr.pattern, host) {
			if rule, m, ok := try(hr); ok {
				return rule, m, true
			}
		}
	}
	return try(pr.any)
}

// Serves reports whether the table has anything on port.
func (t *Table) Serves(port int32) bool { return t != nil && t.ports[port] != nil }

// Certificate is the certificate of the HTTPS listener for serverName:
// exact, then the longest wildcard, then a listener without hostname.
func (t *Table) Certificate(serverName string) (*route.TLSCert, bool) {
	if t == nil {
		return nil, false
	}
	host := normalize(serverName)
	if c, ok := t.certs[host]; ok && host != "" {
		return c, true
	}
	var best *route.TLSCert
	bestLen := -1
	for pattern, c := range t.certs {
		if isWildcard(pattern) && covers(pattern, host) && len(pattern) > bestLen {
			best, bestLen = c, len(pattern)
		}
	}
	if best != nil {
		return best, true
	}
	c, ok := t.certs[""]
	return c, ok
}

func (m *Match) matches(r *http.Request) bool {
	p := r.URL.Path
	if p == "" {
		p = "/"
	}
	switch m.PathType {
	case gwv1.PathMatchExact:
		if p != m.Path {
			return false
		}
	case gwv1.PathMatchRegularExpression:
		if !m.pathRE.MatchString(p) {
			return false
		}
	default:
		if m.Path != "" && p != m.Path && !strings.HasPrefix(p, m.Path+"/") {
			return false
		}
	}
	if m.Method != "" && r.Method != m.Method {
		return false
	}
	for _, h := range m.Headers {
		if !h.matches(r.Header.Values(h.name)) {
			return false
		}
	}
	if len(m.Query) > 0 {
		q := r.URL.Query()
		for _, v := range m.Query {
			vals, ok := q[v.name]
			if !ok || !v.matches(vals) {
				return false
			}
		}
	}
	return true
}

// matches checks the first value of a header or query parameter, as
// the specification leaves repeated ones to the implementation.
func (v valueMatch) matches(vals []string) bool {
	if len(vals) == 0 {
		return false
	}
	if v.re != nil {
		return v.re.MatchString(vals[0])
	}
	return vals[0] == v.value
}

// sortEntries orders a host's entries by precedence.
func (hr *hostRoutes) sortEntries() {
	slices.SortStableFunc(hr.entries, func(a, b *entry) int { return comparePrecedence(a.prec, b.prec) })
}
