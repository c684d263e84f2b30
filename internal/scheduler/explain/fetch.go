package explain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// ErrNone says no explanation is available for a pod, and how to get one.
var ErrNone = errors.New("explain: no explanation")

// Fetch returns the scheduler's explanation for a pod from its annotation.
// A Pending pod without one is annotated with the request (full asks for
// every node) and Fetch waits up to wait for the scheduler's next attempt
// to answer. A bound pod without one cannot be explained after the fact:
// the error says how to ask before it is scheduled.
func Fetch(ctx context.Context, core corev1client.CoreV1Interface, namespace, name string, full bool, wait time.Duration) (*Explanation, error) {
	pods := core.Pods(namespace)
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("pod %q not found", name)
		}
		return nil, fmt.Errorf("get pod %s: %w", name, err)
	}
	if e, ok, err := fromPod(pod); ok || err != nil {
		return e, err
	}
	if pod.Spec.NodeName != "" {
		if e, err := fromStore(ctx, core, pod); e != nil || err != nil {
			return e, err
		}
		return nil, fmt.Errorf("%w for pod %s/%s, bound to %s before one was asked for, and the scheduler no longer keeps one: create the pod with the annotation %s: \"true\" (or \"full\" for every node) to have the scheduler record its decision",
			ErrNone, pod.Namespace, pod.Name, pod.Spec.NodeName, RequestAnnotation)
	}
	value := "true"
	if full {
		value = "full"
	}
	if pod.Annotations[RequestAnnotation] != value {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{RequestAnnotation: value}}})
		if _, err := pods.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return nil, fmt.Errorf("ask the scheduler to explain pod %s (annotate it %s=%s): %w", name, RequestAnnotation, value, err)
		}
	}
	return waitFor(ctx, pods, pod, wait)
}

// waitFor watches the pod until the scheduler has written its explanation.
func waitFor(ctx context.Context, pods corev1client.PodInterface, pod *v1.Pod, wait time.Duration) (*Explanation, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", pod.Name).String(), ResourceVersion: pod.ResourceVersion})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return nil, fmt.Errorf("watch pod %s: %w", pod.Name, err)
		}
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*v1.Pod)
			if !ok || ev.Type == watch.Error {
				continue
			}
			if ev.Type == watch.Deleted {
				w.Stop()
				return nil, fmt.Errorf("pod %s was deleted", pod.Name)
			}
			pod = p
			if e, ok, err := fromPod(p); ok || err != nil {
				w.Stop()
				return e, err
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("%w for pod %s/%s after %s: the scheduler answers on its next attempt for the pod (is it this cluster's default-scheduler, and running?)",
		ErrNone, pod.Namespace, pod.Name, wait)
}

// fromPod decodes the pod's explanation, if it has one for this pod.
func fromPod(pod *v1.Pod) (*Explanation, bool, error) {
	s, ok := pod.Annotations[Annotation]
	if !ok {
		return nil, false, nil
	}
	e, err := Decode(s)
	if err != nil {
		return nil, false, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	// A pod recreated under the same name may carry a copied annotation.
	if e.UID != "" && e.UID != string(pod.UID) {
		return nil, false, nil
	}
	return e, true, nil
}

// fromStore reads the pods/explanation subresource: the latest
// explanation the scheduler keeps in memory for the pod. Not found (the
// store forgot it, or the API server answering has no leading scheduler
// in it) is no error: nil, nil.
func fromStore(ctx context.Context, core corev1client.CoreV1Interface, pod *v1.Pod) (*Explanation, error) {
	body, err := core.RESTClient().Get().Namespace(pod.Namespace).Resource("pods").Name(pod.Name).SubResource("explanation").DoRaw(ctx)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get pods/%s/explanation: %w", pod.Name, err)
	}
	e, err := Decode(string(body))
	if err != nil || e.UID != string(pod.UID) {
		return nil, err
	}
	return e, nil
}
