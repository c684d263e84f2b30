package controllermanager

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"

	"github.com/orca-project/orca/internal/controller/disruption"
)

// newDisruption wires the disruption controller to /scale: owners of
// kinds it does not watch (custom resources) are read through the scale
// client, their resources found by discovery.
func newDisruption(c *Context) (Controller, error) {
	cached := memory.NewMemCacheClient(c.Discovery)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	scales, err := scale.NewForConfig(c.REST, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(cached))
	if err != nil {
		return nil, fmt.Errorf("disruption: scale client: %w", err)
	}
	return disruption.New(c.Client, c.Informers, scaleReader{scales}, mapper, hasScale(c.Discovery), c.QueueMetrics, c.Log)
}

type scaleReader struct{ scale.ScalesGetter }

func (r scaleReader) Get(ctx context.Context, ns string, gr schema.GroupResource, name string) (*autoscalingv1.Scale, error) {
	return r.Scales(ns).Get(ctx, gr, name, metav1.GetOptions{})
}

// hasScale asks discovery whether a resource lists a /scale subresource
// of kind Scale.
func hasScale(d discovery.DiscoveryInterface) disruption.ScaleSubresources {
	return func(ctx context.Context, gvr schema.GroupVersionResource) (bool, error) {
		list, err := d.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if err != nil {
			return false, err
		}
		for _, r := range list.APIResources {
			if r.Name == gvr.Resource+"/scale" && r.Kind == "Scale" {
				return true, nil
			}
		}
		return false, nil
	}
}
