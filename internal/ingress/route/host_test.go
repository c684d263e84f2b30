package route

import (
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

// TestHostPrecedence: an exact host over a wildcard of one label, only
// the chosen host's paths, then the rules without a host, then the
// default backend.
func TestHostPrecedence(t *testing.T) {
	spec := rules(
		rule("foo.example.com", path("Prefix /app -> exact")),
		rule("*.example.com", path("Prefix / -> wild")),
		rule("", path("Prefix /app -> any-app"), path("Prefix /shared -> any-shared")),
		rule("bare.example.com"), // no paths: requests go on to the catch-all
	)
	spec.DefaultBackend = ptr(backend("fallback"))
	tb, ps := Build(input(ingress("ns/ing", 0, spec)))
	checkProblems(t, ps)

	checkRoutes(t, tb, []routeCase{
		{"foo.example.com", "/app/x", "Prefix /app -> ns/exact:80"},
		{"FOO.Example.COM", "/app", "Prefix /app -> ns/exact:80"},
		{"foo.example.com.", "/app", "Prefix /app -> ns/exact:80"},
		// The exact host hides the wildcard, even where it has no path.
		{"foo.example.com", "/other", "default -> ns/fallback:80"},
		{"foo.example.com", "/shared", "Prefix /shared -> ns/any-shared:80"},
		{"bar.example.com", "/app", "Prefix / -> ns/wild:80"},
		{"bar.example.com", "/anything", "Prefix / -> ns/wild:80"},
		// A wildcard covers exactly one label.
		{"bar.foo.example.com", "/x", "default -> ns/fallback:80"},
		{"bar.foo.example.com", "/app", "Prefix /app -> ns/any-app:80"},
		{"example.com", "/x", "default -> ns/fallback:80"},
		{".example.com", "/x", "default -> ns/fallback:80"},
		{"*.example.com", "/x", "default -> ns/fallback:80"},
		{"other.org", "/app", "Prefix /app -> ns/any-app:80"},
		{"", "/shared/x", "Prefix /shared -> ns/any-shared:80"},
		{"bare.example.com", "/app", "Prefix /app -> ns/any-app:80"},
		{"bare.example.com", "/", "default -> ns/fallback:80"},
	})

	if got, want := tb.Hosts(), []string{"*.example.com", "bare.example.com", "foo.example.com"}; !slices.Equal(got, want) {
		t.Errorf("Hosts() = %q, want %q", got, want)
	}
}

// TestNoDefaultBackend: with no rule and no default backend, Route says
// so and the proxy answers 404.
func TestNoDefaultBackend(t *testing.T) {
	tb, _ := Build(input(ingress("ns/ing", 0, rules(rule("a.test", path("Exact /x -> svc"))))))
	checkRoutes(t, tb, []routeCase{
		{"a.test", "/x", "Exact /x -> ns/svc:80"},
		{"a.test", "/y", "404"},
		{"b.test", "/x", "404"},
	})
	empty, ps := Build(Input{Class: class})
	checkProblems(t, ps)
	if m, ok := empty.Route("a.test", "/"); ok {
		t.Errorf("empty table routed to %+v", m)
	}
	if hosts := empty.Hosts(); len(hosts) != 0 {
		t.Errorf("empty table has hosts %q", hosts)
	}
}

// TestClassSelection: the class field, else the old annotation, else the
// default class.
func TestClassSelection(t *testing.T) {
	for _, tc := range []struct {
		name         string
		className    *string
		annotation   string
		defaultClass bool
		want         bool
	}{
		{"class field", ptr(class), "", false, true},
		{"other class", ptr("nginx"), "", true, false},
		{"field over annotation", ptr("nginx"), class, true, false},
		{"field over annotation, ours", ptr(class), "nginx", false, true},
		{"annotation", nil, class, false, true},
		{"other annotation, even if default", nil, "nginx", true, false},
		{"no class, default", nil, "", true, true},
		{"no class, not default", nil, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ing := ingress("ns/ing", 0, rules(rule("a.test", path("Prefix / -> svc"))))
			ing.Spec.IngressClassName = tc.className
			if tc.annotation != "" {
				ing.Annotations = map[string]string{annotationIngressClass: tc.annotation}
			}
			in := input(ing)
			in.DefaultClass = tc.defaultClass
			tb, _ := Build(in)
			if got := len(tb.Hosts()) == 1; got != tc.want {
				t.Errorf("ours = %v, want %v", got, tc.want)
			}
		})
	}
	// An empty annotation is no class at all.
	ing := &networkingv1.Ingress{}
	ing.Annotations = map[string]string{annotationIngressClass: ""}
	if in := (Input{Class: class, DefaultClass: true}); !in.Ours(ing) {
		t.Error("an Ingress with an empty class annotation is not the default class's")
	}
}
