// Package limitranger is upstream's LimitRanger admission plugin: the
// LimitRange objects of a namespace fill in containers' default requests
// and limits (mutating phase) and bound what containers, pods and
// persistent volume claims may ask for (validating phase).
package limitranger

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/orca-project/orca/internal/admission"
)

// PluginName is upstream's name for the plugin.
const PluginName = "LimitRanger"

// Annotation records on a pod which defaults the plugin filled in.
const Annotation = "kubernetes.io/limit-ranger"

var (
	podsGVR        = corev1.SchemeGroupVersion.WithResource("pods")
	pvcsGVR        = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	limitRangesGVR = corev1.SchemeGroupVersion.WithResource("limitranges")
)

// Plugin applies LimitRanges.
type Plugin struct{ objects admission.Objects }

// New builds the plugin over the server's storage.
func New(objects admission.Objects) *Plugin { return &Plugin{objects: objects} }

func (*Plugin) Name() string { return PluginName }

// handles: pods on create and on resize (their containers' resources
// change only there) and claims on create and update (a claim may grow).
func handles(a *admission.Attributes) bool {
	if a.Resource == podsGVR && a.Subresource == "resize" {
		return a.Operation == admission.Update
	}
	if a.Subresource != "" {
		return false
	}
	switch a.Resource {
	case podsGVR:
		return a.Operation == admission.Create
	case pvcsGVR:
		return a.Operation == admission.Create || a.Operation == admission.Update
	}
	return false
}

// Admit fills in container defaults.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	return p.run(ctx, a, func(lr *corev1.LimitRange) error {
		if pod, ok := a.Object.(*corev1.Pod); ok {
			// A resize keeps the pod's annotations, as upstream's
			// resets them after admission.
			mergePodResources(pod, defaultResources(lr), a.Subresource == "")
		}
		return nil
	})
}

// Validate enforces min, max and maxLimitRequestRatio.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	return p.run(ctx, a, func(lr *corev1.LimitRange) error {
		switch obj := a.Object.(type) {
		case *corev1.Pod:
			return ValidatePod(lr, obj)
		case *corev1.PersistentVolumeClaim:
			return ValidateClaim(lr, obj)
		}
		return nil
	})
}

func (p *Plugin) run(ctx context.Context, a *admission.Attributes, fn func(*corev1.LimitRange) error) error {
	if !handles(a) || a.Object == nil {
		return nil
	}
	// An object on its way out is not held to limits any more.
	if a.OldObject != nil {
		if acc, err := meta.Accessor(a.OldObject); err == nil && acc.GetDeletionTimestamp() != nil {
			return nil
		}
	}
	items, err := p.objects.List(ctx, limitRangesGVR, a.Namespace)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("list limit ranges in %s: %w", a.Namespace, err))
	}
	for _, it := range items {
		lr, ok := it.(*corev1.LimitRange)
		if !ok {
			continue
		}
		if err := fn(lr); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	return nil
}

// defaultResources collects a range's Container defaults: default becomes
// the limit, defaultRequest the request.
func defaultResources(lr *corev1.LimitRange) corev1.ResourceRequirements {
	req := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for _, l := range lr.Spec.Limits {
		if l.Type != corev1.LimitTypeContainer {
			continue
		}
		for k, v := range l.DefaultRequest {
			req.Requests[k] = v.DeepCopy()
		}
		for k, v := range l.Default {
			req.Limits[k] = v.DeepCopy()
		}
	}
	return req
}

