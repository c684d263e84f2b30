package controllerutil

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

// OwnerRef is the controller reference a workload puts on what it creates.
func OwnerRef(owner metav1.Object, gvk schema.GroupVersionKind) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
		Name: owner.GetName(), UID: owner.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

// PodFromTemplate builds a pod as upstream's controllers do: the template's
// labels, annotations, finalizers and spec, a generated name prefixed by
// the owner's name, and the controller reference.
func PodFromTemplate(t *v1.PodTemplateSpec, namespace, prefix string, ref *metav1.OwnerReference) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    namespace,
			GenerateName: GenerateNamePrefix(prefix),
			Labels:       copyMap(t.Labels),
			Annotations:  copyMap(t.Annotations),
			Finalizers:   append([]string(nil), t.Finalizers...),
		},
		Spec: *t.Spec.DeepCopy(),
	}
	if ref != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	return pod
}

// GenerateNamePrefix is "<name>-", cut so that the generated name fits
// the 63 characters of a label value, as upstream's helper does.
func GenerateNamePrefix(name string) string {
	const maxPrefix = 63 - 5 // the five random characters
	p := name + "-"
	if len(p) > maxPrefix {
		p = p[:maxPrefix]
	}
	return p
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// PodControl creates and deletes pods on behalf of an owner, recording
// upstream's events on the owner.
type PodControl struct {
	Client   kubernetes.Interface
	Recorder record.EventRecorder
}

// Create creates pod (built by PodFromTemplate or by hand) and records
// SuccessfulCreate or FailedCreate on owner.
func (c PodControl) Create(ctx context.Context, pod *v1.Pod, owner runtime.Object) (*v1.Pod, error) {
	if len(pod.Labels) == 0 {
		return nil, fmt.Errorf("unable to create pods, no labels")
	}
	out, err := c.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		// A namespace being deleted refuses creates; that is not the
		// owner's fault and upstream records nothing for it.
		if !apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) && c.Recorder != nil {
			c.Recorder.Eventf(owner, v1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
		}
		return nil, err
	}
	if c.Recorder != nil {
		c.Recorder.Eventf(owner, v1.EventTypeNormal, "SuccessfulCreate", "Created pod: %v", out.Name)
	}
	return out, nil
}

// Delete deletes a pod (with a UID precondition, so a recreated namesake is
// never hit) and records SuccessfulDelete or FailedDelete on owner.
func (c PodControl) Delete(ctx context.Context, pod *v1.Pod, owner runtime.Object) error {
	err := c.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}})
	if err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		if c.Recorder != nil {
			c.Recorder.Eventf(owner, v1.EventTypeWarning, "FailedDelete", "Error deleting: %v", err)
		}
		return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if c.Recorder != nil {
		c.Recorder.Eventf(owner, v1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %v", pod.Name)
	}
	return nil
}

// ClaimOption changes how ClaimPods adopts and releases pods.
type ClaimOption func(*claimOptions)

type claimOptions struct {
	fresh      func(context.Context) (metav1.Object, error)
	finalizers []string
}

// RecheckOwner has ClaimPods read the owner live (with get) before its
// first adoption and adopt nothing unless it is still the same object
// and not being deleted, as upstream's RecheckDeletionTimestamp: the
// cached owner may already be deleting — the garbage collector is then
// orphaning its pods, and an adoption would undo that — or replaced by a
// namesake.
func RecheckOwner(get func(context.Context) (metav1.Object, error)) ClaimOption {
	return func(o *claimOptions) { o.fresh = get }
}

// WithFinalizers names finalizers an adopted pod gets and a released pod
// loses together with the owner reference (the Job's tracking finalizer).
func WithFinalizers(finalizers ...string) ClaimOption {
	return func(o *claimOptions) { o.finalizers = finalizers }
}

