// Package podresize is upstream's PodResizeValidator admission plugin: a
// resize of a pod bound to a node is refused at once when the node could
// never hold it (its requests exceed the node's allocatable) or the node
// is not Linux, rather than left to wait on the kubelet for good.
package podresize

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/orca-project/orca/internal/admission"
)

// PluginName is upstream's name for the plugin.
const PluginName = "PodResizeValidator"

// Causes upstream attaches to a refusal, for clients to tell them apart.
const (
	ReasonNodeCapacity        metav1.CauseType = "NodeCapacity"
	ReasonUnsupportedPlatform metav1.CauseType = "UnsupportedPlatform"
)

var (
	podsGVR  = corev1.SchemeGroupVersion.WithResource("pods")
	nodesGVR = corev1.SchemeGroupVersion.WithResource("nodes")
)

// Plugin checks resizes against the pod's node.
type Plugin struct{ objects admission.Objects }

// New builds the plugin over the server's storage.
func New(objects admission.Objects) *Plugin { return &Plugin{objects: objects} }

func (*Plugin) Name() string { return PluginName }

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Update || a.Resource != podsGVR || a.Subresource != "resize" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected a pod but got a %T", a.Object))
	}
	if pod.Spec.NodeName == "" {
		return nil
	}
	old, ok := a.OldObject.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected an old pod but got a %T", a.OldObject))
	}
	// The generation moves only when the spec does: nothing to check.
	if old.Generation == pod.Generation {
		return nil
	}
	obj, err := p.objects.Get(ctx, nodesGVR, "", pod.Spec.NodeName)
	if apierrors.IsNotFound(err) {
		return admission.NewForbidden(a, fmt.Errorf("node %q not found", pod.Spec.NodeName))
	}
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to get node %q: %w", pod.Spec.NodeName, err))
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("stored node %s is a %T", pod.Spec.NodeName, obj))
	}
	if os, ok := node.Labels[corev1.LabelOSStable]; ok && os != "linux" {
		return refusal(a, fmt.Errorf("pod resize is only supported on linux nodes, node %q is %q", node.Name, os), ReasonUnsupportedPlatform)
	}
	if err := withinAllocatable(pod, node.Status.Allocatable); err != nil {
		return refusal(a, err, ReasonNodeCapacity)
	}
	return nil
}

// withinAllocatable refuses requests the node could not hold empty.
func withinAllocatable(pod *corev1.Pod, allocatable corev1.ResourceList) error {
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	cpu, mem := requests[corev1.ResourceCPU], requests[corev1.ResourceMemory]
	var msg []string
	if cpu.Cmp(*allocatable.Cpu()) > 0 {
		msg = append(msg, fmt.Sprintf("cpu, requested: %d, allocatable: %d", cpu.MilliValue(), allocatable.Cpu().MilliValue()))
	}
	if mem.Cmp(*allocatable.Memory()) > 0 {
		msg = append(msg, fmt.Sprintf("memory, requested: %d, allocatable: %d", mem.Value(), allocatable.Memory().Value()))
	}
	if len(msg) > 0 {
		return fmt.Errorf("node didn't have enough allocatable resources: %s", strings.Join(msg, "; "))
	}
	return nil
}

// refusal is a 403 carrying upstream's cause.
func refusal(a *admission.Attributes, err error, cause metav1.CauseType) error {
	forbidden := admission.NewForbidden(a, err)
	var status *apierrors.StatusError
	if errors.As(forbidden, &status) {
		if status.ErrStatus.Details == nil {
			status.ErrStatus.Details = &metav1.StatusDetails{}
		}
		status.ErrStatus.Details.Causes = append(status.ErrStatus.Details.Causes, metav1.StatusCause{Type: cause})
	}
	return forbidden
}