func mergePodResources(pod *corev1.Pod, defaults corev1.ResourceRequirements, annotate bool) {
	var notes []string
	for i := range pod.Spec.Containers {
		notes = mergeContainer(&pod.Spec.Containers[i], defaults, "container", notes)
	}
	for i := range pod.Spec.InitContainers {
		notes = mergeContainer(&pod.Spec.InitContainers[i], defaults, "init container", notes)
	}
	if len(notes) > 0 && annotate {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[Annotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
	}
}

func mergeContainer(c *corev1.Container, defaults corev1.ResourceRequirements, kind string, notes []string) []string {
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	var setReq, setLim []string
	for k, v := range defaults.Limits {
		if _, ok := c.Resources.Limits[k]; !ok {
			c.Resources.Limits[k] = v.DeepCopy()
			setLim = append(setLim, string(k))
		}
	}
	for k, v := range defaults.Requests {
		if _, ok := c.Resources.Requests[k]; !ok {
			c.Resources.Requests[k] = v.DeepCopy()
			setReq = append(setReq, string(k))
		}
	}
	if len(setReq) > 0 {
		sort.Strings(setReq)
		notes = append(notes, strings.Join(setReq, ", ")+fmt.Sprintf(" request for %s %s", kind, c.Name))
	}
	if len(setLim) > 0 {
		sort.Strings(setLim)
		notes = append(notes, strings.Join(setLim, ", ")+fmt.Sprintf(" limit for %s %s", kind, c.Name))
	}
	return notes
}

// sortedNames iterates a resource list in a stable order, so that a
// request breaking several bounds always gets the same message.
func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// checkBounds applies one LimitRangeItem to a set of requests and limits.
func checkBounds(l corev1.LimitRangeItem, req, lim corev1.ResourceList) []error {
	var errs []error
	typ := string(l.Type)
	for _, k := range sortedNames(l.Min) {
		if err := minConstraint(typ, string(k), l.Min[k], req, lim); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range sortedNames(l.Max) {
		if err := maxConstraint(typ, string(k), l.Max[k], req, lim); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range sortedNames(l.MaxLimitRequestRatio) {
		if err := ratioConstraint(typ, string(k), l.MaxLimitRequestRatio[k], req, lim); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// ValidatePod checks a pod against a range's Container and Pod items.
func ValidatePod(lr *corev1.LimitRange, pod *corev1.Pod) error {
	var errs []error
	for _, l := range lr.Spec.Limits {
		switch l.Type {
		case corev1.LimitTypeContainer:
			for _, c := range pod.Spec.Containers {
				errs = append(errs, checkBounds(l, c.Resources.Requests, c.Resources.Limits)...)
			}
			for _, c := range pod.Spec.InitContainers {
				errs = append(errs, checkBounds(l, c.Resources.Requests, c.Resources.Limits)...)
			}
		case corev1.LimitTypePod:
			opts := resourcehelper.PodResourcesOptions{}
			errs = append(errs, checkBounds(l, resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts))...)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// ValidateClaim checks a claim's storage request against a range's
// PersistentVolumeClaim items; a claim's limits are not user input.
func ValidateClaim(lr *corev1.LimitRange, pvc *corev1.PersistentVolumeClaim) error {
	var errs []error
	for _, l := range lr.Spec.Limits {
		if l.Type != corev1.LimitTypePersistentVolumeClaim {
			continue
		}
		for _, k := range sortedNames(l.Min) {
			if err := minConstraint(string(l.Type), string(k), l.Min[k], pvc.Spec.Resources.Requests, corev1.ResourceList{}); err != nil {
				errs = append(errs, err)
			}
		}
		for _, k := range sortedNames(l.Max) {
			if err := maxRequestConstraint(string(l.Type), string(k), l.Max[k], pvc.Spec.Resources.Requests); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

// values compares in milli-units when nothing overflows, in units
// otherwise, as upstream does.
func values(req, lim, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := req.Value(), lim.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return req.MilliValue(), lim.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(typ, name string, enforced resource.Quantity, request, limit corev1.ResourceList) error {
	req, reqOK := request[corev1.ResourceName(name)]
	lim, limOK := limit[corev1.ResourceName(name)]
	r, l, e := values(req, lim, enforced)
	if !reqOK {
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, typ, enforced.String())
	}
	if r < e {
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	}
	if limOK && l < e {
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, typ, enforced.String(), lim.String())
	}
	return nil
}

func maxRequestConstraint(typ, name string, enforced resource.Quantity, request corev1.ResourceList) error {
	req, reqOK := request[corev1.ResourceName(name)]
	r, _, e := values(req, resource.Quantity{}, enforced)
	if !reqOK {
		return fmt.Errorf("maximum %s usage per %s is %s.  No request is specified", name, typ, enforced.String())
	}
	if r > e {
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	}
	return nil
}

func maxConstraint(typ, name string, enforced resource.Quantity, request, limit corev1.ResourceList) error {
	req, reqOK := request[corev1.ResourceName(name)]
	lim, limOK := limit[corev1.ResourceName(name)]
	r, l, e := values(req, lim, enforced)
	if !limOK {
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, typ, enforced.String())
	}
	if l > e {
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, typ, enforced.String(), lim.String())
	}
	if reqOK && r > e {
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	}
	return nil
}

func ratioConstraint(typ, name string, enforced resource.Quantity, request, limit corev1.ResourceList) error {
	req, reqOK := request[corev1.ResourceName(name)]
	lim, limOK := limit[corev1.ResourceName(name)]
	r, l, _ := values(req, lim, enforced)
	if !reqOK || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, typ, enforced.String())
	}
	if !limOK || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, typ, enforced.String())
	}
	observed := float64(l) / float64(r)
	shown := observed
	maxRatio := float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		observed *= 1000
		maxRatio = float64(enforced.MilliValue())
	}
	if observed > maxRatio {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, typ, enforced.String(), shown)
	}
	return nil
}
