package gateway

import "strings"

// Hostnames here are lowercased, without a trailing dot; "" is any host,
// and a name starting "*." is a wildcard: a suffix match over one or more
// labels ("*.example.com" covers "a.example.com" and "a.b.example.com",
// not "example.com"), as the Gateway API defines it.

func normalize(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

func isWildcard(h string) bool { return strings.HasPrefix(h, "*.") }

// covers reports whether pattern (exact, wildcard or "") matches host, a
// request's host without its port.
func covers(pattern, host string) bool {
	switch {
	case pattern == "":
		return true
	case isWildcard(pattern):
		return strings.HasSuffix(host, pattern[1:]) && len(host) > len(pattern)-1
	default:
		return pattern == host
	}
}

// intersect is the hostnames both a listener's hostname and a route's
// hostnames allow: the more specific of each pair that overlaps. An
// empty result with ok true is "any host"; ok false means none at all.
func intersect(listener string, route []string) (hosts []string, ok bool) {
	if len(route) == 0 {
		if listener == "" {
			return nil, true
		}
		return []string{listener}, true
	}
	seen := map[string]bool{}
	for _, r := range route {
		r = normalize(r)
		h, ok := pair(listener, r)
		if ok && !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	return hosts, len(hosts) > 0
}

// pair is the intersection of two hostnames, if any.
func pair(a, b string) (string, bool) {
	switch {
	case a == "":
		return b, true
	case b == "":
		return a, true
	case a == b:
		return a, true
	case isWildcard(a) && !isWildcard(b):
		return b, covers(a, b)
	case !isWildcard(a) && isWildcard(b):
		return a, covers(b, a)
	case isWildcard(a) && isWildcard(b):
		// The longer wildcard, if it falls under the shorter.
		if strings.HasSuffix(a, b[1:]) {
			return a, true
		}
		if strings.HasSuffix(b, a[1:]) {
			return b, true
		}
	}
	return "", false
}
