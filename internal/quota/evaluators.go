package quota

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Evaluator measures one resource's objects.
type Evaluator interface {
	GroupResource() schema.GroupResource
	// HandlesUpdate reports whether an update can change the usage
	// (creates always can).
	HandlesUpdate() bool
	// MatchingResources keeps the quota resource names this evaluator
	// counts.
	MatchingResources(names []corev1.ResourceName) []corev1.ResourceName
	// MatchesScope reports whether obj falls in a quota scope.
	MatchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error)
	// Constraints refuses an object a quota cannot measure (a pod that
	// does not state a constrained request, say).
	Constraints(required []corev1.ResourceName, obj runtime.Object) error
	// Usage is what obj costs.
	Usage(obj runtime.Object) (corev1.ResourceList, error)
}

// ObjectCountName is the quota resource counting a resource's objects:
// count/pods, count/deployments.apps.
func ObjectCountName(gr schema.GroupResource) corev1.ResourceName {
	return corev1.ResourceName("count/" + gr.String())
}

// ForResource returns the evaluator for a resource: a dedicated one for
// pods, services and claims, an object count (with upstream's legacy
// name where there is one) for everything else.
func ForResource(gr schema.GroupResource) Evaluator {
	if gr.Group == "" {
		switch gr.Resource {
		case "pods":
			return podEvaluator{}
		case "services":
			return serviceEvaluator{}
		case "persistentvolumeclaims":
			return claimEvaluator{}
		case "configmaps", "secrets", "replicationcontrollers", "resourcequotas":
			return countEvaluator{gr: gr, legacy: corev1.ResourceName(gr.Resource)}
		}
	}
	return countEvaluator{gr: gr}
}

// ScopeSelectors are a quota's scopes and scope selector as one list.
func ScopeSelectors(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// InScope reports whether obj falls in every scope of the quota.
func InScope(q *corev1.ResourceQuota, e Evaluator, obj runtime.Object) (bool, error) {
	for _, sel := range ScopeSelectors(q) {
		ok, err := e.MatchesScope(sel, obj)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// Matches reports whether a quota charges obj: it limits something the
// evaluator counts (by status.hard, what the controller has observed) and
// obj is in its scopes.
func Matches(q *corev1.ResourceQuota, e Evaluator, obj runtime.Object) (bool, error) {
	if len(e.MatchingResources(Names(q.Status.Hard))) == 0 {
		return false, nil
	}
	return InScope(q, e, obj)
}

// countEvaluator counts objects.
type countEvaluator struct {
	gr     schema.GroupResource
	legacy corev1.ResourceName
}

func (e countEvaluator) GroupResource() schema.GroupResource { return e.gr }
func (countEvaluator) HandlesUpdate() bool                   { return false }
func (e countEvaluator) MatchingResources(names []corev1.ResourceName) []corev1.ResourceName {
	set := map[corev1.ResourceName]bool{ObjectCountName(e.gr): true}
	if e.legacy != "" {
		set[e.legacy] = true
	}
	return intersect(names, set)
}

// MatchesScope: no scope applies to plain objects, so a scoped quota
// never counts them.
func (countEvaluator) MatchesScope(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error) {
	return false, nil
}
func (countEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }
func (e countEvaluator) Usage(runtime.Object) (corev1.ResourceList, error) {
	out := corev1.ResourceList{ObjectCountName(e.gr): one()}
	if e.legacy != "" {
		out[e.legacy] = one()
	}
	return out, nil
}

var (
	podsGR       = schema.GroupResource{Resource: "pods"}
	servicesGR   = schema.GroupResource{Resource: "services"}
	claimsGR     = schema.GroupResource{Resource: "persistentvolumeclaims"}
	podResources = map[corev1.ResourceName]bool{
		ObjectCountName(podsGR): true, corev1.ResourcePods: true,
		corev1.ResourceCPU: true, corev1.ResourceMemory: true, corev1.ResourceEphemeralStorage: true,
		corev1.ResourceRequestsCPU: true, corev1.ResourceRequestsMemory: true, corev1.ResourceRequestsEphemeralStorage: true,
		corev1.ResourceLimitsCPU: true, corev1.ResourceLimitsMemory: true, corev1.ResourceLimitsEphemeralStorage: true,
	}
	// validationSet are the resources a pod must state for every
	// container when a quota limits them (upstream keeps this for
	// compatibility; it predates QoS classes).
	validationSet = map[corev1.ResourceName]bool{
		corev1.ResourceCPU: true, corev1.ResourceMemory: true,
		corev1.ResourceRequestsCPU: true, corev1.ResourceRequestsMemory: true,
		corev1.ResourceLimitsCPU: true, corev1.ResourceLimitsMemory: true,
	}
)

type podEvaluator struct{}

func (podEvaluator) GroupResource() schema.GroupResource { return podsGR }

// HandlesUpdate: a pod's containers cannot change through the pod
// itself (only through the resize subresource), so upstream charges pods
// on create only; an update of an old pod's labels must not trip over a
// quota created after it.
func (podEvaluator) HandlesUpdate() bool { return false }

func (podEvaluator) MatchingResources(names []corev1.ResourceName) []corev1.ResourceName {
	out := intersect(names, podResources)
	for _, n := range names {
		s := string(n)
		if strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) || strings.HasPrefix(s, corev1.ResourceRequestsHugePagesPrefix) || isExtendedRequest(s) {
			out = append(out, n)
		}
	}
	return out
}

// isExtendedRequest: requests.<domain>/<name> outside kubernetes.io, the
// only form quota accepts for extended resources.
func isExtendedRequest(s string) bool {
	rest, ok := strings.CutPrefix(s, corev1.DefaultResourceRequestsPrefix)
	return ok && isExtended(rest)
}

func isExtended(s string) bool {
	native := !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix)
	return !native && !strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix)
}

