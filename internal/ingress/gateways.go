package ingress

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	gwlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	"github.com/orca-project/orca/internal/ingress/gateway"
	"github.com/orca-project/orca/internal/ingress/route"
)

// GatewayListers are the caches the Gateway API's input is gathered
// from, beside the Ingresses' (Services, EndpointSlices, Secrets).
type GatewayListers struct {
	Classes    gwlisters.GatewayClassLister
	Gateways   gwlisters.GatewayLister
	Routes     gwlisters.HTTPRouteLister
	Grants     gwlisters.ReferenceGrantLister
	Namespaces corelisters.NamespaceLister
}

// GatherGateways reads gateway.Build's input from the caches, with the
// Services, EndpointSlices and Secrets of the Ingresses' input in.
func GatherGateways(gl *GatewayListers, in *route.Input) (gateway.Input, error) {
	out := gateway.Input{Controller: GatewayControllerName, Namespaces: map[string]map[string]string{},
		Services: in.Services, Endpoints: in.Endpoints, Secrets: in.Secrets}
	var err error
	if out.Classes, err = gl.Classes.List(labels.Everything()); err != nil {
		return out, err
	}
	if out.Gateways, err = gl.Gateways.List(labels.Everything()); err != nil {
		return out, err
	}
	if out.Routes, err = gl.Routes.List(labels.Everything()); err != nil {
		return out, err
	}
	if out.Grants, err = gl.Grants.List(labels.Everything()); err != nil {
		return out, err
	}
	nss, err := gl.Namespaces.List(labels.Everything())
	if err != nil {
		return out, err
	}
	for _, ns := range nss {
		out.Namespaces[ns.Name] = ns.Labels
	}
	return out, nil
}

// GatewayAPI follows the Gateway API's objects once the API is served:
// the CRDs may come after the node starts (the server installs them
// beside its own start-up), or never, when the server leaves them out.
type GatewayAPI struct {
	client gwclient.Interface
	core   informers.SharedInformerFactory
	kick   func()

	mu      sync.Mutex
	listers *GatewayListers
}

// Listers are the caches once synced, nil before.
func (g *GatewayAPI) Listers() *GatewayListers {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.listers
}

// NewGatewayAPI follows the Gateway API with client, the namespaces
// with core's informers, and calls kick on every change.
func NewGatewayAPI(client gwclient.Interface, core informers.SharedInformerFactory, kick func()) *GatewayAPI {
	return &GatewayAPI{client: client, core: core, kick: kick}
}

// Run waits for the API, then starts the informers and kicks on every
// change, until ctx ends.
func (g *GatewayAPI) Run(ctx context.Context) error {
	if !WaitForGatewayAPI(ctx, g.client.Discovery(), 10*time.Second) {
		return nil
	}
	f := gwinformers.NewSharedInformerFactory(g.client, 0)
	v1 := f.Gateway().V1()
	classes, gws, routes, grants := v1.GatewayClasses(), v1.Gateways(), v1.HTTPRoutes(), v1.ReferenceGrants()
	nss := g.core.Core().V1().Namespaces()
	h := cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { g.kick() }, UpdateFunc: func(any, any) { g.kick() }, DeleteFunc: func(any) { g.kick() },
	}
	var synced []cache.InformerSynced
	for _, inf := range []cache.SharedIndexInformer{classes.Informer(), gws.Informer(), routes.Informer(), grants.Informer(), nss.Informer()} {
		if _, err := inf.AddEventHandler(h); err != nil {
			return fmt.Errorf("gateway API informers: %w", err)
		}
		synced = append(synced, inf.HasSynced)
	}
	f.Start(ctx.Done())
	defer f.Shutdown()
	g.core.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil
	}
	g.mu.Lock()
	g.listers = &GatewayListers{Classes: classes.Lister(), Gateways: gws.Lister(), Routes: routes.Lister(), Grants: grants.Lister(), Namespaces: nss.Lister()}
	g.mu.Unlock()
	g.kick()
	<-ctx.Done()
	return nil
}

// WaitForGatewayAPI polls discovery every interval until
// gateway.networking.k8s.io/v1 serves its HTTPRoutes; false when ctx
// ends first.
func WaitForGatewayAPI(ctx context.Context, d discovery.DiscoveryInterface, every time.Duration) bool {
	for {
		if list, err := d.ServerResourcesForGroupVersion(gwv1.GroupVersion.String()); err == nil {
			for _, r := range list.APIResources {
				if r.Name == "httproutes" {
					return true
				}
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(every):
		}
	}
}
