package route

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The fixtures below build objects from short strings, so that a test's
// table reads like the YAML it stands for.

const class = "orca"

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// nn parses "namespace/name".
func nn(key string) types.NamespacedName {
	ns, name, _ := strings.Cut(key, "/")
	return types.NamespacedName{Namespace: ns, Name: name}
}

// ingress is an Ingress of class "orca" named by key, created age
// minutes after the epoch, with the given spec and annotations as
// alternating names and values.
func ingress(key string, age int, spec networkingv1.IngressSpec, annotations ...string) *networkingv1.Ingress {
	k := nn(key)
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: k.Namespace, Name: k.Name,
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(age) * time.Minute)),
		},
		Spec: spec,
	}
	if ing.Spec.IngressClassName == nil {
		ing.Spec.IngressClassName = ptr(class)
	}
	for i := 0; i+1 < len(annotations); i += 2 {
		if ing.Annotations == nil {
			ing.Annotations = map[string]string{}
		}
		ing.Annotations[annotations[i]] = annotations[i+1]
	}
	return ing
}

func rules(rs ...networkingv1.IngressRule) networkingv1.IngressSpec {
	return networkingv1.IngressSpec{Rules: rs}
}

func rule(host string, paths ...networkingv1.HTTPIngressPath) networkingv1.IngressRule {
	return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{
		HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths},
	}}
}

// path reads "Type /path -> service:port"; the port is a number or a
// name, and a missing one is 80.
func path(spec string) networkingv1.HTTPIngressPath {
	match, target, _ := strings.Cut(spec, " -> ")
	typ, p, _ := strings.Cut(match, " ")
	t := networkingv1.PathType(typ)
	return networkingv1.HTTPIngressPath{Path: p, PathType: &t, Backend: backend(target)}
}

// backend reads "service:port".
func backend(target string) networkingv1.IngressBackend {
	name, port, found := strings.Cut(target, ":")
	if !found {
		port = "80"
	}
	var bp networkingv1.ServiceBackendPort
	if n := intstr.Parse(port); n.Type == intstr.Int {
		bp.Number = n.IntVal
	} else {
		bp.Name = port
	}
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: bp}}
}

// input is the Input for ings with a Service, port 80 named "http", for
// every backend they name: tests of routing then see only the problems
// they are about.
func input(ings ...*networkingv1.Ingress) Input {
	in := Input{
		Class: class, Ingresses: ings,
		Services: map[types.NamespacedName]*corev1.Service{},
	}
	add := func(ns string, b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil {
			k := types.NamespacedName{Namespace: ns, Name: b.Service.Name}
			in.Services[k] = service(k.String(), corev1.ServicePort{Name: "http", Port: 80})
		}
	}
	for _, ing := range ings {
		add(ing.Namespace, ing.Spec.DefaultBackend)
		for _, r := range ing.Spec.Rules {
			if r.HTTP == nil {
				continue
			}
			for i := range r.HTTP.Paths {
				add(ing.Namespace, &r.HTTP.Paths[i].Backend)
			}
		}
	}
	return in
}

func service(key string, ports ...corev1.ServicePort) *corev1.Service {
	k := nn(key)
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name},
		Spec:       corev1.ServiceSpec{Ports: ports},
	}
}

// slice is an IPv4 EndpointSlice with the given ports, named as in
// "http=8080" ("=8080" for an unnamed port).
func slice(ports []string, endpoints ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	sl := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: endpoints}
	for _, p := range ports {
		name, num, _ := strings.Cut(p, "=")
		ep := discoveryv1.EndpointPort{Port: ptr(intstr.Parse(num).IntVal)}
		if name != "" {
			ep.Name = ptr(name)
		}
		sl.Ports = append(sl.Ports, ep)
	}
	return sl
}

// endpoint is an endpoint at ip; conditions are "ready", "unready" and
// "terminating", and none leaves them all unset.
func endpoint(ip string, conditions ...string) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{ip}}
	for _, c := range conditions {
		switch c {
		case "ready":
			e.Conditions.Ready = ptr(true)
		case "unready":
			e.Conditions.Ready = ptr(false)
		case "terminating":
			e.Conditions.Terminating = ptr(true)
		}
	}
	return e
}

func ptr[T any](v T) *T { return &v }

// routed describes where a request went: "Type /path -> ns/service:port",
// "default -> ns/service:port" for the default backend, "404" for none.
func routed(tb *Table, host, p string) string {
	m, ok := tb.Route(host, p)
	if !ok {
		return "404"
	}
	b := m.Backends[0]
	to := b.Service.String() + ":" + b.Port
	if m.PathType == "" {
		return "default -> " + to
	}
	return string(m.PathType) + " " + m.Path + " -> " + to
}

// routeCase is a request and where it should go, as routed writes it.
type routeCase struct{ host, path, want string }

func checkRoutes(t *testing.T, tb *Table, cases []routeCase) {
	t.Helper()
	for _, tc := range cases {
		if got := routed(tb, tc.host, tc.path); got != tc.want {
			t.Errorf("%s%s: got %s, want %s", tc.host, tc.path, got, tc.want)
		}
	}
}

// problems are Problems written as "ns/name: message".
func problems(ps ...string) []Problem {
	var out []Problem
	for _, p := range ps {
		key, msg, _ := strings.Cut(p, ": ")
		out = append(out, Problem{Ingress: nn(key), Message: msg})
	}
	return out
}

func checkProblems(t *testing.T, got []Problem, want ...string) {
	t.Helper()
	if diff := cmp.Diff(problems(want...), got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
