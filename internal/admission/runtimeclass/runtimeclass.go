// Package runtimeclass is upstream's RuntimeClass admission plugin: a new
// pod naming a RuntimeClass must name one that exists, gets the class's
// fixed overhead as spec.overhead, and is placed by the class's scheduling
// constraints (its node selector merged into the pod's, its tolerations
// added). A pod may not carry an overhead its class does not define.
//
// What the plugin does to a pod is decided by pure functions of the pod
// and the class (overhead.go, scheduling.go); the plugin only looks the
// class up.
package runtimeclass

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/orca-project/orca/internal/admission"
)

// PluginName is upstream's name for the plugin.
const PluginName = "RuntimeClass"

var (
	podsGVR           = corev1.SchemeGroupVersion.WithResource("pods")
	runtimeClassesGVR = nodev1.SchemeGroupVersion.WithResource("runtimeclasses")
)

// Plugin applies pods' runtime classes.
type Plugin struct{ objects admission.Objects }

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// New builds the plugin over the server's storage.
func New(objects admission.Objects) *Plugin { return &Plugin{objects: objects} }

func (*Plugin) Name() string { return PluginName }

// Admit sets a new pod's overhead and scheduling constraints from its
// class.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	pod, ok := handles(a)
	if !ok {
		return nil
	}
	rc, err := p.class(ctx, a, pod)
	if err != nil {
		return err
	}
	if err := setOverhead(pod, rc); err != nil {
		return admission.NewForbidden(a, err)
	}
	if err := setScheduling(pod, rc); err != nil {
		return admission.NewForbidden(a, err)
	}
	return nil
}

// Validate checks, after every other plugin had its say, that the pod's
// overhead is still its class's.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	pod, ok := handles(a)
	if !ok {
		return nil
	}
	rc, err := p.class(ctx, a, pod)
	if err != nil {
		return err
	}
	if err := checkOverhead(pod, rc); err != nil {
		return admission.NewForbidden(a, err)
	}
	return nil
}

// handles returns the pod of a request the plugin acts on: pods being
// created, as upstream's handler is registered for CREATE only (a pod's
// spec is fixed afterwards).
func handles(a *admission.Attributes) (*corev1.Pod, bool) {
	if a.Operation != admission.Create || a.Subresource != "" || a.Resource.GroupResource() != podsGVR.GroupResource() {
		return nil, false
	}
	pod, ok := a.Object.(*corev1.Pod)
	return pod, ok
}

// class returns the pod's RuntimeClass, nil when it names none. The
// server's lookup falls back from its cache to etcd, so a class created
// a moment ago is found, as upstream's live lookup finds it.
func (p *Plugin) class(ctx context.Context, a *admission.Attributes, pod *corev1.Pod) (*nodev1.RuntimeClass, error) {
	if pod.Spec.RuntimeClassName == nil {
		return nil, nil
	}
	name := *pod.Spec.RuntimeClassName
	obj, err := p.objects.Get(ctx, runtimeClassesGVR, "", name)
	if apierrors.IsNotFound(err) {
		return nil, admission.NewForbidden(a, fmt.Errorf("pod rejected: RuntimeClass %q not found", name))
	}
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to get RuntimeClass %s: %w", name, err))
	}
	rc, ok := obj.(*nodev1.RuntimeClass)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("stored runtime class %s is a %T", name, obj))
	}
	return rc, nil
}
