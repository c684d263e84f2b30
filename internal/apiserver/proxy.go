package apiserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/proxy"
	translator "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/streaming/pkg/httpstream"
)

// The proxy subresources: pods/proxy, services/proxy and nodes/proxy pass
// a request of any method (upgrades too) to a pod, to a ready endpoint of
// a service, or to a node's kubelet, with the path after /proxy and the
// query, as upstream's API server does. As upstream, links in HTML
// answers are rewritten to come back through the proxy, and a GET of a
// bare .../proxy is redirected to .../proxy/ so that the backend's
// relative links resolve under it.

var (
	servicesGVR       = corev1.SchemeGroupVersion.WithResource("services")
	endpointSlicesGVR = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
	podsGVR           = corev1.SchemeGroupVersion.WithResource("pods")
)

// newPodTransport is the API server's client of pods, service endpoints
// and nodes' other ports for the proxy subresources; their certificates
// are not verified, as upstream's proxy does not verify them.
func newPodTransport() *http.Transport {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		DialContext:         d.DialContext,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 10,
		IdleConnTimeout:     90 * time.Second,
	}
}

// proxyableIP is upstream's rule for where a proxy may go: only global
// unicast addresses, so that whoever writes a pod's IP or a node's
// address cannot point the API server at its own loopback or link-local
// services.
func proxyableIP(ip net.IP) bool { return ip.IsGlobalUnicast() }

// serveProxy is the proxy subresource of pods, services and nodes; the
// name is upstream's "[scheme:]name[:port]".
func (s *Server) serveProxy(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	scheme, name, port, ok := utilnet.SplitSchemeNamePort(ri.Name)
	if !ok {
		s.writeError(w, r, badRequest("invalid %s request %q", res.Singular, ri.Name))
		return
	}
	ctx := r.Context()
	var (
		loc *url.URL
		rt  http.RoundTripper = s.podTransport
		err error
	)
	switch res.Name {
	case "pods":
		loc, err = s.podProxyLocation(ctx, res, ri.Namespace, name, scheme, port)
	case "services":
		loc, err = s.serviceProxyLocation(ctx, ri.Namespace, name, scheme, port)
	case "nodes":
		var toKubelet bool
		loc, toKubelet, err = s.nodeProxyLocation(ctx, res, name, scheme, port)
		if toKubelet {
			rt = s.kubelet
		}
	default:
		err = errNotFoundPath()
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// An empty path is what makes the handler redirect a GET or HEAD of
	// the bare .../proxy; a trailing slash is carried over by it.
	loc.Path = ri.ProxyPath
	h := proxy.NewUpgradeAwareHandler(loc, rt, true, false, errorResponder{s})
	if httpstream.IsUpgradeRequest(r) {
		w = hijackable(w)
	}
	h.ServeHTTP(w, r)
}

func (s *Server) podProxyLocation(ctx context.Context, res *resource, ns, name, scheme, port string) (*url.URL, error) {
	obj, err := s.get(ctx, res, ns, name, "")
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("stored pod is a %T", obj)
	}
	return podLocation(pod, scheme, port, s.proxyable)
}

// podLocation is where pods/proxy sends a request for the pod, as
// upstream's pod ResourceLocation: the pod's first IP and the port asked
// for, or else the first port a container declares.
func podLocation(pod *corev1.Pod, scheme, port string, proxyable func(net.IP) bool) (*url.URL, error) {
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	podIP := pod.Status.PodIP
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	ip := net.ParseIP(podIP)
	if ip == nil || !proxyable(ip) {
		return nil, badRequest("address not allowed")
	}
	host := podIP
	switch {
	case port != "":
		host = net.JoinHostPort(podIP, port)
	case ip.To4() == nil:
		host = "[" + podIP + "]"
	}
	return &url.URL{Scheme: scheme, Host: host}, nil
}

