// Package resourcequota is upstream's ResourceQuota admission plugin. It
// runs last: a create (or an update that grows usage) is measured, checked
// against every ResourceQuota of the namespace that covers it, and
// charged into those quotas' status.used before the object is stored.
// The charge is a compare-and-swap on the quota, so concurrent requests
// serialise on it and cannot together overshoot a limit; the quota
// controller later recounts status.used from what is actually stored,
// which also returns the usage of objects that are gone.
package resourcequota

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/quota"
)

// PluginName is upstream's name for the plugin.
const PluginName = "ResourceQuota"

var (
	quotasGVR = corev1.SchemeGroupVersion.WithResource("resourcequotas")
	podsGR    = corev1.SchemeGroupVersion.WithResource("pods").GroupResource()
)

// Plugin enforces and charges quotas.
type Plugin struct{ objects admission.Objects }

// New builds the plugin over the server's storage.
func New(objects admission.Objects) *Plugin { return &Plugin{objects: objects} }

func (*Plugin) Name() string { return PluginName }

// Validate checks and charges the request.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	// A pod's resources change only through /resize, which upstream
	// charges as an update: what it grows is charged.
	resize := a.Subresource == "resize" && a.Resource.GroupResource() == podsGR && a.Operation == admission.Update
	if (a.Subresource != "" && !resize) || a.Namespace == "" || a.Object == nil {
		return nil
	}
	if a.Operation != admission.Create && a.Operation != admission.Update {
		return nil
	}
	eval := quota.ForResource(a.Resource.GroupResource())
	if a.Operation == admission.Update && !eval.HandlesUpdate() && !resize {
		return nil
	}
	items, err := p.objects.List(ctx, quotasGVR, a.Namespace)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("list resource quotas in %s: %w", a.Namespace, err))
	}
	if len(items) == 0 {
		return nil
	}
	var covering []string
	for _, it := range items {
		q, ok := it.(*corev1.ResourceQuota)
		if !ok {
			continue
		}
		match, err := quota.Matches(q, eval, a.Object)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("match quota %s: %w", q.Name, err))
		}
		if !match {
			continue
		}
		restricted := eval.MatchingResources(quota.Names(q.Status.Hard))
		if err := eval.Constraints(restricted, a.Object); err != nil {
			return admission.NewForbidden(a, fmt.Errorf("failed quota: %s: %v", q.Name, err))
		}
		if missing := missingUsage(q, restricted); len(missing) > 0 {
			return admission.NewForbidden(a, fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, quota.PrettyPrintNames(missing)))
		}
		covering = append(covering, q.Name)
	}
	if len(covering) == 0 {
		return nil
	}
	delta, err := p.delta(a, eval)
	if err != nil || len(delta) == 0 {
		return err
	}
	if a.DryRun {
		// A dry run is checked against the quotas but charges nothing.
		for _, name := range covering {
			if _, err := p.charge(ctx, a, name, eval, delta, false); err != nil {
				return err
			}
		}
		return nil
	}
	var charged []string
	for _, name := range covering {
		if _, err := p.charge(ctx, a, name, eval, delta, true); err != nil {
			// Give back what the quotas checked so far were charged: the
			// request fails as a whole.
			p.refund(ctx, a.Namespace, charged, delta)
			return err
		}
		charged = append(charged, name)
	}
	return nil
}

// delta is what the request adds: the object's usage, less the stored
// version's on update, with zero entries dropped.
func (p *Plugin) delta(a *admission.Attributes, eval quota.Evaluator) (corev1.ResourceList, error) {
	usage, err := eval.Usage(a.Object)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("measure quota usage: %w", err))
	}
	if neg := quota.IsNegative(usage); len(neg) > 0 {
		return nil, admission.NewForbidden(a, fmt.Errorf("quota usage is negative for resource(s): %s", quota.PrettyPrintNames(neg)))
	}
	if a.Operation == admission.Update {
		if a.OldObject == nil {
			return nil, admission.NewForbidden(a, fmt.Errorf("unable to get previous usage since prior version of object was not found"))
		}
		if acc, err := meta.Accessor(a.OldObject); err == nil && acc.GetResourceVersion() != "" {
			prev, err := eval.Usage(a.OldObject)
			if err != nil {
				return nil, apierrors.NewInternalError(fmt.Errorf("measure previous quota usage: %w", err))
			}
			usage = quota.SubtractWithNonNegativeResult(usage, prev)
		}
	}
	return quota.RemoveZeros(usage), nil
}

// missingUsage lists the limited resources the controller has not
// counted yet; upstream refuses rather than guess.
func missingUsage(q *corev1.ResourceQuota, names []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, n := range names {
		if _, ok := q.Status.Used[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}

// charge adds delta to one quota's status.used if it fits, re-checking
// against the stored quota on every attempt so that concurrent charges
// are serialised by the quota's resourceVersion.
func (p *Plugin) charge(ctx context.Context, a *admission.Attributes, name string, eval quota.Evaluator, delta corev1.ResourceList, write bool) (runtime.Object, error) {
	check := func(obj runtime.Object) (runtime.Object, error) {
		q, ok := obj.(*corev1.ResourceQuota)
		if !ok {
			return nil, apierrors.NewInternalError(fmt.Errorf("stored resource quota %s is a %T", name, obj))
		}
		// The quota may have changed since it was listed: it is charged
		// only if it still covers the object. Returning it unchanged
		// writes nothing.
		if match, err := quota.Matches(q, eval, a.Object); err != nil || !match {
			return q, nil
		}
		requested := quota.Mask(delta, quota.Names(q.Status.Hard))
		if len(requested) == 0 {
			return q, nil
		}
		used := quota.Add(q.Status.Used, requested)
		if ok, exceeded := quota.LessThanOrEqual(quota.Mask(used, quota.Names(requested)), q.Status.Hard); !ok {
			return nil, admission.NewForbidden(a, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s", q.Name,
				quota.PrettyPrint(quota.Mask(requested, exceeded)),
				quota.PrettyPrint(quota.Mask(q.Status.Used, exceeded)),
				quota.PrettyPrint(quota.Mask(q.Status.Hard, exceeded))))
		}
		q.Status.Used = used
		return q, nil
	}
	var out runtime.Object
	var err error
	if write {
		out, err = p.objects.Update(ctx, quotasGVR, a.Namespace, name, check)
	} else {
		var cur runtime.Object
		if cur, err = p.objects.Get(ctx, quotasGVR, a.Namespace, name); err == nil {
			out, err = check(cur.DeepCopyObject())
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil && !apierrors.IsForbidden(err):
		return nil, apierrors.NewInternalError(fmt.Errorf("charge resource quota %s/%s: %w", a.Namespace, name, err))
	}
	return out, err
}

// refund takes a failed request's charge back out of quotas, best effort:
// the controller's recount corrects anything left over.
func (p *Plugin) refund(ctx context.Context, ns string, names []string, delta corev1.ResourceList) {
	for _, name := range names {
		_, _ = p.objects.Update(ctx, quotasGVR, ns, name, func(obj runtime.Object) (runtime.Object, error) {
			q, ok := obj.(*corev1.ResourceQuota)
			if !ok {
				return obj, nil
			}
			back := quota.Mask(delta, quota.Names(q.Status.Used))
			q.Status.Used = quota.SubtractWithNonNegativeResult(q.Status.Used, back)
			return q, nil
		})
	}
}
