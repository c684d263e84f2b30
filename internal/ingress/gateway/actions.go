package gateway

import (
	"net"
	"net/http"
	"strconv"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// What the proxy does with a request a Rule matched, as pure functions
// of the request and the filters.

// ApplyHeaders modifies h as a header filter says: set replaces, add
// appends, remove deletes, in that order.
func ApplyHeaders(h http.Header, f *gwv1.HTTPHeaderFilter) {
	if f == nil {
		return
	}
	for _, s := range f.Set {
		h.Set(string(s.Name), s.Value)
	}
	for _, a := range f.Add {
		h.Add(string(a.Name), a.Value)
	}
	for _, r := range f.Remove {
		h.Del(r)
	}
}

// ModifyPath is path after a path modifier, for a request m matched:
// ReplaceFullPath replaces it whole; ReplacePrefixMatch replaces the
// part the PathPrefix matched, element by element, as the
// specification's table reads ("/foo" to "/xyz": "/foo/bar" is
// "/xyz/bar", "/foo" is "/xyz"; an empty replacement leaves "/").
func ModifyPath(pm *gwv1.HTTPPathModifier, path string, m *Match) string {
	if pm == nil {
		return path
	}
	switch pm.Type {
	case gwv1.FullPathHTTPPathModifier:
		if pm.ReplaceFullPath != nil {
			return *pm.ReplaceFullPath
		}
	case gwv1.PrefixMatchHTTPPathModifier:
		if pm.ReplacePrefixMatch == nil || m == nil || m.PathType != gwv1.PathMatchPathPrefix {
			return path
		}
		repl := *pm.ReplacePrefixMatch
		// m.Path is the prefix without its trailing slash, and matched
		// whole path elements: the rest is empty or starts with "/".
		rest := strings.TrimPrefix(path, m.Path)
		if rest == "" {
			if repl == "" {
				return "/"
			}
			return repl
		}
		return strings.TrimRight(repl, "/") + rest
	}
	return path
}

// RedirectCode is the status of a redirect: the filter's, 302 when unset.
func RedirectCode(f *gwv1.HTTPRequestRedirectFilter) int {
	if f.StatusCode != nil {
		return *f.StatusCode
	}
	return http.StatusFound
}

// RedirectLocation is the Location of a redirect of r, which came in on
// port over scheme ("http" or "https"), by f, m being the match (for a
// prefix replacement). The port follows the specification: the
// filter's, else the new scheme's well-known one, else the listener's;
// 80 for http and 443 for https are left out.
func RedirectLocation(f *gwv1.HTTPRequestRedirectFilter, r *http.Request, m *Match, scheme string, port int32) string {
	newScheme := scheme
	if f.Scheme != nil {
		newScheme = *f.Scheme
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if f.Hostname != nil {
		host = string(*f.Hostname)
	}
	newPort := port
	switch {
	case f.Port != nil:
		newPort = int32(*f.Port)
	case f.Scheme != nil && *f.Scheme == "http":
		newPort = 80
	case f.Scheme != nil && *f.Scheme == "https":
		newPort = 443
	}
	authority := host
	if !(newScheme == "http" && newPort == 80) && !(newScheme == "https" && newPort == 443) {
		authority = net.JoinHostPort(host, strconv.Itoa(int(newPort)))
	}
	path := ModifyPath(f.Path, r.URL.Path, m)
	loc := newScheme + "://" + authority + path
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	return loc
}
