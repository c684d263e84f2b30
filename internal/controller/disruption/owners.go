package disruption

import (
	"context"
	"fmt"
	"slices"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// ScaleReader reads a /scale subresource (the scale client's Get).
type ScaleReader interface {
	Get(ctx context.Context, namespace string, gr schema.GroupResource, name string) (*autoscalingv1.Scale, error)
}

// Mapper maps an owner reference's kind to its resource. Reset forgets
// what discovery said, so that a kind served since (a new CRD) is found.
type Mapper interface {
	RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error)
	Reset()
}

// ScaleSubresources tells whether a resource serves /scale, to tell an
// owner that is gone from one that cannot be scaled.
type ScaleSubresources func(ctx context.Context, gvr schema.GroupVersionResource) (bool, error)

// owners finds pods' controllers as upstream's disruption controller does:
// the built-in workload kinds from the informers (a ReplicaSet's pods
// count by their Deployment's replicas), then any other kind through its
// /scale subresource.
type owners struct {
	rcs          corelisters.ReplicationControllerLister
	rss          appslisters.ReplicaSetLister
	deployments  appslisters.DeploymentLister
	statefulsets appslisters.StatefulSetLister
	mapper       Mapper
	scales       ScaleReader
	hasScale     ScaleSubresources
}

type finder func(ctx context.Context, ref *metav1.OwnerReference, ns string) (*Owner, error)

// find is an OwnerFinder trying each kind in upstream's order.
func (o *owners) find(ctx context.Context) OwnerFinder {
	finders := []finder{o.replicationController, o.deployment, o.replicaSet, o.statefulSet, o.scaleOwner}
	return func(ref *metav1.OwnerReference, ns string) (*Owner, error) {
		for _, f := range finders {
			owner, err := f(ctx, ref, ns)
			if err != nil || owner != nil {
				return owner, err
			}
		}
		return nil, nil
	}
}

func isKind(ref *metav1.OwnerReference, kind string, groups ...string) (bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, err
	}
	return ref.Kind == kind && slices.Contains(groups, gv.Group), nil
}

func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func (o *owners) replicationController(_ context.Context, ref *metav1.OwnerReference, ns string) (*Owner, error) {
	if ok, err := isKind(ref, "ReplicationController", ""); !ok || err != nil {
		return nil, err
	}
	rc, err := o.rcs.ReplicationControllers(ns).Get(ref.Name)
	if err != nil || rc.UID != ref.UID {
		return nil, nil
	}
	return &Owner{UID: rc.UID, Scale: replicas(rc.Spec.Replicas)}, nil
}

// deployment counts a ReplicaSet's pods by the Deployment owning it: all
// the Deployment's ReplicaSets share its one replica count.
func (o *owners) deployment(_ context.Context, ref *metav1.OwnerReference, ns string) (*Owner, error) {
	if ok, err := isKind(ref, "ReplicaSet", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	rs, err := o.rss.ReplicaSets(ns).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil, nil
	}
	dref := metav1.GetControllerOf(rs)
	if dref == nil {
		return nil, nil
	}
	if ok, err := isKind(dref, "Deployment", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	d, err := o.deployments.Deployments(ns).Get(dref.Name)
	if err != nil || d.UID != dref.UID {
		return nil, nil
	}
	return &Owner{UID: d.UID, Scale: replicas(d.Spec.Replicas)}, nil
}

func (o *owners) replicaSet(_ context.Context, ref *metav1.OwnerReference, ns string) (*Owner, error) {
	if ok, err := isKind(ref, "ReplicaSet", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	rs, err := o.rss.ReplicaSets(ns).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil, nil
	}
	if c := metav1.GetControllerOf(rs); c != nil && c.Kind == "Deployment" {
		return nil, nil
	}
	return &Owner{UID: rs.UID, Scale: replicas(rs.Spec.Replicas)}, nil
}

func (o *owners) statefulSet(_ context.Context, ref *metav1.OwnerReference, ns string) (*Owner, error) {
	if ok, err := isKind(ref, "StatefulSet", "apps"); !ok || err != nil {
		return nil, err
	}
	ss, err := o.statefulsets.StatefulSets(ns).Get(ref.Name)
	if err != nil || ss.UID != ref.UID {
		return nil, nil
	}
	return &Owner{UID: ss.UID, Scale: replicas(ss.Spec.Replicas)}, nil
}

// scaleOwner asks any other kind's /scale subresource.
func (o *owners) scaleOwner(ctx context.Context, ref *metav1.OwnerReference, ns string) (*Owner, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	mapping, err := o.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
	if err != nil {
		o.mapper.Reset()
		return nil, err
	}
	gr := mapping.Resource.GroupResource()
	sc, err := o.scales.Get(ctx, ns, gr, ref.Name)
	if apierrors.IsNotFound(err) {
		// Either the owner is gone or its kind has no /scale.
		ok, err := o.hasScale(ctx, mapping.Resource)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s does not implement the scale subresource", gr.String())
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if sc.UID != ref.UID {
		return nil, nil
	}
	return &Owner{UID: sc.UID, Scale: sc.Spec.Replicas}, nil
}
