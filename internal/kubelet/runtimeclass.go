package kubelet

import (
	"context"
	"fmt"

	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	nodelisters "k8s.io/client-go/listers/node/v1"
)

// runtimeHandlers finds the CRI handler that runs a pod's sandbox: the
// handler of the RuntimeClass the pod names, or the runtime's default
// (""). The runtime refuses a handler it is not configured with, and the
// pod then stays Pending with a FailedCreatePodSandBox event naming it,
// as upstream's kubelet leaves it.
type runtimeHandlers struct {
	lister nodelisters.RuntimeClassLister
	// get reads a class from the API server. The cache alone would refuse
	// the pods of a class created a moment ago, or of any class before
	// the cache has filled; upstream's kubelet retries those until it has.
	get func(ctx context.Context, name string) (*nodev1.RuntimeClass, error)
}

// lookup returns the handler for a pod's runtimeClassName.
func (r runtimeHandlers) lookup(ctx context.Context, name *string) (string, error) {
	if name == nil || *name == "" {
		return "", nil
	}
	rc, err := r.lister.Get(*name)
	if notFound := err; apierrors.IsNotFound(err) && r.get != nil {
		if rc, err = r.get(ctx, *name); apierrors.IsNotFound(err) {
			// The cache's error, which upstream's kubelet reports:
			// runtimeclass.node.k8s.io "x" not found.
			err = notFound
		}
	}
	if apierrors.IsNotFound(err) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("failed to lookup RuntimeClass %s: %v", *name, err)
	}
	return rc.Handler, nil
}
