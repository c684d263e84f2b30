package apiserver

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// PodExplanations answers GET pods/NAME/explanation from the scheduler
// running in this process: the JSON of the latest explanation it keeps
// for namespace/name if it is about the pod with uid. Only a scheduler
// that schedules (the leader) has any.
type PodExplanations func(namespace, name, uid string) ([]byte, bool)

// servePodExplanation serves the pods/explanation subresource: the pod
// must exist (a caller learns nothing about pods that do not) and the
// scheduler must still keep an explanation for it.
func (s *Server) servePodExplanation(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	obj, err := s.get(r.Context(), res, ri.Namespace, ri.Name, "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		s.writeError(w, r, fmt.Errorf("pods/explanation: got %T", obj))
		return
	}
	var body []byte
	if s.cfg.PodExplanations != nil {
		body, ok = s.cfg.PodExplanations(pod.Namespace, pod.Name, string(pod.UID))
	}
	if !ok {
		s.writeError(w, r, apierrors.NewNotFound(res.GroupResource(), ri.Name+"/explanation: the scheduler in this server keeps none for this pod"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