func (podEvaluator) MatchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false, fmt.Errorf("expected a pod, got %T", obj)
	}
	switch sel.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return isTerminating(pod), nil
	case corev1.ResourceQuotaScopeNotTerminating:
		return !isTerminating(pod), nil
	case corev1.ResourceQuotaScopeBestEffort:
		return isBestEffort(pod), nil
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !isBestEffort(pod), nil
	case corev1.ResourceQuotaScopePriorityClass:
		if sel.Operator == corev1.ScopeSelectorOpExists {
			return pod.Spec.PriorityClassName != "", nil
		}
		s, err := scopeSelector(sel)
		if err != nil {
			return false, err
		}
		var m labels.Set
		if pod.Spec.PriorityClassName != "" {
			m = labels.Set{string(corev1.ResourceQuotaScopePriorityClass): pod.Spec.PriorityClassName}
		}
		return s.Matches(m), nil
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return crossNamespaceAffinity(pod), nil
	}
	return false, nil
}

// scopeSelector turns a scope requirement into a label selector keyed by
// the scope name, as upstream evaluates them.
func scopeSelector(sel corev1.ScopedResourceSelectorRequirement) (labels.Selector, error) {
	var op selection.Operator
	switch sel.Operator {
	case corev1.ScopeSelectorOpIn:
		op = selection.In
	case corev1.ScopeSelectorOpNotIn:
		op = selection.NotIn
	case corev1.ScopeSelectorOpExists:
		op = selection.Exists
	case corev1.ScopeSelectorOpDoesNotExist:
		op = selection.DoesNotExist
	default:
		return nil, fmt.Errorf("%q is not a valid scope selector operator", sel.Operator)
	}
	r, err := labels.NewRequirement(string(sel.ScopeName), op, sel.Values)
	if err != nil {
		return nil, fmt.Errorf("failed to parse and convert selector: %w", err)
	}
	return labels.NewSelector().Add(*r), nil
}

func isTerminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

