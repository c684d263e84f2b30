package route

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
)

// annotationIngressClass is the class annotation that
// spec.ingressClassName replaced; Ingresses written before it still
// carry it.
const annotationIngressClass = "kubernetes.io/ingress.class"

// Input is what Build reads, gathered by the caller from its informers.
// Build neither modifies nor keeps any of it.
type Input struct {
	// Class is the name of the IngressClass this controller serves.
	Class string
	// DefaultClass says whether that IngressClass is the cluster's
	// default, which makes Ingresses without any class ours.
	DefaultClass bool
	// Ingresses are all Ingresses; Build picks those of Class.
	Ingresses []*networkingv1.Ingress
	// Services are the Services backends may name.
	Services map[types.NamespacedName]*corev1.Service
	// Endpoints are the EndpointSlices of each Service, keyed by the
	// Service.
	Endpoints map[types.NamespacedName][]*discoveryv1.EndpointSlice
	// Secrets are the TLS Secrets spec.tls may name.
	Secrets map[types.NamespacedName]*corev1.Secret
}

// Problem is something wrong with one Ingress that the controller would
// report as an event on it. Build still routes what it can.
type Problem struct {
	Ingress types.NamespacedName
	Message string
}

func (p Problem) String() string { return p.Ingress.String() + ": " + p.Message }

// Ours reports whether this controller handles ing, with upstream's
// semantics: the class field decides if set, else the old annotation,
// else an Ingress without a class belongs to the default class. An empty
// annotation counts as absent, as in ingress-nginx.
func (in *Input) Ours(ing *networkingv1.Ingress) bool {
	if ing.Spec.IngressClassName != nil {
		return *ing.Spec.IngressClassName == in.Class
	}
	if class := ing.Annotations[annotationIngressClass]; class != "" {
		return class == in.Class
	}
	return in.DefaultClass
}

// ourIngresses are the Ingresses of the class, oldest first: the order in
// which they claim hosts, paths and default backends, so that the same
// objects always give the same table whatever order the cache lists
// them in.
func (in *Input) ourIngresses() []*networkingv1.Ingress {
	var out []*networkingv1.Ingress
	for _, ing := range in.Ingresses {
		if in.Ours(ing) {
			out = append(out, ing)
		}
	}
	slices.SortFunc(out, olderFirst)
	return out
}

// olderFirst orders Ingresses by creation, then namespace and name, as
// ingress-nginx settles conflicts.
func olderFirst(a, b *networkingv1.Ingress) int {
	return cmp.Or(
		a.CreationTimestamp.Compare(b.CreationTimestamp.Time),
		strings.Compare(a.Namespace, b.Namespace),
		strings.Compare(a.Name, b.Name),
	)
}

func keyOf(ing *networkingv1.Ingress) types.NamespacedName {
	return types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}
}
