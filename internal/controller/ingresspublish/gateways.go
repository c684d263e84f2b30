package ingresspublish

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
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

// GatewayService is the Service that gives gw addresses of its own: a
// cluster IP whose ports (those of gw's listeners among the ingress
// ports) lead to the ingress of the node the connection is made on
// (internalTrafficPolicy Local), which finds the Gateway by the address
// dialled and routes by its routes alone. nil when gw has no listener on
// an ingress port. Owned by gw, so it goes with it.
func GatewayService(gw *gwv1.Gateway) *v1.Service {
	var ports []v1.ServicePort
	for _, l := range gw.Spec.Listeners {
		var name string
		switch l.Port {
		case ingress.HTTPPort:
			name = "http"
		case ingress.HTTPSPort:
			name = "https"
		default:
			continue
		}
		if !slices.ContainsFunc(ports, func(p v1.ServicePort) bool { return p.Name == name }) {
			ports = append(ports, v1.ServicePort{Name: name, Protocol: v1.ProtocolTCP, Port: int32(l.Port), TargetPort: intstr.FromInt32(int32(l.Port))})
		}
	}
	if len(ports) == 0 {
		return nil
	}
	slices.SortFunc(ports, func(a, b v1.ServicePort) int { return cmp.Compare(a.Port, b.Port) })
	return &v1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: gateway.ServiceName(gw.Name), Namespace: gw.Namespace,
			Labels: map[string]string{gateway.NameLabel: gw.Name, "app.kubernetes.io/managed-by": "orca"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: gwv1.GroupVersion.String(), Kind: "Gateway", Name: gw.Name, UID: gw.UID,
				Controller: ptr.To(true)}},
		},
		Spec: v1.ServiceSpec{
			Type:                  v1.ServiceTypeClusterIP,
			InternalTrafficPolicy: ptr.To(v1.ServiceInternalTrafficPolicyLocal),
			Ports:                 ports,
		},
	}
}

// GatewaySlice is the EndpointSlice of a Gateway's Service: the ingress
// nodes, as orca-ingress has them, on the Service's ports.
func GatewaySlice(svc *v1.Service, eps []discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: svc.Name, Namespace: svc.Namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: ManagedBy},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   slices.Clone(eps),
	}
	for _, p := range svc.Spec.Ports {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To(p.TargetPort.IntVal)})
	}
	return s
}

// syncGatewayServices keeps a Service and its slice for every Gateway of
// Orca's classes, and removes those of Gateways that are no longer
// Orca's or have no ingress port. Gateways that are deleted take theirs
// along through their owner references.
func (c *Controller) syncGatewayServices(ctx context.Context, eps []discoveryv1.Endpoint) error {
	gl := c.gw.Listers()
	if gl == nil {
		return nil
	}
	classes, err := gl.Classes.List(labels.Everything())
	if err != nil {
		return err
	}
	ours := map[string]bool{}
	for _, cl := range classes {
		ours[cl.Name] = string(cl.Spec.ControllerName) == ingress.GatewayControllerName
	}
	gws, err := gl.Gateways.List(labels.Everything())
	if err != nil {
		return err
	}
	wanted := map[types.NamespacedName]bool{}
	var errs []error
	for _, gw := range gws {
		if !ours[string(gw.Spec.GatewayClassName)] || gw.DeletionTimestamp != nil {
			continue
		}
		want := GatewayService(gw)
		if want == nil {
			continue
		}
		wanted[types.NamespacedName{Namespace: want.Namespace, Name: want.Name}] = true
		svc, err := c.ensureGatewayService(ctx, want)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, c.syncSlice(ctx, GatewaySlice(svc, eps)))
	}
	have, err := c.services.List(labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": "orca"}))
	if err != nil {
		return err
	}
	for _, svc := range have {
		if _, ok := svc.Labels[gateway.NameLabel]; !ok || wanted[types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}] {
			continue
		}
		err := c.client.CoreV1().Services(svc.Namespace).Delete(ctx, svc.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &svc.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("delete gateway service %s/%s: %w", svc.Namespace, svc.Name, err))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// ensureGatewayService creates want, or brings the Service's ports,
// policy, labels and owner back to it. A Service of the name that is not
// marked as the Gateway's is not touched.
func (c *Controller) ensureGatewayService(ctx context.Context, want *v1.Service) (*v1.Service, error) {
	api := c.client.CoreV1().Services(want.Namespace)
	cur, err := c.services.Services(want.Namespace).Get(want.Name)
	if apierrors.IsNotFound(err) {
		svc, err := api.Create(ctx, want, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("create gateway service %s/%s: %w", want.Namespace, want.Name, err)
		}
		return svc, nil
	}
	if err != nil {
		return nil, err
	}
	if cur.Labels[gateway.NameLabel] != want.Labels[gateway.NameLabel] {
		// Somebody else's Service of that name: the Gateway goes without
		// an address of its own rather than take it over.
		return nil, fmt.Errorf("service %s/%s is not Gateway %s's; left alone", cur.Namespace, cur.Name, want.Labels[gateway.NameLabel])
	}
	if apiequality.Semantic.DeepEqual(cur.Spec.Ports, want.Spec.Ports) && cur.Spec.Type == want.Spec.Type &&
		apiequality.Semantic.DeepEqual(cur.Spec.InternalTrafficPolicy, want.Spec.InternalTrafficPolicy) &&
		apiequality.Semantic.DeepEqual(cur.OwnerReferences, want.OwnerReferences) {
		return cur, nil
	}
	next := cur.DeepCopy()
	next.Labels, next.OwnerReferences = want.Labels, want.OwnerReferences
	next.Spec.Type, next.Spec.Ports, next.Spec.InternalTrafficPolicy = want.Spec.Type, want.Spec.Ports, want.Spec.InternalTrafficPolicy
	svc, err := api.Update(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update gateway service %s/%s: %w", want.Namespace, want.Name, err)
	}
	return svc, nil
}
