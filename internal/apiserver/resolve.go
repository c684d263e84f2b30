package apiserver

import (
	"context"
	"fmt"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	translator "k8s.io/apiserver/pkg/util/proxy"
)

// ResolveEndpoint is where the server reaches a service's port: a ready
// endpoint of it, picked at random, as upstream's API server resolves
// the services of webhooks and extension API servers with endpoint
// routing. Going to the endpoint directly needs no service proxy on the
// server's machine, only a route to the pods.
func (s *Server) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	res, ok := s.resources[servicesGVR]
	if !ok {
		return nil, fmt.Errorf("services are not served")
	}
	obj, _, ok := res.cache.Get(res.key(namespace, name))
	if !ok {
		// Created a moment ago, or not at all.
		var err error
		if obj, err = s.get(context.Background(), res, namespace, name, ""); err != nil {
			return nil, err
		}
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("stored service is a %T", obj)
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
	default:
		return nil, fmt.Errorf("unsupported service type %q", svc.Spec.Type)
	}
	portName, err := servicePortName(svc, int64(port))
	if err != nil {
		return nil, err
	}
	slices, err := s.endpointSlicesOf(namespace, name)
	if err != nil {
		return nil, err
	}
	family := corev1.IPFamilyUnknown
	if len(svc.Spec.IPFamilies) > 0 {
		family = svc.Spec.IPFamilies[0]
	}
	hostPort, err := translator.RandomEndpoint(svc.Name, slices, portName, family, nil)
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: "https", Host: hostPort}, nil
}
