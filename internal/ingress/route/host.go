package route

import (
	"strconv"
	"strings"
)

// normalizeHost is how a request's host is compared: lowercased, as DNS
// names are case-insensitive, and without the trailing dot of a fully
// qualified name, which nginx drops too.
func normalizeHost(host string) string {
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// lookupHost finds the entry of m for a normalized request host: the
// exact host, else the wildcard that covers it. The empty key (rules
// without a host, the default certificate) is never returned: the
// callers fall back to it themselves, after the more specific entries.
// A host that itself holds a "*" is no real name and matches nothing.
func lookupHost[V any](m map[string]V, host string) (V, bool) {
	var zero V
	if host == "" || strings.Contains(host, "*") {
		return zero, false
	}
	if v, ok := m[host]; ok {
		return v, true
	}
	// A wildcard covers exactly one label: "foo.example.com" is under
	// "*.example.com", "bar.foo.example.com" and "example.com" are not.
	i := strings.IndexByte(host, '.')
	if i <= 0 {
		return zero, false
	}
	v, ok := m["*"+host[i:]]
	return v, ok
}

// describeHost names a rule's host in a Problem.
func describeHost(host string) string {
	if host == "" {
		return "any host"
	}
	return "host " + strconv.Quote(host)
}