// serviceProxyLocation is upstream's service ResourceLocation: a port
// given by number is the service port of that number (by its name, as
// EndpointSlices name their ports); the request goes to a ready endpoint
// serving that port, picked at random, that is the address of a pod of
// the service's namespace.
func (s *Server) serviceProxyLocation(ctx context.Context, ns, name, scheme, port string) (*url.URL, error) {
	if n, err := strconv.ParseInt(port, 10, 64); err == nil {
		svcRes, ok := s.resources[servicesGVR]
		if !ok {
			return nil, apierrors.NewServiceUnavailable("services are not served")
		}
		obj, err := s.get(ctx, svcRes, ns, name, "")
		if err != nil {
			return nil, err
		}
		svc, ok := obj.(*corev1.Service)
		if !ok {
			return nil, fmt.Errorf("stored service is a %T", obj)
		}
		if port, err = servicePortName(svc, n); err != nil {
			return nil, err
		}
	}
	slices, err := s.endpointSlicesOf(ns, name)
	if err != nil {
		return nil, err
	}
	if len(slices) == 0 {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	hostPort, err := translator.RandomEndpoint(name, slices, port, corev1.IPv4Protocol, func(ep *discoveryv1.Endpoint) bool {
		if err := s.checkPodAddress(ctx, ns, ep); err != nil {
			s.log.Debug("services/proxy: endpoint passed over", "service", ns+"/"+name, "endpoint", ep.Addresses, "err", err)
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: scheme, Host: hostPort}, nil
}

// servicePortName finds the name of the service's port numbered n.
func servicePortName(svc *corev1.Service, n int64) (string, error) {
	for _, p := range svc.Spec.Ports {
		if int64(p.Port) == n {
			return p.Name, nil
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", n, svc.Name))
}

// endpointSlicesOf reads a service's EndpointSlices from the watch cache,
// as upstream reads them from its informer.
func (s *Server) endpointSlicesOf(ns, service string) ([]*discoveryv1.EndpointSlice, error) {
	res, ok := s.resources[endpointSlicesGVR]
	if !ok {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", service))
	}
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: service})
	objs, _ := res.cache.List(ns, func(obj runtime.Object) bool {
		slice, ok := obj.(*discoveryv1.EndpointSlice)
		return ok && sel.Matches(labels.Set(slice.Labels))
	})
	out := make([]*discoveryv1.EndpointSlice, 0, len(objs))
	for _, obj := range objs {
		out = append(out, obj.(*discoveryv1.EndpointSlice))
	}
	return out, nil
}

// checkPodAddress holds an endpoint to upstream's rule that services/proxy
// only reaches pods: the endpoint names a pod of the namespace whose IPs
// include the endpoint's address.
func (s *Server) checkPodAddress(ctx context.Context, ns string, ep *discoveryv1.Endpoint) error {
	if ep.TargetRef == nil || len(ep.Addresses) == 0 {
		return fmt.Errorf("endpoint has no target ref or no address")
	}
	if ep.TargetRef.Namespace != ns {
		return fmt.Errorf("endpoint namespace doesn't match the service's")
	}
	res, ok := s.resources[podsGVR]
	if !ok {
		return fmt.Errorf("pods are not served")
	}
	obj, err := s.get(ctx, res, ns, ep.TargetRef.Name, "")
	if err != nil {
		return err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("stored pod is a %T", obj)
	}
	if !hasPodIP(pod, ep.Addresses[0]) {
		return fmt.Errorf("pod %s/%s does not have the endpoint's address %s", ns, pod.Name, ep.Addresses[0])
	}
	return nil
}

func hasPodIP(pod *corev1.Pod, ip string) bool {
	if len(pod.Status.PodIPs) == 0 {
		return pod.Status.PodIP != "" && pod.Status.PodIP == ip
	}
	for _, p := range pod.Status.PodIPs {
		if p.IP == ip {
			return true
		}
	}
	return false
}

// nodeProxyLocation is upstream's node ResourceLocation. It also reports
// whether the request is for the kubelet itself, which is reached with
// the API server's kubelet client credentials.
func (s *Server) nodeProxyLocation(ctx context.Context, res *resource, name, scheme, port string) (*url.URL, bool, error) {
	obj, err := s.get(ctx, res, "", name, "")
	if err != nil {
		return nil, false, err
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil, false, fmt.Errorf("stored node is a %T", obj)
	}
	loc, toKubelet, err := nodeLocation(node, scheme, port)
	if err != nil {
		return nil, false, err
	}
	if err := s.checkProxyableHost(ctx, loc.Hostname()); err != nil {
		return nil, false, err
	}
	return loc, toKubelet, nil
}

// nodeLocation picks the address of a node's kubelet: no port, or the
// kubelet's own, is the kubelet over https; any other port is that port
// of the same address with the scheme asked for.
func nodeLocation(node *corev1.Node, scheme, port string) (*url.URL, bool, error) {
	addr, err := kubeletAddress(node)
	if err != nil {
		return nil, false, err
	}
	host, kubeletPort, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, false, err
	}
	if port == "" || port == kubeletPort {
		return &url.URL{Scheme: "https", Host: addr}, true, nil
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}, false, nil
}

// checkProxyableHost resolves a node's address, which may be a host
// name, and refuses it unless every address it has may be proxied to,
// with upstream's 400s.
func (s *Server) checkProxyableHost(ctx context.Context, host string) error {
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return badRequest("%v", err)
	}
	if len(addrs) == 0 {
		return badRequest("no addresses for hostname")
	}
	for _, a := range addrs {
		if !s.proxyable(a.IP) {
			return badRequest("address not allowed")
		}
	}
	return nil
}

// proxySubresourceOf names the resources with a proxy subresource.
func proxySubresourceOf(gvr schema.GroupVersionResource) bool {
	return gvr == podsGVR || gvr == servicesGVR || gvr == nodesGVR
}
