package replicaset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// kind adapts one workload kind to the controller, which works on
// ReplicaSets alone: a ReplicationController is read as the ReplicaSet with
// the equivalent matchLabels selector, as upstream does.
type kind struct {
	name      string // controller and queue name
	component string // event source
	gvk       schema.GroupVersionKind
	informer  cache.SharedIndexInformer
	// get and list read the cache; objects are converted copies, never
	// the cache's own.
	get          func(namespace, name string) (*appsv1.ReplicaSet, error)
	list         func(namespace string) ([]*appsv1.ReplicaSet, error)
	updateStatus func(ctx context.Context, rs *appsv1.ReplicaSet) error
	// convert turns an informer object into a ReplicaSet (nil if it is
	// not one).
	convert func(obj any) *appsv1.ReplicaSet
}

func replicaSetKind(client kubernetes.Interface, factory informers.SharedInformerFactory) *kind {
	inf := factory.Apps().V1().ReplicaSets()
	lister := inf.Lister()
	return &kind{
		name: "replicaset", component: "replicaset-controller",
		gvk:      appsv1.SchemeGroupVersion.WithKind("ReplicaSet"),
		informer: inf.Informer(),
		get: func(ns, name string) (*appsv1.ReplicaSet, error) {
			rs, err := lister.ReplicaSets(ns).Get(name)
			if err != nil {
				return nil, err
			}
			return rs.DeepCopy(), nil
		},
		list: func(ns string) ([]*appsv1.ReplicaSet, error) {
			return lister.ReplicaSets(ns).List(labels.Everything())
		},
		updateStatus: func(ctx context.Context, rs *appsv1.ReplicaSet) error {
			_, err := client.AppsV1().ReplicaSets(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{})
			return err
		},
		convert: func(obj any) *appsv1.ReplicaSet {
			rs, _ := obj.(*appsv1.ReplicaSet)
			return rs
		},
	}
}

func replicationControllerKind(client kubernetes.Interface, factory informers.SharedInformerFactory) *kind {
	inf := factory.Core().V1().ReplicationControllers()
	lister := inf.Lister()
	return &kind{
		name: "replicationcontroller", component: "replication-controller",
		gvk:      v1.SchemeGroupVersion.WithKind("ReplicationController"),
		informer: inf.Informer(),
		get: func(ns, name string) (*appsv1.ReplicaSet, error) {
			rc, err := lister.ReplicationControllers(ns).Get(name)
			if err != nil {
				return nil, err
			}
			return fromRC(rc), nil
		},
		list: func(ns string) ([]*appsv1.ReplicaSet, error) {
			rcs, err := lister.ReplicationControllers(ns).List(labels.Everything())
			if err != nil {
				return nil, err
			}
			out := make([]*appsv1.ReplicaSet, len(rcs))
			for i, rc := range rcs {
				out[i] = fromRC(rc)
			}
			return out, nil
		},
		updateStatus: func(ctx context.Context, rs *appsv1.ReplicaSet) error {
			rc, err := lister.ReplicationControllers(rs.Namespace).Get(rs.Name)
			if err != nil {
				return fmt.Errorf("get replication controller: %w", err)
			}
			rc = rc.DeepCopy()
			rc.ResourceVersion = rs.ResourceVersion
			rc.Status = rcStatus(rs.Status)
			_, err = client.CoreV1().ReplicationControllers(rs.Namespace).UpdateStatus(ctx, rc, metav1.UpdateOptions{})
			return err
		},
		convert: func(obj any) *appsv1.ReplicaSet {
			rc, ok := obj.(*v1.ReplicationController)
			if !ok {
				return nil
			}
			return fromRC(rc)
		},
	}
}

// fromRC reads a ReplicationController as a ReplicaSet. A missing
// template becomes an empty one, which has no labels, so no pod is ever
// created from it (PodControl refuses label-less pods).
func fromRC(rc *v1.ReplicationController) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: *rc.ObjectMeta.DeepCopy(),
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        rc.Spec.Replicas,
			MinReadySeconds: rc.Spec.MinReadySeconds,
			Selector:        &metav1.LabelSelector{MatchLabels: rc.Spec.Selector},
		},
		Status: appsv1.ReplicaSetStatus{
			Replicas: rc.Status.Replicas, FullyLabeledReplicas: rc.Status.FullyLabeledReplicas,
			ReadyReplicas: rc.Status.ReadyReplicas, AvailableReplicas: rc.Status.AvailableReplicas,
			ObservedGeneration: rc.Status.ObservedGeneration,
		},
	}
	if rc.Spec.Template != nil {
		rs.Spec.Template = *rc.Spec.Template.DeepCopy()
	}
	for _, c := range rc.Status.Conditions {
		rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
		})
	}
	return rs
}

// rcStatus is the ReplicationController status for a ReplicaSet status;
// terminatingReplicas has no counterpart there.
func rcStatus(st appsv1.ReplicaSetStatus) v1.ReplicationControllerStatus {
	out := v1.ReplicationControllerStatus{
		Replicas: st.Replicas, FullyLabeledReplicas: st.FullyLabeledReplicas,
		ReadyReplicas: st.ReadyReplicas, AvailableReplicas: st.AvailableReplicas,
		ObservedGeneration: st.ObservedGeneration,
	}
	for _, c := range st.Conditions {
		out.Conditions = append(out.Conditions, v1.ReplicationControllerCondition{
			Type: v1.ReplicationControllerConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
		})
	}
	return out
}
