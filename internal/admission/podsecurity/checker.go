package podsecurity

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	admissionapi "k8s.io/pod-security-admission/admission/api"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/orca-project/orca/internal/admission"
)

// Decision is what the plugin makes of one request: the refusal, if any,
// and what the client and the audit log are told either way.
type Decision struct {
	// Err refuses the request: 403 for a policy violation, 422 for
	// invalid namespace labels, 500 for a namespace that cannot be read.
	Err error
	// Warnings go to the client as Warning headers.
	Warnings []string
	// Audit holds audit annotations by upstream's short keys
	// (enforce-policy, audit-violations, exempt, error); the plugin adds
	// the pod-security.kubernetes.io/ prefix.
	Audit map[string]string
}

// Checker decides PodSecurity from the request and its namespace alone:
// the plugin's pure core, which reads nothing.
type Checker struct {
	defaults   api.Policy
	exemptions admissionapi.PodSecurityExemptions
	evaluator  policy.Evaluator
}

// NewChecker builds a Checker for cfg (DefaultConfig when nil) over
// upstream's checks at their latest version.
func NewChecker(cfg *Config) (*Checker, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	defaults, err := admissionapi.ToPolicy(cfg.Defaults)
	if err != nil {
		return nil, fmt.Errorf("%s configuration error: %w", PluginName, err)
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s checks: %w", PluginName, err)
	}
	return &Checker{defaults: defaults, exemptions: cfg.Exemptions, evaluator: evaluator}, nil
}

// Policy is the namespace's policy: its labels over the configured
// defaults. Invalid labels are reported and fail closed for enforce
// (restricted:latest) and open for audit and warn, as upstream.
func (c *Checker) Policy(labels map[string]string) (api.Policy, field.ErrorList) {
	return api.PolicyToEvaluate(labels, c.defaults)
}

// ignoredPodSubresources cannot change what a pod runs. Any other pod
// subresource carries a pod and is checked, so that one added later
// fails safe.
var ignoredPodSubresources = map[string]bool{
	"exec": true, "attach": true, "binding": true, "eviction": true,
	"log": true, "portforward": true, "proxy": true, "status": true,
}

// Pod decides a pod's create or update in namespace ns.
func (c *Checker) Pod(a *admission.Attributes, ns *corev1.Namespace) Decision {
	if d, done := c.skip(a); done {
		return d
	}
	nsPolicy, nsErrs := c.Policy(ns.Labels)
	if len(nsErrs) == 0 && nsPolicy.FullyPrivileged() {
		return Decision{Audit: map[string]string{
			api.EnforcedPolicyAnnotationKey: api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()}.String(),
		}}
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return Decision{Err: apierrors.NewBadRequest("failed to decode pod")}
	}
	if a.Operation == admission.Update {
		old, ok := a.OldObject.(*corev1.Pod)
		if !ok {
			return Decision{Err: apierrors.NewBadRequest("failed to decode old pod")}
		}
		if !significantPodUpdate(pod, old) {
			return Decision{}
		}
	}
	return c.evaluate(a, nsPolicy, nsErrs.ToAggregate(), &pod.ObjectMeta, &pod.Spec, true)
}

// PodController decides a write of an object with a pod template
// (Deployment, Job, PodTemplate...) in namespace ns: warnings and audit
// annotations only, never a refusal, since the pods it makes are checked
// themselves.
func (c *Checker) PodController(a *admission.Attributes, ns *corev1.Namespace) Decision {
	if d, done := c.skip(a); done {
		return d
	}
	nsPolicy, nsErrs := c.Policy(ns.Labels)
	if len(nsErrs) == 0 && nsPolicy.Warn.Level == api.LevelPrivileged && nsPolicy.Audit.Level == api.LevelPrivileged {
		return Decision{}
	}
	meta, spec, err := podTemplate(a.Object)
	if err != nil {
		return Decision{Audit: map[string]string{"error": fmt.Sprintf("failed to extract pod template: %v", err)}}
	}
	if meta == nil && spec == nil {
		return Decision{}
	}
	return c.evaluate(a, nsPolicy, nsErrs.ToAggregate(), meta, spec, false)
}

