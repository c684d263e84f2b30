package apiserver

import (
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// immortalNamespaces are the namespaces the cluster cannot work without;
// upstream's NamespaceLifecycle refuses to delete them.
var immortalNamespaces = []string{
	metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease,
}

// refuseImmortal answers a delete of one of the default namespaces with
// upstream's 403.
func refuseImmortal(res *resource, name string) error {
	if res.Group != "" || res.Name != "namespaces" || !slices.Contains(immortalNamespaces, name) {
		return nil
	}
	return apierrors.NewForbidden(res.GroupResource(), name, errors.New("this namespace may not be deleted"))
}

// gcFinalizers computes the finalizers an object gets when it is deleted
// with opts, as upstream's registry does: "orphan" asks the garbage
// collector to orphan the dependents first, "foregroundDeletion" to delete
// them first. An explicit option overrides a finalizer already present;
// without one, a present finalizer stands. Background deletion adds
// neither. changed reports whether the set differs from the object's.
func gcFinalizers(obj runtime.Object, opts *metav1.DeleteOptions) (finalizers []string, changed bool) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, false
	}
	cur := acc.GetFinalizers()
	orphan, foreground := deletionPolicy(cur, opts)
	var next []string
	for _, f := range cur {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			next = append(next, f)
		}
	}
	if orphan {
		next = append(next, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		next = append(next, metav1.FinalizerDeleteDependents)
	}
	if sameSet(cur, next) {
		return cur, false
	}
	return next, true
}

// deletionPolicy decides between orphaning and foreground deletion.
func deletionPolicy(finalizers []string, opts *metav1.DeleteOptions) (orphan, foreground bool) {
	//nolint:staticcheck // orphanDependents is deprecated but still honoured, as upstream.
	if o := opts.OrphanDependents; o != nil {
		return *o, false
	}
	if p := opts.PropagationPolicy; p != nil {
		return *p == metav1.DeletePropagationOrphan, *p == metav1.DeletePropagationForeground
	}
	for _, f := range finalizers {
		switch f {
		case metav1.FinalizerOrphanDependents:
			return true, false
		case metav1.FinalizerDeleteDependents:
			return false, true
		}
	}
	return false, false
}

// markForGC applies gcFinalizers to obj in place.
func markForGC(obj runtime.Object, opts *metav1.DeleteOptions) {
	if fs, changed := gcFinalizers(obj, opts); changed {
		acc, _ := meta.Accessor(obj)
		acc.SetFinalizers(fs)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
