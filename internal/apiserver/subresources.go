package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/audit"
)

// serveStatus handles /status, and the resource's other subresources
// that write part of an object: reads as the object, writes change only
// what the subresource owns.
func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	switch ri.Verb {
	case "get":
		s.handleGet(w, r, res, ri)
	case "update":
		s.handleUpdate(w, r, res, ri)
	case "patch":
		s.handlePatch(w, r, res, ri)
	default:
		s.writeError(w, r, apierrors.NewMethodNotSupported(res.GroupResource(), ri.Verb))
	}
}

var scaleGVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// scaleOf renders an object's replica counts as a Scale.
func scaleOf(res *resource, obj runtime.Object) *autoscalingv1.Scale {
	acc, _ := meta.Accessor(obj)
	spec, status, sel := res.Scale.Get(obj)
	sc := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name: acc.GetName(), Namespace: acc.GetNamespace(), UID: acc.GetUID(),
			ResourceVersion: acc.GetResourceVersion(), CreationTimestamp: acc.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: spec},
		Status: autoscalingv1.ScaleStatus{Replicas: status, Selector: sel},
	}
	sc.GetObjectKind().SetGroupVersionKind(scaleGVK)
	return sc
}

// serveScale handles /scale for resources with replicas.
func (s *Server) serveScale(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	ctx := r.Context()
	switch ri.Verb {
	case "get":
		obj, err := s.get(ctx, res, ri.Namespace, ri.Name, "")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeObject(w, r, http.StatusOK, scaleOf(res, obj))
	case "update", "patch":
		dry, fv, body, err := s.writeInput(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		var warn warnings
		newScale := func() runtime.Object { return &autoscalingv1.Scale{} }
		out, err := s.update(ctx, res, ri.Namespace, ri.Name, dry, func(cur runtime.Object) (runtime.Object, error) {
			warn = warn[:0]
			var sc *autoscalingv1.Scale
			if ri.Verb == "update" {
				obj, err := s.decodeObject(body, r.Header.Get("Content-Type"), fv, newScale, &warn)
				if err != nil {
					return nil, err
				}
				audit.LogRequestObject(ctx, obj, s.codecs.json)
				sc = obj.(*autoscalingv1.Scale)
			} else {
				pt, err := patchType(r)
				if err != nil {
					return nil, err
				}
				if pt == types.ApplyYAMLPatchType {
					return nil, errApplyToScale
				}
				curJSON, err := json.Marshal(scaleOf(res, cur))
				if err != nil {
					return nil, err
				}
				patched, err := applyPatch(pt, curJSON, body, &autoscalingv1.Scale{})
				if err != nil {
					return nil, err
				}
				obj, err := s.decodeObject(patched, mediaJSON, fv, newScale, &warn)
				if err != nil {
					return nil, err
				}
				sc = obj.(*autoscalingv1.Scale)
			}
			if sc.Spec.Replicas < 0 {
				return nil, apierrors.NewInvalid(scaleGVK.GroupKind(), ri.Name, field.ErrorList{
					field.Invalid(field.NewPath("spec", "replicas"), sc.Spec.Replicas, "must be greater than or equal to 0"),
				})
			}
			next := cur.DeepCopyObject()
			res.Scale.Set(next, sc.Spec.Replicas)
			return s.prepareUpdate(ctx, res, next, cur, sc.ResourceVersion, "scale", dry)
		})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		warn.write(w)
		s.writeObject(w, r, http.StatusOK, scaleOf(res, out))
	default:
		s.writeError(w, r, apierrors.NewMethodNotSupported(res.GroupResource(), ri.Verb))
	}
}

// serveBinding binds a pod to a node, as the scheduler does: it sets
// spec.nodeName once and records PodScheduled=True.
func (s *Server) serveBinding(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	var warn warnings
	fv, err := parseFieldValidation(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	body, err := s.readBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	obj, err := s.decodeObject(body, r.Header.Get("Content-Type"), fv, func() runtime.Object { return &corev1.Binding{} }, &warn)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	audit.LogRequestObject(r.Context(), obj, s.codecs.json)
	b, ok := obj.(*corev1.Binding)
	if !ok {
		s.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("expected a Binding, got %T", obj)))
		return
	}
	if b.Name != "" && b.Name != ri.Name {
		s.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", b.Name, ri.Name)))
		return
	}
	if err := s.bind(r.Context(), res, ri.Namespace, ri.Name, b); err != nil {
		s.writeError(w, r, err)
		return
	}
	warn.write(w)
	s.writeObject(w, r, http.StatusCreated, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated})
}

func (s *Server) bind(ctx context.Context, res *resource, ns, name string, b *corev1.Binding) error {
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Binding").GroupKind(), name, field.ErrorList{
			field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}),
		})
	}
	if b.Target.Name == "" {
		return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Binding").GroupKind(), name, field.ErrorList{
			field.Required(field.NewPath("target", "name"), ""),
		})
	}
	_, err := s.update(ctx, res, ns, name, false, func(cur runtime.Object) (runtime.Object, error) {
		pod := cur.(*corev1.Pod)
		if b.UID != "" && b.UID != pod.UID {
			return nil, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
		}
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", name))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("pod %s is already assigned to node %q", name, pod.Spec.NodeName))
		}
		pod.Spec.NodeName = b.Target.Name
		for k, v := range b.Annotations {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[k] = v
		}
		setPodScheduled(pod)
		return pod, nil
	})
	return err
}

func setPodScheduled(pod *corev1.Pod) {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == corev1.PodScheduled {
			c.Status, c.Reason, c.Message = corev1.ConditionTrue, "", ""
			c.LastTransitionTime = now
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now,
	})
}

// serveFinalize handles PUT namespaces/NAME/finalize, which changes only
// spec.finalizers.
func (s *Server) serveFinalize(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	var warn warnings
	obj, dry, err := s.readObject(r, res, &warn)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	in := obj.(*corev1.Namespace)
	out, err := s.update(r.Context(), res, "", ri.Name, dry, func(cur runtime.Object) (runtime.Object, error) {
		ns := cur.(*corev1.Namespace)
		if in.ResourceVersion != "" && in.ResourceVersion != ns.ResourceVersion {
			return nil, apierrors.NewConflict(res.GroupResource(), ri.Name, fmt.Errorf(conflictMessage))
		}
		ns.Spec.Finalizers = in.Spec.Finalizers
		return ns, nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	warn.write(w)
	s.writeObject(w, r, http.StatusOK, out)
}
