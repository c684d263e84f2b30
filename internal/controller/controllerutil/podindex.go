package controllerutil

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// PodNodeIndex indexes pods by spec.nodeName on the shared pod informer,
// so that a node's change reaches the pods on it without a list of every
// pod.
const PodNodeIndex = "nodeName"

// PodControllerIndex indexes pods by their controller's UID, and pods
// without a controller by their namespace, so that a workload finds the
// pods it may claim without a list of its whole namespace (upstream's
// controllerUID index).
const PodControllerIndex = "controllerUID"

// AddPodNodeIndex adds PodNodeIndex to a pod informer unless a controller
// sharing it added it first.
func AddPodNodeIndex(inf cache.SharedIndexInformer) error {
	return addIndex(inf, PodNodeIndex, podNodeName)
}

// AddPodControllerIndex adds PodControllerIndex to a pod informer unless
// a controller sharing it added it first.
func AddPodControllerIndex(inf cache.SharedIndexInformer) error {
	return addIndex(inf, PodControllerIndex, podController)
}

// addIndex adds an index once: adding one twice is an error, and several
// controllers share one pod informer.
func addIndex(inf cache.SharedIndexInformer, name string, f cache.IndexFunc) error {
	if _, ok := inf.GetIndexer().GetIndexers()[name]; ok {
		return nil
	}
	return inf.AddIndexers(cache.Indexers{name: f})
}

func podNodeName(obj any) ([]string, error) {
	if p, ok := obj.(*v1.Pod); ok && p.Spec.NodeName != "" {
		return []string{p.Spec.NodeName}, nil
	}
	return nil, nil
}

// orphanKey is where a namespace's pods without a controller are
// indexed; a UID never takes this form.
func orphanKey(namespace string) string { return "orphan/" + namespace }

func podController(obj any) ([]string, error) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return nil, nil
	}
	if ref := metav1.GetControllerOf(p); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return []string{orphanKey(p.Namespace)}, nil
}

// ControlledPods are the pods owner controls and, with orphans, the pods
// in its namespace that have no controller: all that ClaimPods can keep,
// adopt or release for it. idx is a pod informer's indexer with
// PodControllerIndex.
func ControlledPods(idx cache.Indexer, owner metav1.Object, orphans bool) ([]*v1.Pod, error) {
	keys := []string{string(owner.GetUID())}
	if orphans {
		keys = append(keys, orphanKey(owner.GetNamespace()))
	}
	var out []*v1.Pod
	for _, k := range keys {
		objs, err := idx.ByIndex(PodControllerIndex, k)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if p, ok := o.(*v1.Pod); ok && p.Namespace == owner.GetNamespace() {
				out = append(out, p)
			}
		}
	}
	return out, nil
}