// evaluate checks a pod (or template) against the namespace's three
// modes, reusing a result when two modes name the same level and
// version, and assembles upstream's messages from the failed checks.
func (c *Checker) evaluate(a *admission.Attributes, nsPolicy api.Policy, nsErr error, meta *metav1.ObjectMeta, spec *corev1.PodSpec, enforce bool) Decision {
	if c.exemptRuntimeClass(spec.RuntimeClassName) {
		return exemptDecision("runtimeClass")
	}
	d := Decision{Audit: map[string]string{}}
	if nsErr != nil {
		d.Audit["error"] = fmt.Sprintf("Failed to parse policy: %v", nsErr)
	}
	results := map[api.LevelVersion]policy.AggregateCheckResult{}
	check := func(lv api.LevelVersion) policy.AggregateCheckResult {
		r, ok := results[lv]
		if !ok {
			r = policy.AggregateCheckResults(c.evaluator.EvaluatePod(lv, meta, spec))
			results[lv] = r
		}
		return r
	}
	if enforce {
		d.Audit[api.EnforcedPolicyAnnotationKey] = nsPolicy.Enforce.String()
		if r := check(nsPolicy.Enforce); !r.Allowed {
			d.Err = admission.NewForbidden(a, fmt.Errorf("violates PodSecurity %q: %s", nsPolicy.Enforce.String(), r.ForbiddenDetail()))
		}
	}
	if r := check(nsPolicy.Audit); !r.Allowed {
		d.Audit[api.AuditViolationsAnnotationKey] = fmt.Sprintf("would violate PodSecurity %q: %s", nsPolicy.Audit.String(), r.ForbiddenDetail())
	}
	// A refused request gets its reason, not warnings as well.
	if d.Err == nil {
		if r := check(nsPolicy.Warn); !r.Allowed {
			d.Warnings = append(d.Warnings, fmt.Sprintf("would violate PodSecurity %q: %s", nsPolicy.Warn.String(), r.ForbiddenDetail()))
		}
	}
	return d
}

// skip decides what needs no namespace: subresources that cannot change
// a pod (for workloads, every subresource) pass, and so do exempt
// namespaces and users.
func (c *Checker) skip(a *admission.Attributes) (Decision, bool) {
	if a.Resource.GroupResource() == podsGVR.GroupResource() {
		if ignoredPodSubresources[a.Subresource] {
			return Decision{}, true
		}
	} else if a.Subresource != "" {
		return Decision{}, true
	}
	if exempt := c.exemptRequest(a); exempt != "" {
		return exemptDecision(exempt), true
	}
	return Decision{}, false
}

// exemptRequest names why a request is exempt by configuration ("" when
// it is not): its namespace, then its user.
func (c *Checker) exemptRequest(a *admission.Attributes) string {
	switch {
	case a.Namespace != "" && slices.Contains(c.exemptions.Namespaces, a.Namespace):
		return "namespace"
	case a.UserName != "" && slices.Contains(c.exemptions.Usernames, a.UserName):
		return "user"
	}
	return ""
}

func (c *Checker) exemptRuntimeClass(name *string) bool {
	return name != nil && *name != "" && slices.Contains(c.exemptions.RuntimeClasses, *name)
}

func exemptDecision(reason string) Decision {
	return Decision{Audit: map[string]string{api.ExemptionReasonAnnotationKey: reason}}
}

// significantPodUpdate reports whether an update changes what the policy
// looks at. Once created, a pod's spec may change only in container
// images and ephemeral containers, so only those are compared, as
// upstream does.
func significantPodUpdate(pod, old *corev1.Pod) bool {
	if len(pod.Spec.Containers) != len(old.Spec.Containers) || len(pod.Spec.InitContainers) != len(old.Spec.InitContainers) {
		return true
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Image != old.Spec.Containers[i].Image {
			return true
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Image != old.Spec.InitContainers[i].Image {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		i := slices.IndexFunc(old.Spec.EphemeralContainers, func(o corev1.EphemeralContainer) bool { return o.Name == c.Name })
		if i < 0 || old.Spec.EphemeralContainers[i].Image != c.Image {
			return true
		}
	}
	return false
}

// podTemplate finds the pod a workload object would make; nil for one
// that has none (a ReplicationController without a template).
func podTemplate(obj runtime.Object) (*metav1.ObjectMeta, *corev1.PodSpec, error) {
	var t *corev1.PodTemplateSpec
	switch o := obj.(type) {
	case *corev1.PodTemplate:
		t = &o.Template
	case *corev1.ReplicationController:
		t = o.Spec.Template
	case *appsv1.ReplicaSet:
		t = &o.Spec.Template
	case *appsv1.Deployment:
		t = &o.Spec.Template
	case *appsv1.DaemonSet:
		t = &o.Spec.Template
	case *appsv1.StatefulSet:
		t = &o.Spec.Template
	case *batchv1.Job:
		t = &o.Spec.Template
	case *batchv1.CronJob:
		t = &o.Spec.JobTemplate.Spec.Template
	default:
		return nil, nil, fmt.Errorf("unexpected object type: %T", obj)
	}
	if t == nil {
		return nil, nil, nil
	}
	return &t.ObjectMeta, &t.Spec, nil
}
