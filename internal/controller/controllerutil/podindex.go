package controllerutil

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// PodNodeIndex indexes pods by spec.nodeName on the shared pod informer,
// so that a node's change reaches the pods on it without a list of every
// pod.
const PodNodeIndex = "nodeName"

// AddPodNodeIndex adds PodNodeIndex to a pod informer unless a controller
// sharing it added it first (adding an index twice is an error).
func AddPodNodeIndex(inf cache.SharedIndexInformer) error {
	if _, ok := inf.GetIndexer().GetIndexers()[PodNodeIndex]; ok {
		return nil
	}
	return inf.AddIndexers(cache.Indexers{PodNodeIndex: podNodeName})
}

func podNodeName(obj any) ([]string, error) {
	if p, ok := obj.(*v1.Pod); ok && p.Spec.NodeName != "" {
		return []string{p.Spec.NodeName}, nil
	}
	return nil, nil
}
