// Package noderestriction is upstream's NodeRestriction admission plugin:
// a node's identity may change only its own Node (and none of its
// node-restriction.kubernetes.io/ labels), its own Lease and CSINode, and
// the pods bound to it (evictions included); and, Orca's addition, the
// local-path finalizer of the volumes kept on it. The Node authorizer lets nodes write those kinds at all;
// this plugin, which sees the objects, narrows it to their own.
package noderestriction

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/auth/node"
	"github.com/orca-project/orca/internal/localpath"
)

// PluginName is upstream's name for the plugin.
const PluginName = "NodeRestriction"

// restrictedPrefix marks labels only an administrator may set on a node,
// so that workloads can trust them for placement.
const restrictedPrefix = "node-restriction.kubernetes.io/"

var (
	podsGVR    = corev1.SchemeGroupVersion.WithResource("pods")
	nodesGVR   = corev1.SchemeGroupVersion.WithResource("nodes")
	leasesGVR  = coordinationv1.SchemeGroupVersion.WithResource("leases")
	volumesGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	csiNodeGVR = storagev1.SchemeGroupVersion.WithResource("csinodes")
)

// Plugin refuses a node's writes to objects that are not its own.
type Plugin struct {
	// objects reads the pod a node asks to evict; nil refuses node
	// evictions outright.
	objects admission.Objects
}

// New returns the plugin, reading pods from objects.
func New(objects admission.Objects) *Plugin { return &Plugin{objects: objects} }

func (*Plugin) Name() string { return PluginName }

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	name, isNode := node.Identity(&user.DefaultInfo{Name: a.UserName, Groups: a.Groups})
	if !isNode {
		return nil
	}
	if name == "" {
		return admission.NewForbidden(a, fmt.Errorf("could not determine node from user %q", a.UserName))
	}
	var err error
	switch a.Resource {
	case podsGVR:
		if a.Subresource == "eviction" {
			err = p.eviction(ctx, name, a)
		} else {
			err = pod(name, a)
		}
	case nodesGVR:
		err = nodeObject(name, a)
	case volumesGVR:
		err = persistentVolume(name, a)
	case leasesGVR:
		if objectName(a) != name {
			err = fmt.Errorf("can only access node lease with the same name as the requesting node")
		}
	case csiNodeGVR:
		err = csiNode(name, a)
	}
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	return nil
}

func objectName(a *admission.Attributes) string {
	if a.Name != "" {
		return a.Name
	}
	switch o := a.Object.(type) {
	case *coordinationv1.Lease:
		return o.Name
	case *storagev1.CSINode:
		return o.Name
	}
	return ""
}

// csiNode: a node registers its drivers only in the CSINode named after
// it. Its status stays closed while CSIVolumeHealth is off, as upstream's.
func csiNode(name string, a *admission.Attributes) error {
	if objectName(a) != name {
		return fmt.Errorf("can only access CSINode with the same name as the requesting node")
	}
	if a.Subresource == "status" {
		return fmt.Errorf("CSIVolumeHealth feature gate is disabled")
	}
	return nil
}

func pod(name string, a *admission.Attributes) error {
	switch a.Operation {
	case admission.Create:
		p, ok := a.Object.(*corev1.Pod)
		if !ok || a.Subresource != "" {
			return nil
		}
		if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
			return fmt.Errorf("pod does not have %q annotation, node %q can only create mirror pods", corev1.MirrorPodAnnotationKey, name)
		}
		if p.Spec.NodeName != name {
			return fmt.Errorf("node %q can only create pods with spec.nodeName set to itself", name)
		}
	case admission.Update:
		old, ok := a.OldObject.(*corev1.Pod)
		if !ok {
			return nil
		}
		if a.Subresource != "status" {
			return fmt.Errorf("node %q can only update pod status", name)
		}
		if old.Spec.NodeName != name {
			return fmt.Errorf("node %q can only update pod status for pods with spec.nodeName set to itself", name)
		}
	case admission.Delete:
		old, ok := a.OldObject.(*corev1.Pod)
		if ok && old.Spec.NodeName != name {
			return fmt.Errorf("node %q can only delete pods with spec.nodeName set to itself", name)
		}
	}
	return nil
}

