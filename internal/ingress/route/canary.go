package route

import (
	"fmt"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
)

// The canary annotations of ingress-nginx, which users already know.
const (
	annotationCanary              = "nginx.ingress.kubernetes.io/canary"
	annotationCanaryWeight        = "nginx.ingress.kubernetes.io/canary-weight"
	annotationCanaryWeightTotal   = "nginx.ingress.kubernetes.io/canary-weight-total"
	annotationCanaryByHeader      = "nginx.ingress.kubernetes.io/canary-by-header"
	annotationCanaryByHeaderValue = "nginx.ingress.kubernetes.io/canary-by-header-value"
)

// unsupportedCanaryAnnotations are ingress-nginx canary rules Orca does
// not follow. They are reported, since the canary then takes requests
// its author meant to keep away from it.
var unsupportedCanaryAnnotations = []string{
	"nginx.ingress.kubernetes.io/canary-by-header-pattern",
	"nginx.ingress.kubernetes.io/canary-by-cookie",
}

// canary is what a canary Ingress asks: weight of total requests, and
// the header that overrides the weights.
type canary struct {
	weight, total       int
	header, headerValue string
}

// canaryOf reads an Ingress's canary annotations. isCanary is false for
// a main Ingress; err says why a canary cannot be used, in which case it
// is neither canary nor main.
func canaryOf(ing *networkingv1.Ingress) (c canary, isCanary bool, err error) {
	v, set := ing.Annotations[annotationCanary]
	if !set {
		return canary{}, false, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return canary{}, true, fmt.Errorf("annotation %s: %q is not a boolean", annotationCanary, v)
	}
	if !on {
		return canary{}, false, nil
	}
	c = canary{
		header:      ing.Annotations[annotationCanaryByHeader],
		headerValue: ing.Annotations[annotationCanaryByHeaderValue],
	}
	if c.total, err = intAnnotation(ing, annotationCanaryWeightTotal, fullWeight); err != nil {
		return c, true, err
	}
	if c.weight, err = intAnnotation(ing, annotationCanaryWeight, 0); err != nil {
		return c, true, err
	}
	if c.total < 1 || c.weight < 0 || c.weight > c.total {
		return c, true, fmt.Errorf("canary weight %d of %d is out of range", c.weight, c.total)
	}
	return c, true, nil
}

func intAnnotation(ing *networkingv1.Ingress, name string, def int) (int, error) {
	v, set := ing.Annotations[name]
	if !set {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("annotation %s: %q is not an integer", name, v)
	}
	return n, nil
}

// addCanary attaches a canary Ingress's paths to the same host and path
// of a main Ingress, as alternatives taking the canary's weight.
func (b *builder) addCanary(ing *networkingv1.Ingress, c canary) {
	for _, a := range unsupportedCanaryAnnotations {
		if _, set := ing.Annotations[a]; set {
			b.problem(ing, "annotation %s is not supported; ignored", a)
		}
	}
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		host := strings.ToLower(rule.Host)
		for _, p := range rule.HTTP.Paths {
			b.addCanaryPath(ing, c, host, p)
		}
	}
}

// addCanaryPath attaches one path. Like ingress-nginx, Orca takes one
// canary a path: the oldest.
func (b *builder) addCanaryPath(ing *networkingv1.Ingress, c canary, host string, p networkingv1.HTTPIngressPath) {
	where := pathWhere(host, p.Path)
	var m *Match
	if vh := b.t.vhosts[host]; vh != nil {
		m = vh.byRule[newPathRule(p.Path, p.PathType)]
	}
	switch {
	case m == nil:
		b.problem(ing, "%s: no main Ingress routes it; canary ignored", where)
		return
	case m.canary() != nil:
		b.problem(ing, "%s: %s is its canary already; ignored", where, m.canary().Ingress)
		return
	}
	be, ok := b.backend(ing, &p.Backend, where)
	if !ok {
		return
	}
	m.Backends[0].Weight = c.total - c.weight
	m.Backends = append(m.Backends, WeightedBackend{Backend: be, Weight: c.weight})
	m.CanaryHeader, m.CanaryHeaderValue = c.header, c.headerValue
}
