// Package priority is upstream's Priority admission plugin: a pod's
// priorityClassName is resolved to spec.priority and
// spec.preemptionPolicy when the pod is created, a pod naming no class
// gets the global default, and at most one class may be the global
// default.
package priority

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/admission"
)

// PluginName is upstream's name for the plugin.
const PluginName = "Priority"

// Upstream's built-in classes and the priority of a pod when no class is
// the global default.
const (
	SystemClusterCritical = "system-cluster-critical"
	SystemNodeCritical    = "system-node-critical"
	// HighestUserDefinablePriority bounds the classes users may create;
	// the system classes sit above it.
	HighestUserDefinablePriority                  = 1000000000
	SystemCriticalPriority                        = 2 * HighestUserDefinablePriority
	defaultPriorityWhenNoDefaultClassExists int32 = 0
)

var (
	podsGVR            = corev1.SchemeGroupVersion.WithResource("pods")
	priorityClassesGVR = schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")
)

// SystemPriorityClasses are the classes every cluster has.
func SystemPriorityClasses() []*schedulingv1.PriorityClass {
	return []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: SystemNodeCritical}, Value: SystemCriticalPriority + 1000,
			Description: "Used for system critical pods that must not be moved from their current node."},
		{ObjectMeta: metav1.ObjectMeta{Name: SystemClusterCritical}, Value: SystemCriticalPriority,
			Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."},
	}
}

// Bootstrap creates the system classes that do not exist yet. It runs on
// every start; a class that exists is left as it is.
func Bootstrap(ctx context.Context, objects admission.Objects) error {
	for _, pc := range SystemPriorityClasses() {
		if _, err := objects.Get(ctx, priorityClassesGVR, "", pc.Name); err == nil {
			continue
		}
		if _, err := objects.Create(ctx, priorityClassesGVR, "", pc); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create priority class %s: %w", pc.Name, err)
		}
	}
	return nil
}

// Plugin resolves pod priorities and guards the global default class.
type Plugin struct{ objects admission.Objects }

// New builds the plugin over the server's storage.
func New(objects admission.Objects) *Plugin { return &Plugin{objects: objects} }

func (*Plugin) Name() string { return PluginName }

// Admit sets a new pod's priority from its class and keeps it on updates.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Resource != podsGVR || a.Subresource != "" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	switch a.Operation {
	case admission.Update:
		// The priority was set on create; an update that leaves it out
		// keeps it (validation refuses changing it).
		if old, ok := a.OldObject.(*corev1.Pod); ok {
			if pod.Spec.Priority == nil {
				pod.Spec.Priority = old.Spec.Priority
			}
			if pod.Spec.PreemptionPolicy == nil {
				pod.Spec.PreemptionPolicy = old.Spec.PreemptionPolicy
			}
		}
		return nil
	case admission.Create:
	default:
		return nil
	}
	var value int32
	var policy *corev1.PreemptionPolicy
	if pod.Spec.PriorityClassName == "" {
		pc, err := p.globalDefault(ctx)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to get default priority class: %w", err))
		}
		if pc != nil {
			pod.Spec.PriorityClassName, value, policy = pc.Name, pc.Value, pc.PreemptionPolicy
		} else {
			value = defaultPriorityWhenNoDefaultClassExists
			lower := corev1.PreemptLowerPriority
			policy = &lower
		}
	} else {
		obj, err := p.objects.Get(ctx, priorityClassesGVR, "", pod.Spec.PriorityClassName)
		if apierrors.IsNotFound(err) {
			return admission.NewForbidden(a, fmt.Errorf("no PriorityClass with name %v was found", pod.Spec.PriorityClassName))
		}
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to get PriorityClass with name %s: %w", pod.Spec.PriorityClassName, err))
		}
		pc, ok := obj.(*schedulingv1.PriorityClass)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("stored priority class %s is a %T", pod.Spec.PriorityClassName, obj))
		}
		value, policy = pc.Value, pc.PreemptionPolicy
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != value {
		return admission.NewForbidden(a, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, value))
	}
	pod.Spec.Priority = &value
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return admission.NewForbidden(a, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
		}
		pc := *policy
		pod.Spec.PreemptionPolicy = &pc
	}
	return nil
}

// Validate refuses a second global default class.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource != priorityClassesGVR || a.Subresource != "" || (a.Operation != admission.Create && a.Operation != admission.Update) {
		return nil
	}
	pc, ok := a.Object.(*schedulingv1.PriorityClass)
	if !ok || !pc.GlobalDefault {
		return nil
	}
	dpc, err := p.globalDefault(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to get default priority class: %w", err))
	}
	if dpc != nil && dpc.Name != pc.Name {
		// Upstream only compares on create; an update that makes a
		// second class the default is refused the same way.
		return admission.NewForbidden(a, fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", dpc.Name))
	}
	return nil
}

// globalDefault is the default class; if a race left several, the one
// with the lowest value, as upstream picks.
func (p *Plugin) globalDefault(ctx context.Context) (*schedulingv1.PriorityClass, error) {
	items, err := p.objects.List(ctx, priorityClassesGVR, "")
	if err != nil {
		return nil, err
	}
	var out *schedulingv1.PriorityClass
	for _, it := range items {
		pc, ok := it.(*schedulingv1.PriorityClass)
		if !ok {
			return nil, errors.New("priority class list holds another kind")
		}
		if pc.GlobalDefault && (out == nil || pc.Value < out.Value) {
			out = pc
		}
	}
	return out, nil
}
