package apiserver

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// finalizersPending reports whether something still holds obj back from
// removal. For a namespace that is spec.finalizers as well as
// metadata.finalizers: the namespace controller empties spec.finalizers
// through /finalize only once the namespace's content is gone, and
// removing the namespace earlier would strand that content.
func finalizersPending(obj runtime.Object) bool {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if len(acc.GetFinalizers()) > 0 {
		return true
	}
	if ns, ok := obj.(*corev1.Namespace); ok && len(ns.Spec.Finalizers) > 0 {
		return true
	}
	return false
}

// markTerminating moves a namespace being deleted to phase Terminating,
// which admission and the controllers read as "accept no new content".
func markTerminating(obj runtime.Object) {
	if ns, ok := obj.(*corev1.Namespace); ok && ns.DeletionTimestamp != nil {
		ns.Status.Phase = corev1.NamespaceTerminating
	}
}
