package route

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// TestMerge: the Ingresses of a class make one table. The same host,
// path and matching in two of them is a conflict the oldest wins,
// whatever order the informer lists them in.
func TestMerge(t *testing.T) {
	ings := []*networkingv1.Ingress{
		ingress("team-b/new", 2, rules(
			rule("shop.test", path("Prefix /cart -> cart2"), path("Prefix /api/ -> api2"), path("Exact /api -> api-exact")),
			rule("blog.test", path("Prefix / -> blog")),
		)),
		ingress("team-a/old", 1, rules(
			rule("shop.test", path("Prefix /cart -> cart"), path("ImplementationSpecific /api -> api")),
		)),
		// Same age: the namespace, then the name, decides.
		ingress("team-c/same-age", 2, rules(rule("blog.test", path("Prefix / -> blog-c")))),
		// An earlier rule of the same Ingress keeps a duplicate path.
		ingress("team-d/dup", 3, rules(
			rule("dup.test", path("Prefix /x -> first")),
			rule("DUP.test", path("Prefix /x/ -> second")),
		)),
	}
	tb, ps := Build(input(ings...))
	checkProblems(t, ps,
		`team-b/new: host "shop.test", path "/cart": already routed by team-a/old (older Ingresses win); ignored`,
		// Prefix and ImplementationSpecific match alike, and a trailing
		// slash means nothing to a prefix.
		`team-b/new: host "shop.test", path "/api/": already routed by team-a/old (older Ingresses win); ignored`,
		`team-c/same-age: host "blog.test", path "/": already routed by team-b/new (older Ingresses win); ignored`,
		`team-d/dup: host "dup.test", path "/x/": listed twice; the first is used`,
	)
	checkRoutes(t, tb, []routeCase{
		{"shop.test", "/cart/1", "Prefix /cart -> team-a/cart:80"},
		{"shop.test", "/api/v1", "ImplementationSpecific /api -> team-a/api:80"},
		// Exact and Prefix of one path are two rules, not a conflict.
		{"shop.test", "/api", "Exact /api -> team-b/api-exact:80"},
		{"blog.test", "/", "Prefix / -> team-b/blog:80"},
		{"dup.test", "/x", "Prefix /x -> team-d/first:80"},
	})

	// The informer's order changes nothing.
	reversed := slices.Clone(ings)
	slices.Reverse(reversed)
	tb2, ps2 := Build(input(reversed...))
	if diff := cmp.Diff(ps, ps2); diff != "" {
		t.Errorf("problems depend on input order (-first +reversed):\n%s", diff)
	}
	for _, host := range tb.Hosts() {
		for _, p := range []string{"/", "/cart", "/api", "/api/x", "/x"} {
			if a, b := routed(tb, host, p), routed(tb2, host, p); a != b {
				t.Errorf("%s%s: %s, reversed %s", host, p, a, b)
			}
		}
	}
}

// TestDefaultBackend: the oldest Ingress's default backend serves what
// no rule does; the others are reported.
func TestDefaultBackend(t *testing.T) {
	withDefault := func(key string, age int, svc string) *networkingv1.Ingress {
		return ingress(key, age, networkingv1.IngressSpec{DefaultBackend: ptr(backend(svc))})
	}
	tb, ps := Build(input(
		withDefault("ns/newer", 5, "b"),
		withDefault("ns/older", 1, "a"),
		ingress("ns/rules", 0, rules(rule("a.test", path("Exact /x -> x")))),
	))
	checkProblems(t, ps, `ns/newer: default backend: ns/older has one (older Ingresses win); ignored`)
	checkRoutes(t, tb, []routeCase{
		{"a.test", "/x", "Exact /x -> ns/x:80"},
		{"a.test", "/y", "default -> ns/a:80"},
		{"b.test", "/", "default -> ns/a:80"},
	})
}

// TestResourceBackend: a resource backend cannot be served; its path is
// left out, so requests go on as if it were not there.
func TestResourceBackend(t *testing.T) {
	resource := networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{
		APIGroup: ptr("storage.example.com"), Kind: "Bucket", Name: "assets",
	}}
	spec := rules(rule("a.test",
		networkingv1.HTTPIngressPath{Path: "/bucket", PathType: ptr(networkingv1.PathTypePrefix), Backend: resource},
		path("Prefix / -> web"),
	))
	spec.DefaultBackend = &resource
	tb, ps := Build(input(ingress("ns/ing", 0, spec)))
	checkProblems(t, ps,
		`ns/ing: host "a.test", path "/bucket": resource backends are not supported; ignored`,
		`ns/ing: default backend: resource backends are not supported; ignored`,
	)
	checkRoutes(t, tb, []routeCase{
		{"a.test", "/bucket/x", "Prefix / -> ns/web:80"},
		{"b.test", "/", "404"},
	})
}
