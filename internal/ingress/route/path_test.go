package route

import (
	"strings"
	"testing"
)

// TestPathMatching reproduces the examples table of the Ingress
// documentation (concepts/services-networking/ingress, "Examples" under
// "Path types"), then the cases it leaves to the reader. A result names
// the path that matched; "404" is the docs' "No", as there is no default
// backend here.
func TestPathMatching(t *testing.T) {
	for _, tc := range []struct {
		name    string
		paths   []string
		request string
		want    string
	}{
		// The documentation's table, row by row.
		{"prefix / matches all", []string{"Prefix /"}, "/anything/at/all", "Prefix /"},
		{"exact matches", []string{"Exact /foo"}, "/foo", "Exact /foo"},
		{"exact other path", []string{"Exact /foo"}, "/bar", "404"},
		{"exact no trailing slash added", []string{"Exact /foo"}, "/foo/", "404"},
		{"exact no trailing slash dropped", []string{"Exact /foo/"}, "/foo", "404"},
		{"prefix /foo, /foo", []string{"Prefix /foo"}, "/foo", "Prefix /foo"},
		{"prefix /foo, /foo/", []string{"Prefix /foo"}, "/foo/", "Prefix /foo"},
		{"prefix /foo/, /foo", []string{"Prefix /foo/"}, "/foo", "Prefix /foo/"},
		{"prefix /foo/, /foo/", []string{"Prefix /foo/"}, "/foo/", "Prefix /foo/"},
		{"last element is a string prefix", []string{"Prefix /aaa/bb"}, "/aaa/bbb", "404"},
		{"prefix equal", []string{"Prefix /aaa/bbb"}, "/aaa/bbb", "Prefix /aaa/bbb"},
		{"trailing slash in rule ignored", []string{"Prefix /aaa/bbb/"}, "/aaa/bbb", "Prefix /aaa/bbb/"},
		{"trailing slash in request matched", []string{"Prefix /aaa/bbb"}, "/aaa/bbb/", "Prefix /aaa/bbb"},
		{"subpath matched", []string{"Prefix /aaa/bbb"}, "/aaa/bbb/ccc", "Prefix /aaa/bbb"},
		{"not a string prefix", []string{"Prefix /aaa/bbb"}, "/aaa/bbbxyz", "404"},
		{"longest of / and /aaa", []string{"Prefix /", "Prefix /aaa"}, "/aaa/ccc", "Prefix /aaa"},
		{"longest of three", []string{"Prefix /", "Prefix /aaa", "Prefix /aaa/bbb"}, "/aaa/bbb", "Prefix /aaa/bbb"},
		{"falls back to /", []string{"Prefix /", "Prefix /aaa", "Prefix /aaa/bbb"}, "/ccc", "Prefix /"},
		{"no match", []string{"Prefix /aaa"}, "/ccc", "404"},
		{"exact preferred", []string{"Prefix /foo", "Exact /foo"}, "/foo", "Exact /foo"},

		// What the table implies.
		{"prefix preferred when exact misses", []string{"Prefix /foo", "Exact /foo"}, "/foo/", "Prefix /foo"},
		{"exact case-sensitive", []string{"Exact /foo"}, "/FOO", "404"},
		{"prefix case-sensitive", []string{"Prefix /foo"}, "/Foo/bar", "404"},
		{"longest of /foo and /foo/bar", []string{"Prefix /foo", "Prefix /foo/bar"}, "/foo/bar/baz", "Prefix /foo/bar"},
		{"shorter when longer misses", []string{"Prefix /foo", "Prefix /foo/bar"}, "/foo/baz", "Prefix /foo"},
		{"rule order does not matter", []string{"Prefix /foo/bar", "Prefix /foo"}, "/foo/bar", "Prefix /foo/bar"},
		{"longer exact over prefix", []string{"Prefix /foo", "Exact /foo/bar"}, "/foo/bar", "Exact /foo/bar"},
		{"trailing slash does not lengthen a prefix", []string{"Prefix /foo/", "Exact /foo"}, "/foo", "Exact /foo"},
		{"exact with slash over prefix", []string{"Prefix /foo", "Exact /foo/"}, "/foo/", "Exact /foo/"},
		{"empty request path is /", []string{"Exact /"}, "", "Exact /"},
		{"prefix / matches the root", []string{"Prefix /"}, "/", "Prefix /"},
		{"double slash is an empty element", []string{"Prefix /foo"}, "/foo//bar", "Prefix /foo"},

		// ImplementationSpecific is Prefix.
		{"implementation-specific subpath", []string{"ImplementationSpecific /foo"}, "/foo/bar", "ImplementationSpecific /foo"},
		{"implementation-specific not a string prefix", []string{"ImplementationSpecific /foo"}, "/foobar", "404"},
		{"implementation-specific empty is /", []string{"ImplementationSpecific "}, "/x", "ImplementationSpecific "},
		{"implementation-specific loses to exact", []string{"ImplementationSpecific /foo", "Exact /foo"}, "/foo", "Exact /foo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rule("")
			for _, p := range tc.paths {
				r.HTTP.Paths = append(r.HTTP.Paths, path(p+" -> svc"))
			}
			tb, ps := Build(input(ingress("ns/ing", 0, rules(r))))
			checkProblems(t, ps)
			got := routed(tb, "example.com", tc.request)
			got, _, _ = strings.Cut(got, " -> ")
			if got != tc.want {
				t.Errorf("%v, request %q: got %s, want %s", tc.paths, tc.request, got, tc.want)
			}
		})
	}
}
