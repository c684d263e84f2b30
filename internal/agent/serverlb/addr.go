package serverlb

import (
	"fmt"
	"net"
	"net/url"
	"slices"
)

// ServerAddr is the host:port an API server URL (https://HOST[:PORT])
// names, port 443 when it names none: the Default of an LB in front of
// that server.
func ServerAddr(serverURL string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", fmt.Errorf("serverlb: server URL %q: %w", serverURL, err)
	}
	if u.Scheme != "https" || u.Hostname() == "" {
		return "", fmt.Errorf("serverlb: server URL %q: want https://HOST[:PORT]", serverURL)
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// validAddr reports whether s is host:port with both parts given.
func validAddr(s string) bool {
	host, port, err := net.SplitHostPort(s)
	return err == nil && host != "" && port != ""
}

// normalize is the sorted set of the valid addresses among servers.
func normalize(servers []string) []string {
	out := make([]string, 0, len(servers))
	for _, s := range servers {
		if validAddr(s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
