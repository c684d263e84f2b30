package route

import (
	"cmp"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
)

// pathRule is an Ingress path with its matching settled: Exact, or
// prefix for both Prefix and ImplementationSpecific. Two paths with the
// same pathRule match the same requests, so it is also the key under
// which Ingresses conflict and canaries find their main path.
type pathRule struct {
	exact bool
	// path is the path as written for Exact; for a prefix it has no
	// trailing slash, which the specification ignores ("/foo/" matches
	// "/foo"), so "/" is "".
	path string
}

// newPathRule settles a path of the given type. A missing type, which
// validation refuses, reads as ImplementationSpecific, the old default.
func newPathRule(path string, typ *networkingv1.PathType) pathRule {
	if pathTypeOf(typ) == networkingv1.PathTypeExact {
		return pathRule{exact: true, path: path}
	}
	return pathRule{path: strings.TrimRight(path, "/")}
}

func pathTypeOf(typ *networkingv1.PathType) networkingv1.PathType {
	if typ == nil {
		return networkingv1.PathTypeImplementationSpecific
	}
	return *typ
}

// matches reports whether the rule matches a request path. A prefix
// matches element by element: "/foo" matches "/foo", "/foo/" and
// "/foo/bar", never "/foobar".
func (r pathRule) matches(path string) bool {
	if r.exact {
		return path == r.path
	}
	return path == r.path || strings.HasPrefix(path, r.path+"/")
}

// byPrecedence orders rules as the specification ranks matches: the
// longest path first, then Exact before prefix. Two different rules of
// one length and kind cannot both match a request, so the order between
// them, by path for a deterministic table, decides nothing.
func byPrecedence(a, b pathRule) int {
	return cmp.Or(
		cmp.Compare(len(b.path), len(a.path)),
		cmpBool(b.exact, a.exact),
		strings.Compare(a.path, b.path),
	)
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