// ClaimPods returns the pods owner controls after adopting orphans that
// match selector and releasing owned pods that no longer match, as
// upstream's ControllerRefManager. An owner being deleted adopts nothing.
func (c PodControl) ClaimPods(ctx context.Context, owner metav1.Object, gvk schema.GroupVersionKind, selector labels.Selector, pods []*v1.Pod, opts ...ClaimOption) ([]*v1.Pod, error) {
	var o claimOptions
	for _, opt := range opts {
		opt(&o)
	}
	var out []*v1.Pod
	var errs []string
	checked, canAdopt := false, error(nil)
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		matches := selector.Matches(labels.Set(p.Labels))
		switch {
		case ref != nil && ref.UID == owner.GetUID():
			if matches {
				out = append(out, p)
				continue
			}
			if owner.GetDeletionTimestamp() != nil {
				continue
			}
			if err := c.release(ctx, p, owner, o.finalizers); err != nil {
				errs = append(errs, err.Error())
			}
		case ref == nil && matches && owner.GetDeletionTimestamp() == nil && p.DeletionTimestamp == nil:
			if !checked {
				checked, canAdopt = true, o.recheck(ctx, owner, gvk)
			}
			if canAdopt != nil {
				errs = append(errs, fmt.Sprintf("can't adopt pod %s: %v", p.Name, canAdopt))
				continue
			}
			adopted, err := c.adopt(ctx, p, owner, gvk, o.finalizers)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			if adopted != nil {
				out = append(out, adopted)
			}
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("claim pods: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

// recheck reads the owner live, when asked to, and says why it may not
// adopt.
func (o claimOptions) recheck(ctx context.Context, owner metav1.Object, gvk schema.GroupVersionKind) error {
	if o.fresh == nil {
		return nil
	}
	fresh, err := o.fresh(ctx)
	switch {
	case err != nil:
		return err
	case fresh.GetUID() != owner.GetUID():
		return fmt.Errorf("original %s %s/%s is gone: got uid %s, wanted %s", gvk.Kind, owner.GetNamespace(), owner.GetName(), fresh.GetUID(), owner.GetUID())
	case fresh.GetDeletionTimestamp() != nil:
		return fmt.Errorf("%s %s/%s has just been deleted at %v", gvk.Kind, owner.GetNamespace(), owner.GetName(), fresh.GetDeletionTimestamp())
	}
	return nil
}

func (c PodControl) adopt(ctx context.Context, p *v1.Pod, owner metav1.Object, gvk schema.GroupVersionKind, finalizers []string) (*v1.Pod, error) {
	ref := OwnerRef(owner, gvk)
	meta := map[string]any{
		"ownerReferences": []metav1.OwnerReference{ref},
		"uid":             p.UID,
	}
	if len(finalizers) > 0 {
		meta["finalizers"] = finalizers
	}
	patch, _ := json.Marshal(map[string]any{"metadata": meta})
	out, err := c.Client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("adopt pod %s: %w", p.Name, err)
	}
	return out, nil
}

func (c PodControl) release(ctx context.Context, p *v1.Pod, owner metav1.Object, finalizers []string) error {
	meta := map[string]any{
		"ownerReferences": []map[string]any{{"$patch": "delete", "uid": owner.GetUID()}},
		"uid":             p.UID,
	}
	if len(finalizers) > 0 {
		meta["$deleteFromPrimitiveList/finalizers"] = finalizers
	}
	patch, _ := json.Marshal(map[string]any{"metadata": meta})
	_, err := c.Client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) {
		return fmt.Errorf("release pod %s: %w", p.Name, err)
	}
	return nil
}

// IsPodActive is a pod that counts toward replicas: not finished and not
// being deleted.
func IsPodActive(p *v1.Pod) bool {
	return p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed && p.DeletionTimestamp == nil
}

// IsPodReady reports the pod's Ready condition.
func IsPodReady(p *v1.Pod) bool {
	c := readyCondition(p)
	return c != nil && c.Status == v1.ConditionTrue
}

// IsPodAvailable is ready for at least minReadySeconds at now.
func IsPodAvailable(p *v1.Pod, minReadySeconds int32, now time.Time) bool {
	c := readyCondition(p)
	if c == nil || c.Status != v1.ConditionTrue {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	d := time.Duration(minReadySeconds) * time.Second
	return !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Add(d).Before(now)
}

func readyCondition(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}
