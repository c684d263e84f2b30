package route

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Build builds the routing of in.Class from the objects in in, and lists
// what the controller should report on the Ingresses concerned. The same
// input always gives the same Table and Problems, in the same order.
func Build(in Input) (*Table, []Problem) {
	b := &builder{
		in:       &in,
		t:        &Table{vhosts: map[string]*vhost{}, certs: map[string]*TLSCert{}},
		loaded:   map[types.NamespacedName]loadedCert{},
		reported: map[Problem]bool{},
	}
	type pendingCanary struct {
		ing *networkingv1.Ingress
		c   canary
	}
	var canaries []pendingCanary
	for _, ing := range in.ourIngresses() {
		c, isCanary, err := canaryOf(ing)
		switch {
		case err != nil:
			b.problem(ing, "%v; Ingress ignored", err)
		case isCanary:
			canaries = append(canaries, pendingCanary{ing, c})
		default:
			b.addRules(ing)
			b.addDefaultBackend(ing)
			b.addTLS(ing)
		}
	}
	// Canaries attach to the paths of main Ingresses, so they come once
	// every main Ingress is in, whatever their age.
	for _, pc := range canaries {
		b.addCanary(pc.ing, pc.c)
	}
	for _, vh := range b.t.vhosts {
		vh.rules = slices.SortedFunc(maps.Keys(vh.byRule), byPrecedence)
	}
	return b.t, b.problems
}

// builder is the state of one Build.
type builder struct {
	in *Input
	t  *Table
	// loaded are the TLS Secrets parsed so far, so that a Secret used
	// by several entries is parsed once.
	loaded map[types.NamespacedName]loadedCert
	// problems are reported once each, in the order found.
	problems []Problem
	reported map[Problem]bool
}

func (b *builder) problem(ing *networkingv1.Ingress, format string, args ...any) {
	p := Problem{Ingress: keyOf(ing), Message: fmt.Sprintf(format, args...)}
	if !b.reported[p] {
		b.reported[p] = true
		b.problems = append(b.problems, p)
	}
}

// vhost is the entry of a rule host, made on first use. A host is
// listed even when its rules have no paths: it still takes its requests
// from a wildcard, on to the catch-all rules and the default backend.
func (b *builder) vhost(host string) *vhost {
	vh := b.t.vhosts[host]
	if vh == nil {
		vh = &vhost{byRule: map[pathRule]*Match{}}
		b.t.vhosts[host] = vh
	}
	return vh
}

// addRules adds the paths of a main Ingress, each unless an older
// Ingress, or an earlier rule of this one, already routes it.
func (b *builder) addRules(ing *networkingv1.Ingress) {
	for _, rule := range ing.Spec.Rules {
		host := strings.ToLower(rule.Host)
		vh := b.vhost(host)
		if rule.HTTP == nil {
			continue
		}
		for _, p := range rule.HTTP.Paths {
			b.addPath(ing, vh, host, p)
		}
	}
}

func (b *builder) addPath(ing *networkingv1.Ingress, vh *vhost, host string, p networkingv1.HTTPIngressPath) {
	where := pathWhere(host, p.Path)
	rule := newPathRule(p.Path, p.PathType)
	if m, taken := vh.byRule[rule]; taken {
		if owner := m.main().Ingress; owner != keyOf(ing) {
			b.problem(ing, "%s: already routed by %s (older Ingresses win); ignored", where, owner)
		} else {
			b.problem(ing, "%s: listed twice; the first is used", where)
		}
		return
	}
	be, ok := b.backend(ing, &p.Backend, where)
	if !ok {
		return
	}
	vh.byRule[rule] = &Match{Host: host, Path: p.Path, PathType: pathTypeOf(p.PathType), Backends: single(be)}
}

// addDefaultBackend makes the Ingress's default backend the table's,
// unless an older Ingress has one.
func (b *builder) addDefaultBackend(ing *networkingv1.Ingress) {
	if ing.Spec.DefaultBackend == nil {
		return
	}
	const where = "default backend"
	if b.t.fallback != nil {
		b.problem(ing, "%s: %s has one (older Ingresses win); ignored", where, b.t.fallback.main().Ingress)
		return
	}
	if be, ok := b.backend(ing, ing.Spec.DefaultBackend, where); ok {
		b.t.fallback = &Match{Backends: single(be)}
	}
}

// backend resolves an Ingress backend, reporting what is missing. False
// means it cannot be served at all: a resource backend, whose kind only
// its own controller knows.
func (b *builder) backend(ing *networkingv1.Ingress, ib *networkingv1.IngressBackend, where string) (Backend, bool) {
	if ib.Service == nil {
		b.problem(ing, "%s: resource backends are not supported; ignored", where)
		return Backend{}, false
	}
	be, problem := resolveService(b.in, ing.Namespace, ib.Service)
	be.Ingress = keyOf(ing)
	if problem != "" {
		b.problem(ing, "%s: %s", where, problem)
	}
	return be, true
}

// pathWhere names a rule's path in a Problem.
func pathWhere(host, path string) string {
	return fmt.Sprintf("%s, path %q", describeHost(host), path)
}
