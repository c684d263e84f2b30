// Package defaultingressclass is upstream's DefaultIngressClass admission
// plugin: a new Ingress that names no class, neither in
// spec.ingressClassName nor in the deprecated kubernetes.io/ingress.class
// annotation, gets the class marked default
// (ingressclass.kubernetes.io/is-default-class: "true"); of several
// default classes, the newest.
package defaultingressclass

import (
	"context"
	"sort"

	networkingv1 "k8s.io/api/networking/v1"
	networkingv1beta1 "k8s.io/api/networking/v1beta1"

	"github.com/orca-project/orca/internal/admission"
)

// PluginName is upstream's name for the plugin.
const PluginName = "DefaultIngressClass"

var (
	ingressesGVR      = networkingv1.SchemeGroupVersion.WithResource("ingresses")
	ingressClassesGVR = networkingv1.SchemeGroupVersion.WithResource("ingressclasses")
)

// Plugin defaults the class of new Ingresses.
type Plugin struct{ objects admission.Objects }

var _ admission.Mutator = (*Plugin)(nil)

// New builds the plugin over the server's storage.
func New(objects admission.Objects) *Plugin { return &Plugin{objects: objects} }

func (*Plugin) Name() string { return PluginName }

// Admit sets a new Ingress's class to the default one, if any.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Create || a.Subresource != "" || a.Resource.GroupResource() != ingressesGVR.GroupResource() {
		return nil
	}
	ing, ok := a.Object.(*networkingv1.Ingress)
	if !ok || ing.Spec.IngressClassName != nil {
		return nil
	}
	if _, ok := ing.Annotations[networkingv1beta1.AnnotationIngressClass]; ok {
		return nil
	}
	objs, err := p.objects.List(ctx, ingressClassesGVR, "")
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	var classes []*networkingv1.IngressClass
	for _, o := range objs {
		if c, ok := o.(*networkingv1.IngressClass); ok {
			classes = append(classes, c)
		}
	}
	if c := Default(classes); c != nil {
		name := c.Name
		ing.Spec.IngressClassName = &name
	}
	return nil
}

// Default is the class new Ingresses get: the newest of those marked
// default (by name among equals), nil when none is.
func Default(classes []*networkingv1.IngressClass) *networkingv1.IngressClass {
	var defaults []*networkingv1.IngressClass
	for _, c := range classes {
		if c.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			defaults = append(defaults, c)
		}
	}
	if len(defaults) == 0 {
		return nil
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].CreationTimestamp.UnixNano(), defaults[j].CreationTimestamp.UnixNano()
		if ti == tj {
			return defaults[i].Name < defaults[j].Name
		}
		return ti > tj
	})
	return defaults[0]
}
