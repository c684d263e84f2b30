// Package podsecurity is upstream's PodSecurity admission plugin: the Pod
// Security Standards (privileged, baseline, restricted) applied per
// namespace by its pod-security.kubernetes.io/{enforce,audit,warn}[-version]
// labels, over cluster-wide defaults and exemptions read from upstream's
// PodSecurityConfiguration.
//
// The checks and the label grammar are upstream's own
// (k8s.io/pod-security-admission's policy and api packages). This package
// decides with them (Checker, a pure function of the request and its
// namespace) and tells the outcome the way kube-apiserver does: enforce
// refuses pods with a 403, warn becomes Warning headers, audit becomes
// annotations on the request's audit event. Workload objects with pod
// templates are warned and audited, never refused; a namespace whose
// enforce level tightens gets warnings naming its existing pods that
// violate it.
package podsecurity

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/pod-security-admission/api"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/audit"
)

// PluginName is upstream's name for the plugin.
const PluginName = "PodSecurity"

// podCheckTimeout bounds the check of existing pods on a namespace
// update, as upstream's (half the request's remaining time if less).
const podCheckTimeout = time.Second

var (
	namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")
	podsGVR       = corev1.SchemeGroupVersion.WithResource("pods")
)

// podTemplateResources are the workload kinds whose templates are
// checked, upstream's list.
var podTemplateResources = map[schema.GroupResource]bool{
	corev1.Resource("replicationcontrollers"): true,
	corev1.Resource("podtemplates"):           true,
	appsv1.Resource("replicasets"):            true,
	appsv1.Resource("deployments"):            true,
	appsv1.Resource("statefulsets"):           true,
	appsv1.Resource("daemonsets"):             true,
	batchv1.Resource("jobs"):                  true,
	batchv1.Resource("cronjobs"):              true,
}

// Plugin applies the Pod Security Standards.
type Plugin struct {
	objects admission.Objects
	checker *Checker
}

var _ admission.Validator = (*Plugin)(nil)

// New builds the plugin over the server's storage, deciding with c.
func New(objects admission.Objects, c *Checker) *Plugin {
	return &Plugin{objects: objects, checker: c}
}

func (*Plugin) Name() string { return PluginName }

// Validate implements admission.Validator for creates and updates.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Create && a.Operation != admission.Update {
		return nil
	}
	var d Decision
	switch gr := a.Resource.GroupResource(); {
	case gr == namespacesGVR.GroupResource():
		d = p.namespace(ctx, a)
	case gr == podsGVR.GroupResource():
		d = p.withNamespace(ctx, a, true, p.checker.Pod)
	case podTemplateResources[gr]:
		d = p.withNamespace(ctx, a, false, p.checker.PodController)
	default:
		return nil
	}
	for _, w := range d.Warnings {
		admission.AddWarning(ctx, w)
	}
	for k, v := range d.Audit {
		audit.AddAnnotation(ctx, api.AuditAnnotationPrefix+k, v)
	}
	return d.Err
}

// withNamespace reads the request's namespace and decides with it. A
// namespace that cannot be read refuses a pod (its policy is unknown)
// but only annotates a workload write, as upstream.
func (p *Plugin) withNamespace(ctx context.Context, a *admission.Attributes, refuse bool, decide func(*admission.Attributes, *corev1.Namespace) Decision) Decision {
	if d, done := p.checker.skip(a); done {
		return d
	}
	obj, err := p.objects.Get(ctx, namespacesGVR, "", a.Namespace)
	if err == nil {
		if ns, ok := obj.(*corev1.Namespace); ok {
			return decide(a, ns)
		}
		err = fmt.Errorf("unexpected type %T", obj)
	}
	if refuse {
		msg := fmt.Sprintf("failed to lookup namespace %q", a.Namespace)
		return Decision{
			Err:   apierrors.NewInternalError(fmt.Errorf("%s", msg)),
			Audit: map[string]string{"error": fmt.Sprintf("Internal error occurred: %s: %v", msg, err)},
		}
	}
	return Decision{Audit: map[string]string{"error": fmt.Sprintf("failed to lookup namespace %q: %v", a.Namespace, err)}}
}

// namespace decides a namespace write and, when enforce tightens, warns
// about the existing pods that the new level would refuse.
func (p *Plugin) namespace(ctx context.Context, a *admission.Attributes) Decision {
	d, enforce := p.checker.Namespace(a)
	if enforce == nil {
		return d
	}
	timeout := podCheckTimeout
	if deadline, ok := ctx.Deadline(); ok {
		if half := time.Until(deadline) / 2; half < timeout {
			timeout = half
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ns := a.Object.(*corev1.Namespace).Name
	objs, err := p.objects.List(ctx, podsGVR, ns)
	if err != nil {
		d.Warnings = append(d.Warnings, "failed to list pods while checking new PodSecurity enforce level")
		return d
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if pod, ok := o.(*corev1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	d.Warnings = append(d.Warnings, p.checker.ExistingPods(ctx, ns, *enforce, pods)...)
	return d
}
