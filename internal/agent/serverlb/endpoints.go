package serverlb

import (
	"context"
	"net"
	"strconv"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/orca-project/orca/internal/nodeaddr"
)

// kubernetesService is the Service in default whose endpoints are the
// live API servers.
const kubernetesService = "kubernetes"

// WatchEndpoints keeps lb's servers equal to the addresses of the
// `kubernetes` Service, read from its EndpointSlices, until ctx ends;
// run it in a goroutine. The API servers keep those endpoints equal to
// the set of live servers. An empty set never empties the LB: the list
// it had is kept, so that a transient state does not cut the node off.
//
// The client must be allowed to list and watch EndpointSlices in
// default: the service proxy's identity is, a node's own is not.
func WatchEndpoints(ctx context.Context, client kubernetes.Interface, lb *LB) {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(metav1.NamespaceDefault),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = discoveryv1.LabelServiceName + "=" + kubernetesService
		}))
	inf := factory.Discovery().V1().EndpointSlices()
	lister := inf.Lister()
	// Level-triggered: any change pokes, and each poke reads the whole
	// cache.
	poke := make(chan struct{}, 1)
	changed := func(any) {
		select {
		case poke <- struct{}{}:
		default:
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: changed, UpdateFunc: func(_, o any) { changed(o) }, DeleteFunc: changed,
	}); err != nil {
		lb.log.Error("watch the API servers' endpoints", "err", err)
		return
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-poke:
		}
		list, err := lister.List(labels.Everything())
		if err != nil {
			continue
		}
		updateFrom(lb, list)
	}
}

// updateFrom sets lb's servers to those the slices name, unless they name
// none; it reports whether it did.
func updateFrom(lb *LB, list []*discoveryv1.EndpointSlice) bool {
	servers := endpointServers(list)
	if len(servers) == 0 {
		lb.log.Info("the kubernetes service lists no API server; keeping the known ones", "servers", lb.Servers())
		return false
	}
	lb.Update(servers)
	return true
}

// endpointServers is the sorted host:port of every ready endpoint of the
// slices, at each slice's port named "https" (or its only port).
// Loopback addresses are left out: they name a server only on its own
// machine, and the default covers an agent that shares it.
func endpointServers(list []*discoveryv1.EndpointSlice) []string {
	var out []string
	for _, s := range list {
		if s.AddressType == discoveryv1.AddressTypeFQDN {
			continue
		}
		port := httpsPort(s.Ports)
		if port == 0 {
			continue
		}
		for _, ep := range s.Endpoints {
			// Upstream: a nil Ready is unknown, and read as ready.
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
				continue
			}
			// Upstream: the addresses of one endpoint are fungible; use
			// the first.
			if !nodeaddr.Routable(net.ParseIP(ep.Addresses[0])) {
				continue
			}
			out = append(out, net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(port))))
		}
	}
	return normalize(out)
}

// httpsPort is the port named "https", or the only port; 0 if none.
func httpsPort(ports []discoveryv1.EndpointPort) int32 {
	for _, p := range ports {
		if p.Name != nil && *p.Name == "https" && p.Port != nil {
			return *p.Port
		}
	}
	if len(ports) == 1 && ports[0].Port != nil {
		return *ports[0].Port
	}
	return 0
}
