package ingresspublish

import (
	"context"
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/orca-project/orca/internal/ingress"
	"github.com/orca-project/orca/internal/ingress/gateway"
	"github.com/orca-project/orca/internal/ingress/route"
)

// The Gateway API's status, written as gateway.Build works it out: the
// conditions of Orca's GatewayClasses, Gateways (with their listeners
// and addresses) and of the parents of HTTPRoutes that are Orca's
// Gateways. A condition keeps its transition time while its status
// stays, and a route's parents of other controllers are left alone.

// syncGateways writes the Gateway API's status, addrs being the
// Gateways' addresses.
func (c *Controller) syncGateways(ctx context.Context, in *route.Input, addrs []string) error {
	gl := c.gw.Listers()
	if gl == nil {
		return nil
	}
	gin, err := ingress.GatherGateways(gl, in)
	if err != nil {
		return err
	}
	gin.Addresses = addrs
	res := gateway.Build(gin)
	api := c.gwClient.GatewayV1()
	var errs []error
	for _, cl := range gin.Classes {
		want, ok := res.Classes[cl.Name]
		if !ok {
			continue
		}
		next := cl.DeepCopy()
		mergeConditions(&next.Status.Conditions, want.Conditions)
		next.Status.SupportedFeatures = want.SupportedFeatures
		if !apiequality.Semantic.DeepEqual(cl.Status, next.Status) {
			_, err := api.GatewayClasses().UpdateStatus(ctx, next, metav1.UpdateOptions{})
			errs = append(errs, ignoreGone(err, "GatewayClass "+cl.Name))
		}
	}
	for _, gw := range gin.Gateways {
		want, ok := res.Gateways[types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}]
		if !ok {
			continue
		}
		next := gw.DeepCopy()
		mergeConditions(&next.Status.Conditions, want.Conditions)
		next.Status.Addresses = want.Addresses
		listeners := make([]gwv1.ListenerStatus, 0, len(want.Listeners))
		for _, l := range want.Listeners {
			i := slices.IndexFunc(gw.Status.Listeners, func(o gwv1.ListenerStatus) bool { return o.Name == l.Name })
			if i >= 0 {
				conds := slices.Clone(gw.Status.Listeners[i].Conditions)
				mergeConditions(&conds, l.Conditions)
				l.Conditions = conds
			} else {
				mergeConditions(&l.Conditions, nil)
			}
			listeners = append(listeners, l)
		}
		next.Status.Listeners = listeners
		if !apiequality.Semantic.DeepEqual(gw.Status, next.Status) {
			_, err := api.Gateways(gw.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
			errs = append(errs, ignoreGone(err, "Gateway "+gw.Namespace+"/"+gw.Name))
		}
	}
	for _, r := range gin.Routes {
		want := res.Routes[types.NamespacedName{Namespace: r.Namespace, Name: r.Name}]
		next := r.DeepCopy()
		next.Status.Parents = routeParents(r.Status.Parents, want, gin.Controller)
		if !apiequality.Semantic.DeepEqual(r.Status, next.Status) {
			_, err := api.HTTPRoutes(r.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
			errs = append(errs, ignoreGone(err, "HTTPRoute "+r.Namespace+"/"+r.Name))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// mergeConditions sets each of want in conds, keeping the transition
// time of a condition whose status did not change; a condition without a
// time gets now.
func mergeConditions(conds *[]metav1.Condition, want []metav1.Condition) {
	for _, w := range want {
		meta.SetStatusCondition(conds, w)
	}
	for i := range *conds {
		if (*conds)[i].LastTransitionTime.IsZero() {
			(*conds)[i].LastTransitionTime = metav1.Now()
		}
	}
}

// routeParents is a route's parents after Orca's turn: other
// controllers' entries as they were, Orca's as want says, each keeping
// the transition times of its earlier self.
func routeParents(have, want []gwv1.RouteParentStatus, controller string) []gwv1.RouteParentStatus {
	var out []gwv1.RouteParentStatus
	for _, p := range have {
		if string(p.ControllerName) != controller {
			out = append(out, p)
		}
	}
	for _, w := range want {
		i := slices.IndexFunc(have, func(p gwv1.RouteParentStatus) bool {
			return string(p.ControllerName) == controller && apiequality.Semantic.DeepEqual(p.ParentRef, w.ParentRef)
		})
		var conds []metav1.Condition
		if i >= 0 {
			conds = slices.Clone(have[i].Conditions)
		}
		mergeConditions(&conds, w.Conditions)
		w.Conditions = conds
		out = append(out, w)
	}
	return out
}

func ignoreGone(err error, what string) error {
	if err == nil || apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("status of %s: %w", what, err)
}
