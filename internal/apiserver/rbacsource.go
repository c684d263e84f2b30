package apiserver

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// RBACSource serves the RBAC authorizer from the server's own watch
// caches: no second copy of the roles, no client, and current as soon as
// the server is ready. The objects are the cache's own; nobody may change
// them.
type RBACSource struct{ s *Server }

// RBACSource returns the server's RBAC source.
func (s *Server) RBACSource() RBACSource { return RBACSource{s} }

func (r RBACSource) res(resource string) *resource {
	return r.s.resources[rbacv1.SchemeGroupVersion.WithResource(resource)]
}

// ClusterRoleBindings lists every ClusterRoleBinding.
func (r RBACSource) ClusterRoleBindings() []*rbacv1.ClusterRoleBinding {
	return cachedAs[*rbacv1.ClusterRoleBinding](r.res("clusterrolebindings"), "")
}

// RoleBindings lists the RoleBindings of a namespace.
func (r RBACSource) RoleBindings(namespace string) []*rbacv1.RoleBinding {
	return cachedAs[*rbacv1.RoleBinding](r.res("rolebindings"), namespace)
}

// ClusterRole reads one ClusterRole.
func (r RBACSource) ClusterRole(name string) (*rbacv1.ClusterRole, error) {
	return cachedOne[*rbacv1.ClusterRole](r.res("clusterroles"), "", name)
}

// Role reads one Role.
func (r RBACSource) Role(namespace, name string) (*rbacv1.Role, error) {
	return cachedOne[*rbacv1.Role](r.res("roles"), namespace, name)
}

func cachedAs[T any](res *resource, namespace string) []T {
	if res == nil || res.cache == nil {
		return nil
	}
	items, _ := res.cache.List(namespace, nil)
	out := make([]T, 0, len(items))
	for _, o := range items {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

func cachedOne[T any](res *resource, namespace, name string) (T, error) {
	var zero T
	if res == nil || res.cache == nil {
		return zero, apierrors.NewServiceUnavailable("RBAC is not served")
	}
	obj, _, ok := res.cache.Get(res.key(namespace, name))
	if !ok {
		return zero, apierrors.NewNotFound(res.GroupResource(), name)
	}
	t, ok := obj.(T)
	if !ok {
		return zero, apierrors.NewNotFound(res.GroupResource(), name)
	}
	return t, nil
}

// NodeSource serves the Node authorizer from the server's caches.
type NodeSource struct{ s *Server }

// NodeSource returns the server's Node authorizer source.
func (s *Server) NodeSource() NodeSource { return NodeSource{s} }

// PodsOnNode lists the pods bound to node. It walks every cached pod:
// enough while a cluster holds thousands of pods, not hundreds of
// thousands.
func (n NodeSource) PodsOnNode(node string) []*corev1.Pod {
	res := n.s.resources[corev1.SchemeGroupVersion.WithResource("pods")]
	if res == nil || res.cache == nil {
		return nil
	}
	items, _ := res.cache.List("", func(o runtime.Object) bool {
		p, ok := o.(*corev1.Pod)
		return ok && p.Spec.NodeName == node
	})
	out := make([]*corev1.Pod, 0, len(items))
	for _, o := range items {
		out = append(out, o.(*corev1.Pod))
	}
	return out
}

// PersistentVolumeClaim reads one claim from the cache.
func (n NodeSource) PersistentVolumeClaim(namespace, name string) *corev1.PersistentVolumeClaim {
	pvc, err := cachedOne[*corev1.PersistentVolumeClaim](n.s.resources[corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")], namespace, name)
	if err != nil {
		return nil
	}
	return pvc
}
