package dns

import (
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/cache"
)

// Index names of the informer indexes answers are looked up by.
const (
	byIP        = "dns-ip"
	byNamespace = "dns-namespace"
	byService   = "dns-service"
)

// ServiceIndexers are the indexes the services informer needs: by
// cluster IP (PTR) and by namespace (NS.svc names).
func ServiceIndexers() cache.Indexers {
	return cache.Indexers{
		byNamespace: cache.MetaNamespaceIndexFunc,
		byIP: func(obj any) ([]string, error) {
			s, ok := obj.(*corev1.Service)
			if !ok {
				return nil, nil
			}
			var out []string
			for _, ip := range append([]string{s.Spec.ClusterIP}, s.Spec.ClusterIPs...) {
				if p := net.ParseIP(ip); p != nil {
					out = append(out, p.String())
				}
			}
			return out, nil
		},
	}
}

// SliceIndexers are the indexes the EndpointSlices informer needs: by
// owning service and by endpoint address (PTR).
func SliceIndexers() cache.Indexers {
	return cache.Indexers{
		byService: func(obj any) ([]string, error) {
			s, ok := obj.(*discoveryv1.EndpointSlice)
			if !ok || s.Labels[discoveryv1.LabelServiceName] == "" {
				return nil, nil
			}
			return []string{s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName]}, nil
		},
		byIP: func(obj any) ([]string, error) {
			s, ok := obj.(*discoveryv1.EndpointSlice)
			if !ok {
				return nil, nil
			}
			var out []string
			for _, ep := range s.Endpoints {
				for _, a := range ep.Addresses {
					if p := net.ParseIP(a); p != nil {
						out = append(out, p.String())
					}
				}
			}
			return out, nil
		},
	}
}

// Cache is the in-memory view of services and EndpointSlices that
// answers come from: the informers' indexers, so a query costs a map
// lookup and nothing is rebuilt on change.
type Cache struct {
	services, slicesIdx cache.Indexer
}

// NewCache reads services and slices, which must carry ServiceIndexers
// and SliceIndexers.
func NewCache(services, slices cache.Indexer) *Cache {
	return &Cache{services: services, slicesIdx: slices}
}

func (c *Cache) service(ns, name string) *corev1.Service {
	obj, ok, err := c.services.GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil
	}
	s, _ := obj.(*corev1.Service)
	return s
}

func (c *Cache) slices(ns, svc string) []*discoveryv1.EndpointSlice {
	objs, err := c.slicesIdx.ByIndex(byService, ns+"/"+svc)
	if err != nil {
		return nil
	}
	out := make([]*discoveryv1.EndpointSlice, 0, len(objs))
	for _, o := range objs {
		if s, ok := o.(*discoveryv1.EndpointSlice); ok {
			out = append(out, s)
		}
	}
	return out
}

// namespaceExists stands in for CoreDNS's namespace lookup: a namespace
// is known to DNS once it holds a service (no namespace informer needed).
func (c *Cache) namespaceExists(ns string) bool {
	objs, err := c.services.ByIndex(byNamespace, ns)
	return err == nil && len(objs) > 0
}

// namesOf are the names an address has in zone: the services holding it
// as a cluster IP, and the endpoints holding it.
func (c *Cache) namesOf(ip, zone string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	if objs, err := c.services.ByIndex(byIP, ip); err == nil {
		for _, o := range objs {
			if s, ok := o.(*corev1.Service); ok {
				add(s.Name + "." + s.Namespace + ".svc." + zone)
			}
		}
	}
	if objs, err := c.slicesIdx.ByIndex(byIP, ip); err == nil {
		for _, o := range objs {
			s, ok := o.(*discoveryv1.EndpointSlice)
			if !ok || s.Labels[discoveryv1.LabelServiceName] == "" {
				continue
			}
			for _, ep := range s.Endpoints {
				for _, a := range ep.Addresses {
					if p := net.ParseIP(a); p != nil && p.String() == ip {
						add(strings.ToLower(endpointHostname(ep, a) + "." + s.Labels[discoveryv1.LabelServiceName] + "." + s.Namespace + ".svc." + zone))
					}
				}
			}
		}
	}
	return out
}