func nodeObject(name string, a *admission.Attributes) error {
	target := a.Name
	if n, ok := a.Object.(*corev1.Node); ok && target == "" {
		target = n.Name
	}
	if target != name {
		return fmt.Errorf("node %q is not allowed to modify node %q", name, target)
	}
	n, ok := a.Object.(*corev1.Node)
	if !ok {
		return nil
	}
	switch a.Operation {
	case admission.Create:
		if bad := restrictedLabels(n.Labels, nil); len(bad) > 0 {
			return fmt.Errorf("node %q is not allowed to set the following labels: %s", name, strings.Join(bad, ", "))
		}
	case admission.Update:
		old, _ := a.OldObject.(*corev1.Node)
		if old == nil {
			return nil
		}
		if bad := restrictedLabels(n.Labels, old.Labels); len(bad) > 0 {
			return fmt.Errorf("node %q is not allowed to modify labels: %s", name, strings.Join(bad, ", "))
		}
	}
	return nil
}

// persistentVolume: a node may only take the local-path finalizer off a
// volume kept on it, once it has removed the volume's directory.
func persistentVolume(name string, a *admission.Attributes) error {
	pv, ok1 := a.Object.(*corev1.PersistentVolume)
	old, ok2 := a.OldObject.(*corev1.PersistentVolume)
	if a.Operation != admission.Update || a.Subresource != "" || !ok1 || !ok2 {
		return fmt.Errorf("node %q can only remove the %s finalizer of persistentvolumes", name, localpath.Finalizer)
	}
	if old.Labels[localpath.NodeLabel] != name {
		return fmt.Errorf("node %q can only update persistentvolumes labelled %s=%s", name, localpath.NodeLabel, name)
	}
	want := slices.DeleteFunc(slices.Clone(old.Finalizers), func(f string) bool { return f == localpath.Finalizer })
	if !slices.Equal(pv.Finalizers, want) || !slices.Contains(old.Finalizers, localpath.Finalizer) ||
		!equality.Semantic.DeepEqual(pv.Spec, old.Spec) || !equality.Semantic.DeepEqual(pv.Labels, old.Labels) ||
		!equality.Semantic.DeepEqual(pv.Annotations, old.Annotations) || !equality.Semantic.DeepEqual(pv.OwnerReferences, old.OwnerReferences) {
		return fmt.Errorf("node %q can only remove the %s finalizer of persistentvolumes", name, localpath.Finalizer)
	}
	return nil
}

// restrictedLabels are the node-restriction.kubernetes.io/ labels that
// differ between the new and the old label sets.
func restrictedLabels(labels, old map[string]string) []string {
	var bad []string
	seen := map[string]bool{}
	for _, m := range []map[string]string{labels, old} {
		for k := range m {
			if seen[k] || !strings.HasPrefix(k, restrictedPrefix) {
				continue
			}
			seen[k] = true
			nv, inNew := labels[k]
			ov, inOld := old[k]
			if inNew != inOld || nv != ov {
				bad = append(bad, k)
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// eviction lets a node evict only the pods bound to it, as upstream: the
// eviction would otherwise let it delete any pod its budget allows.
func (p *Plugin) eviction(ctx context.Context, name string, a *admission.Attributes) error {
	if a.Operation != admission.Create {
		return fmt.Errorf("unexpected operation %s", a.Operation)
	}
	if p.objects == nil {
		return fmt.Errorf("could not determine pod from request data")
	}
	obj, err := p.objects.Get(ctx, podsGVR, a.Namespace, a.Name)
	if apierrors.IsNotFound(err) {
		// The eviction answers 404 itself.
		return nil
	}
	if err != nil {
		return err
	}
	if pod, ok := obj.(*corev1.Pod); !ok || pod.Spec.NodeName != name {
		return fmt.Errorf("node %s can only evict pods with spec.nodeName set to itself", name)
	}
	return nil
}