// isBestEffort: no container requests or limits cpu or memory.
func isBestEffort(pod *corev1.Pod) bool {
	if pod.Spec.Resources != nil && (hasCompute(pod.Spec.Resources.Requests) || hasCompute(pod.Spec.Resources.Limits)) {
		return false
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if hasCompute(c.Resources.Requests) || hasCompute(c.Resources.Limits) {
				return false
			}
		}
	}
	return true
}

func hasCompute(l corev1.ResourceList) bool {
	for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := l[n]; ok && q.Sign() > 0 {
			return true
		}
	}
	return false
}

func crossNamespaceAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	cross := func(terms []corev1.PodAffinityTerm) bool {
		for _, t := range terms {
			if len(t.Namespaces) > 0 || t.NamespaceSelector != nil {
				return true
			}
		}
		return false
	}
	weighted := func(terms []corev1.WeightedPodAffinityTerm) bool {
		for _, t := range terms {
			if len(t.PodAffinityTerm.Namespaces) > 0 || t.PodAffinityTerm.NamespaceSelector != nil {
				return true
			}
		}
		return false
	}
	if pa := a.PodAffinity; pa != nil && (cross(pa.RequiredDuringSchedulingIgnoredDuringExecution) || weighted(pa.PreferredDuringSchedulingIgnoredDuringExecution)) {
		return true
	}
	if pa := a.PodAntiAffinity; pa != nil && (cross(pa.RequiredDuringSchedulingIgnoredDuringExecution) || weighted(pa.PreferredDuringSchedulingIgnoredDuringExecution)) {
		return true
	}
	return false
}

func (podEvaluator) Constraints(required []corev1.ResourceName, obj runtime.Object) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("expected a pod, got %T", obj)
	}
	req := map[corev1.ResourceName]bool{}
	for _, r := range required {
		if validationSet[r] {
			req[r] = true
		}
	}
	missing := map[corev1.ResourceName]map[string]bool{}
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			have := computeUsage(c.Resources.Requests, c.Resources.Limits)
			for r := range req {
				if _, ok := have[r]; !ok {
					if missing[r] == nil {
						missing[r] = map[string]bool{}
					}
					missing[r][c.Name] = true
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var msgs []string
	for _, r := range Names(toList(missing)) {
		var names []string
		for n := range missing[r] {
			names = append(names, n)
		}
		sort.Strings(names)
		msgs = append(msgs, fmt.Sprintf("%s for: %s", r, strings.Join(names, ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}

func toList[V any](m map[corev1.ResourceName]V) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k := range m {
		out[k] = resource.Quantity{}
	}
	return out
}

// Usage of a pod: always count/pods; compute resources and "pods" only
// while it is not terminal (a finished pod or one stuck past its deletion
// grace period should not block its replacement).
func (podEvaluator) Usage(obj runtime.Object) (corev1.ResourceList, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("expected a pod, got %T", obj)
	}
	out := corev1.ResourceList{ObjectCountName(podsGR): one()}
	if !CountsAgainstQuota(pod, time.Now()) {
		return out, nil
	}
	opts := resourcehelper.PodResourcesOptions{}
	return Add(out, computeUsage(resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts))), nil
}

// CountsAgainstQuota reports whether a pod's compute resources are
// charged: not once it has succeeded or failed, nor once it is overdue
// for deletion.
func CountsAgainstQuota(pod *corev1.Pod, now time.Time) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		if now.After(pod.DeletionTimestamp.Add(time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second)) {
			return false
		}
	}
	return true
}

