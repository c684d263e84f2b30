package route

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
)

// canaryIngress is a canary for host "app.test", path Prefix /, at age
// 0: older than the main Ingress, which must not matter.
func canaryIngress(key, svc string, annotations ...string) *networkingv1.Ingress {
	annotations = append([]string{annotationCanary, "true"}, annotations...)
	return ingress(key, 0, rules(rule("app.test", path("Prefix / -> "+svc))), annotations...)
}

func mainIngress() *networkingv1.Ingress {
	return ingress("ns/main", 1, rules(rule("app.test", path("Prefix / -> main"))))
}

// picks describes which backend Pick chooses for each r.
func picks(m *Match, rs ...float64) map[float64]string {
	out := map[float64]string{}
	for _, r := range rs {
		out[r] = m.Pick(r).Service.Name
	}
	return out
}

// TestCanaryWeights: a canary takes weight of total requests, Pick
// giving the main backend the low values of r and the canary the rest.
func TestCanaryWeights(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations []string
		weights     []int
		want        map[float64]string
	}{
		{"30 of 100", []string{annotationCanaryWeight, "30"}, []int{70, 30}, map[float64]string{
			0: "main", 0.5: "main", 0.6999: "main", 0.7: "canary", 0.9999: "canary",
			// Out of range: clamped.
			-1: "main", 1: "canary", 7: "canary",
		}},
		{"no weight", nil, []int{100, 0}, map[float64]string{0: "main", 0.9999: "main", 1: "main"}},
		{"0", []string{annotationCanaryWeight, "0"}, []int{100, 0}, map[float64]string{0: "main", 0.9999: "main"}},
		{"100", []string{annotationCanaryWeight, "100"}, []int{0, 100}, map[float64]string{0: "canary", 0.5: "canary", -1: "canary"}},
		{"1 of 1000", []string{annotationCanaryWeight, "1", annotationCanaryWeightTotal, "1000"}, []int{999, 1}, map[float64]string{
			0: "main", 0.998: "main", 0.999: "canary",
		}},
		{"all of 3", []string{annotationCanaryWeight, "3", annotationCanaryWeightTotal, "3"}, []int{0, 3}, map[float64]string{0: "canary"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, ps := Build(input(canaryIngress("ns/canary", "canary", tc.annotations...), mainIngress()))
			checkProblems(t, ps)
			m, ok := tb.Route("app.test", "/x")
			if !ok {
				t.Fatal("not routed")
			}
			var weights []int
			for _, b := range m.Backends {
				weights = append(weights, b.Weight)
			}
			if diff := cmp.Diff(tc.weights, weights); diff != "" {
				t.Errorf("weights (-want +got):\n%s", diff)
			}
			if m.Backends[0].Ingress != nn("ns/main") || m.Backends[1].Ingress != nn("ns/canary") {
				t.Errorf("backends from %v and %v", m.Backends[0].Ingress, m.Backends[1].Ingress)
			}
			rs := make([]float64, 0, len(tc.want))
			for r := range tc.want {
				rs = append(rs, r)
			}
			if diff := cmp.Diff(tc.want, picks(m, rs...)); diff != "" {
				t.Errorf("picks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCanaryHeader: the canary's header overrides the weights: "always"
// and "never", or a value of the author's.
func TestCanaryHeader(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations []string
		header      string
		r           float64
		want        string
	}{
		{"always", []string{annotationCanaryByHeader, "X-Canary"}, "always", 0, "canary"},
		{"never", []string{annotationCanaryByHeader, "X-Canary", annotationCanaryWeight, "100"}, "never", 0.5, "main"},
		{"other value: weights", []string{annotationCanaryByHeader, "X-Canary", annotationCanaryWeight, "50"}, "yes", 0.6, "canary"},
		{"absent: weights", []string{annotationCanaryByHeader, "X-Canary", annotationCanaryWeight, "50"}, "", 0.4, "main"},
		{"value", []string{annotationCanaryByHeader, "X-Canary", annotationCanaryByHeaderValue, "blue"}, "blue", 0, "canary"},
		{"value replaces always", []string{annotationCanaryByHeader, "X-Canary", annotationCanaryByHeaderValue, "blue"}, "always", 0, "main"},
		{"value without header", []string{annotationCanaryByHeaderValue, "blue"}, "blue", 0, "main"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, ps := Build(input(canaryIngress("ns/canary", "canary", tc.annotations...), mainIngress()))
			checkProblems(t, ps)
			m, _ := tb.Route("app.test", "/")
			get := func(name string) string {
				if name != "X-Canary" {
					t.Errorf("asked for header %q", name)
				}
				return tc.header
			}
			if got := m.PickByHeader(get, tc.r).Service.Name; got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}

	// Without a canary, the header is not even looked at.
	tb, _ := Build(input(mainIngress()))
	m, _ := tb.Route("app.test", "/")
	got := m.PickByHeader(func(string) string { t.Error("header asked for"); return "" }, 0.99)
	if got.Service.Name != "main" || len(m.Backends) != 1 || m.Backends[0].Weight != fullWeight {
		t.Errorf("lone backend: picked %s from %+v", got.Service.Name, m.Backends)
	}
}

// TestCanaryProblems: what ingress-nginx ignores, Orca ignores and
// reports.
func TestCanaryProblems(t *testing.T) {
	exactCanary := ingress("ns/exact", 2, rules(rule("app.test", path("Exact / -> c"))), annotationCanary, "true")
	withDefault := canaryIngress("ns/with-default", "c2", annotationCanaryWeight, "10")
	withDefault.Spec.DefaultBackend = ptr(backend("c2"))
	withDefault.Spec.TLS = []networkingv1.IngressTLS{{SecretName: "missing"}}
	tb, ps := Build(input(
		mainIngress(),
		canaryIngress("ns/first", "c1", annotationCanaryWeight, "20", "nginx.ingress.kubernetes.io/canary-by-cookie", "beta"),
		withDefault, // younger than ns/first by name
		ingress("ns/orphan", 2, rules(rule("other.test", path("Prefix / -> c"))), annotationCanary, "true"),
		exactCanary,
		canaryIngress("ns/bad-weight", "c", annotationCanaryWeight, "abc"),
		canaryIngress("ns/too-heavy", "c", annotationCanaryWeight, "101"),
		canaryIngress("ns/no-total", "c", annotationCanaryWeightTotal, "0"),
		canaryIngress("ns/bad-flag", "c", annotationCanary, "yes please"),
		// Not a canary at all: a main Ingress of its own.
		ingress("ns/not-canary", 3, rules(rule("b.test", path("Prefix / -> b"))), annotationCanary, "false"),
	))
	checkProblems(t, ps,
		`ns/bad-flag: annotation nginx.ingress.kubernetes.io/canary: "yes please" is not a boolean; Ingress ignored`,
		`ns/bad-weight: annotation nginx.ingress.kubernetes.io/canary-weight: "abc" is not an integer; Ingress ignored`,
		`ns/no-total: canary weight 0 of 0 is out of range; Ingress ignored`,
		`ns/too-heavy: canary weight 101 of 100 is out of range; Ingress ignored`,
		`ns/first: annotation nginx.ingress.kubernetes.io/canary-by-cookie is not supported; ignored`,
		`ns/with-default: host "app.test", path "/": ns/first is its canary already; ignored`,
		`ns/exact: host "app.test", path "/": no main Ingress routes it; canary ignored`,
		`ns/orphan: host "other.test", path "/": no main Ingress routes it; canary ignored`,
	)
	m, _ := tb.Route("app.test", "/")
	if len(m.Backends) != 2 || m.Backends[1].Service.Name != "c1" || m.Backends[1].Weight != 20 {
		t.Errorf("app.test backends %+v", m.Backends)
	}
	// A canary's default backend and TLS are not the table's.
	checkRoutes(t, tb, []routeCase{{"nowhere.test", "/", "404"}, {"b.test", "/", "Prefix / -> ns/b:80"}})
	if tb.HasTLS("app.test") {
		t.Error("a canary's TLS section was used")
	}
}

// TestPickWithoutWeight: a Match whose weights add up to nothing, which
// Build does not make, still picks the main backend.
func TestPickWithoutWeight(t *testing.T) {
	m := &Match{Backends: []WeightedBackend{{Backend: Backend{Port: "a"}}, {Backend: Backend{Port: "b"}}}}
	for _, r := range []float64{0, 0.5, 1} {
		if got := m.Pick(r).Port; got != "a" {
			t.Errorf("Pick(%s) = %s, want a", strconv.FormatFloat(r, 'g', -1, 64), got)
		}
	}
}
