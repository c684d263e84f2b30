// Package ingresspublish publishes Orca's built-in ingress to the cluster,
// once for all the nodes that serve it (the controller manager's leader
// runs it):
//
//   - the orca-ingress LoadBalancer Service in kube-system, whose
//     addresses (the service-lb controller's: the nodes', or one of a
//     pool) are where Ingresses are served. It has no selector and
//     externalTrafficPolicy Local, so that each node hands traffic for
//     those addresses to its own ingress with the client's address kept;
//   - its EndpointSlices: one endpoint per node whose agent serves the
//     ingress (the node label the agent sets once its ports listen), at
//     the node's InternalIP, ready while the node is Ready;
//   - the status.loadBalancer of every Ingress of the class: the
//     Service's addresses, as ingress-nginx publishes its Service's;
//   - a Warning event on an Ingress for each problem the routing table
//     meets in it (a Service or port that does not exist, a path an
//     older Ingress already routes, a TLS Secret that is not one), which
//     the nodes only log.
//
// What to write is decided by pure functions over the objects (Service,
// Endpoints, Slices, Status); the controller compares and writes.
package ingresspublish

import (
	"cmp"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/ingress"
)

// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
// slices this controller writes, which other controllers leave alone.
const ManagedBy = "ingress-publisher.orca.io"

// maxPerSlice is upstream's default --max-endpoints-per-slice.
const maxPerSlice = 100

// Service is the orca-ingress Service as the controller creates it.
func Service() *v1.Service {
	return &v1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: ingress.ServiceName, Namespace: ingress.ServiceNamespace,
			Labels: map[string]string{"app.kubernetes.io/name": ingress.ServiceName, "app.kubernetes.io/managed-by": "orca"},
		},
		Spec: v1.ServiceSpec{
			Type:                          v1.ServiceTypeLoadBalancer,
			ExternalTrafficPolicy:         v1.ServiceExternalTrafficPolicyLocal,
			AllocateLoadBalancerNodePorts: ptr.To(false),
			Ports: []v1.ServicePort{
				{Name: "http", Protocol: v1.ProtocolTCP, Port: ingress.HTTPPort, TargetPort: intstr.FromInt32(ingress.HTTPPort)},
				{Name: "https", Protocol: v1.ProtocolTCP, Port: ingress.HTTPSPort, TargetPort: intstr.FromInt32(ingress.HTTPSPort)},
			},
		},
	}
}

// Endpoints are the Service's endpoints: one per node labelled as
// serving the ingress that has an InternalIP, by node name, ready while
// the node is Ready.
func Endpoints(nodes []*v1.Node) []discoveryv1.Endpoint {
	var out []discoveryv1.Endpoint
	for _, n := range nodes {
		ip := internalIP(n)
		if n.Labels[ingress.NodeLabel] != "true" || ip == "" || n.DeletionTimestamp != nil {
			continue
		}
		ready := nodeReady(n)
		e := discoveryv1.Endpoint{
			Addresses:  []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready), Serving: ptr.To(ready), Terminating: ptr.To(false)},
			NodeName:   ptr.To(n.Name),
		}
		if z, ok := n.Labels[v1.LabelTopologyZone]; ok {
			e.Zone = ptr.To(z)
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b discoveryv1.Endpoint) int { return cmp.Compare(*a.NodeName, *b.NodeName) })
	return out
}

// SliceName is the name of the i-th slice.
func SliceName(i int) string { return ingress.ServiceName + "-" + strconv.Itoa(i) }

// Slices are the EndpointSlices holding eps, maxPerSlice each, named
// SliceName(0), SliceName(1)... and owned by svc. There is always one,
// empty if need be, as upstream keeps a placeholder slice for a Service
// without endpoints.
func Slices(svc *v1.Service, eps []discoveryv1.Endpoint) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for i := 0; i == 0 || i*maxPerSlice < len(eps); i++ {
		chunk := eps[i*maxPerSlice : min((i+1)*maxPerSlice, len(eps))]
		out = append(out, &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{
				Name: SliceName(i), Namespace: svc.Namespace,
				Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: ManagedBy},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID,
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   slices.Clone(chunk),
			Ports: []discoveryv1.EndpointPort{
				{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To(int32(ingress.HTTPPort))},
				{Name: ptr.To("https"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To(int32(ingress.HTTPSPort))},
			},
		})
	}
	return out
}

// Status is what the status of an Ingress of the class says: the
// Service's load balancer addresses.
func Status(svc *v1.Service) networkingv1.IngressLoadBalancerStatus {
	var st networkingv1.IngressLoadBalancerStatus
	if svc == nil {
		return st
	}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" || in.Hostname != "" {
			st.Ingress = append(st.Ingress, networkingv1.IngressLoadBalancerIngress{IP: in.IP, Hostname: in.Hostname})
		}
	}
	return st
}

func internalIP(n *v1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == v1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

func nodeReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