// computeUsage maps requests and limits to quota resources.
func computeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourcePods: one()}
	set := func(from corev1.ResourceList, name corev1.ResourceName, to ...corev1.ResourceName) {
		if q, ok := from[name]; ok {
			for _, t := range to {
				out[t] = q.DeepCopy()
			}
		}
	}
	set(requests, corev1.ResourceCPU, corev1.ResourceCPU, corev1.ResourceRequestsCPU)
	set(limits, corev1.ResourceCPU, corev1.ResourceLimitsCPU)
	set(requests, corev1.ResourceMemory, corev1.ResourceMemory, corev1.ResourceRequestsMemory)
	set(limits, corev1.ResourceMemory, corev1.ResourceLimitsMemory)
	set(requests, corev1.ResourceEphemeralStorage, corev1.ResourceEphemeralStorage, corev1.ResourceRequestsEphemeralStorage)
	set(limits, corev1.ResourceEphemeralStorage, corev1.ResourceLimitsEphemeralStorage)
	for name, q := range requests {
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			out[name] = q.DeepCopy()
			out[corev1.DefaultResourceRequestsPrefix+name] = q.DeepCopy()
		}
		if isExtended(string(name)) {
			out[corev1.DefaultResourceRequestsPrefix+name] = q.DeepCopy()
		}
	}
	return out
}

var serviceResources = map[corev1.ResourceName]bool{
	ObjectCountName(servicesGR): true, corev1.ResourceServices: true,
	corev1.ResourceServicesNodePorts: true, corev1.ResourceServicesLoadBalancers: true,
}

type serviceEvaluator struct{ countEvaluator }

func (serviceEvaluator) GroupResource() schema.GroupResource { return servicesGR }

// HandlesUpdate: a change of type adds or frees node ports and load
// balancers.
func (serviceEvaluator) HandlesUpdate() bool { return true }
func (serviceEvaluator) MatchingResources(names []corev1.ResourceName) []corev1.ResourceName {
	return intersect(names, serviceResources)
}
func (serviceEvaluator) Usage(obj runtime.Object) (corev1.ResourceList, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("expected a service, got %T", obj)
	}
	out := corev1.ResourceList{
		ObjectCountName(servicesGR):          one(),
		corev1.ResourceServices:              one(),
		corev1.ResourceServicesLoadBalancers: resource.Quantity{Format: resource.DecimalSI},
		corev1.ResourceServicesNodePorts:     resource.Quantity{Format: resource.DecimalSI},
	}
	ports := int64(len(svc.Spec.Ports))
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		if svc.Spec.AllocateLoadBalancerNodePorts != nil && !*svc.Spec.AllocateLoadBalancerNodePorts {
			ports = 0
		}
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
		out[corev1.ResourceServicesLoadBalancers] = one()
	}
	return out, nil
}

const (
	storageClassSuffix = ".storageclass.storage.k8s.io/"
)

type claimEvaluator struct{ countEvaluator }

func (claimEvaluator) GroupResource() schema.GroupResource { return claimsGR }

// HandlesUpdate: a claim may grow.
func (claimEvaluator) HandlesUpdate() bool { return true }
func (claimEvaluator) MatchingResources(names []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, n := range names {
		s := string(n)
		switch {
		case n == ObjectCountName(claimsGR), n == corev1.ResourcePersistentVolumeClaims, n == corev1.ResourceRequestsStorage:
			out = append(out, n)
		case strings.Contains(s, storageClassSuffix) &&
			(strings.HasSuffix(s, "/"+string(corev1.ResourcePersistentVolumeClaims)) || strings.HasSuffix(s, "/"+string(corev1.ResourceRequestsStorage))):
			out = append(out, n)
		}
	}
	return out
}
func (claimEvaluator) Usage(obj runtime.Object) (corev1.ResourceList, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil, fmt.Errorf("expected a persistentvolumeclaim, got %T", obj)
	}
	out := corev1.ResourceList{ObjectCountName(claimsGR): one(), corev1.ResourcePersistentVolumeClaims: one()}
	class := ""
	if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	if class != "" {
		out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = one()
	}
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		// A claim being expanded is charged for the larger of what it
		// asks for and what it was given.
		if alloc, ok := pvc.Status.AllocatedResources[corev1.ResourceStorage]; ok && alloc.Cmp(q) > 0 {
			q = alloc
		}
		out[corev1.ResourceRequestsStorage] = q.DeepCopy()
		if class != "" {
			out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourceRequestsStorage))] = q.DeepCopy()
		}
	}
	return out, nil
}
