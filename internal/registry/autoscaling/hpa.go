package autoscaling

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/core"
)

// HorizontalPodAutoscalers is the autoscaling/v2 resource, the form
// HPAs are stored in.
var HorizontalPodAutoscalers = &registry.Resource{
	Group: "autoscaling", Version: "v2", Name: "horizontalpodautoscalers", Singular: "horizontalpodautoscaler",
	Kind:                 "HorizontalPodAutoscaler",
	Namespaced:           true,
	ShortNames:           []string{"hpa"},
	Categories:           []string{"all"},
	Status:               true,
	TracksGeneration:     true,
	New:                  func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
	NewList:              func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
	Default:              registry.Typed(DefaultHPA),
	Validate:             registry.TypedValidate(validateHPA),
	ValidateUpdate:       registry.TypedValidateUpdate(validateHPAUpdate),
	ValidateStatusUpdate: registry.TypedValidateUpdate(validateHPAStatusUpdate),
	Table:                hpaTable,
}

// DefaultCPUUtilization is the target of the cpu metric an HPA without
// metrics gets.
const DefaultCPUUtilization = 80

// Upper bounds of a scaling rule, from upstream.
const (
	maxPeriodSeconds              = 1800
	maxStabilizationWindowSeconds = 3600
)

// DefaultHPA applies upstream's autoscaling/v2 defaults.
func DefaultHPA(obj *autoscalingv2.HorizontalPodAutoscaler) {
	if obj.Spec.MinReplicas == nil {
		obj.Spec.MinReplicas = ptr.To[int32](1)
	}
	if len(obj.Spec.Metrics) == 0 {
		obj.Spec.Metrics = []autoscalingv2.MetricSpec{defaultCPUMetric()}
	}
	if b := obj.Spec.Behavior; b != nil {
		b.ScaleUp = withDefaults(b.ScaleUp, DefaultScaleUpRules())
		b.ScaleDown = withDefaults(b.ScaleDown, DefaultScaleDownRules())
	}
}

func defaultCPUMetric() autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{
				Type:               autoscalingv2.UtilizationMetricType,
				AverageUtilization: ptr.To[int32](DefaultCPUUtilization),
			},
		},
	}
}

// DefaultScaleUpRules are the scale-up rules of an HPA that sets none: no
// stabilization, and at most double or four more pods each 15 s,
// whichever is more. The controller uses them for an HPA without
// behavior too.
func DefaultScaleUpRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To[int32](0),
		SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// DefaultScaleDownRules are the scale-down rules of an HPA that sets
// none: any number of pods each 15 s. The stabilization window stays
// unset, as upstream leaves it to the controller's
// --horizontal-pod-autoscaler-downscale-stabilization (5 minutes).
func DefaultScaleDownRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// withDefaults fills what from leaves unset with def's values.
func withDefaults(from, def *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if from == nil {
		return def
	}
	if from.SelectPolicy != nil {
		def.SelectPolicy = from.SelectPolicy
	}
	if from.StabilizationWindowSeconds != nil {
		def.StabilizationWindowSeconds = from.StabilizationWindowSeconds
	}
	if from.Policies != nil {
		def.Policies = from.Policies
	}
	if from.Tolerance != nil {
		def.Tolerance = from.Tolerance
	}
	return def
}

// refOptions loosen the apiVersion checks of a reference, as upstream's
// strategy does for references already stored.
type refOptions struct {
	allowEmptyGroup   bool
	allowInvalidGroup bool
}

type specOptions struct {
	minReplicasLowerBound int32
	scaleTargetRef        refOptions
	objectMetrics         refOptions
}

// optionsFor are upstream's validation options: HPAScaleToZero is on by
// default, so minReplicas may be 0; a ReplicationController, in the core
// group, may be named without an API group; and what an update leaves as
// it was is not judged again.
func optionsFor(hpa, old *autoscalingv2.HorizontalPodAutoscaler) specOptions {
	opts := specOptions{objectMetrics: refOptions{allowEmptyGroup: true}}
	switch {
	case old != nil && old.Spec.ScaleTargetRef.APIVersion == hpa.Spec.ScaleTargetRef.APIVersion && old.Spec.ScaleTargetRef.Kind == hpa.Spec.ScaleTargetRef.Kind:
		opts.scaleTargetRef.allowInvalidGroup = true
	case hpa.Spec.ScaleTargetRef.Kind == "ReplicationController":
		opts.scaleTargetRef.allowEmptyGroup = true
	}
	if old != nil {
		for _, m := range old.Spec.Metrics {
			if m.Type == autoscalingv2.ObjectMetricSourceType && m.Object != nil && checkAPIVersion(m.Object.DescribedObject.APIVersion, opts.objectMetrics) != nil {
				opts.objectMetrics.allowInvalidGroup = true
				break
			}
		}
	}
	return opts
}

func validateHPA(hpa *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	return validateSpec(&hpa.Spec, field.NewPath("spec"), optionsFor(hpa, nil))
}

func validateHPAUpdate(hpa, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	return validateSpec(&hpa.Spec, field.NewPath("spec"), optionsFor(hpa, old))
}

// A status write is judged by its counts alone: the spec is the stored one.
func validateHPAStatusUpdate(hpa, _ *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	var errs field.ErrorList
	for i, c := range hpa.Status.Conditions {
		if c.ObservedGeneration != nil {
			errs = append(errs, nonNegative(*c.ObservedGeneration, field.NewPath("status", "conditions").Index(i).Child("observedGeneration"))...)
		}
	}
	errs = append(errs, nonNegative(int64(hpa.Status.CurrentReplicas), field.NewPath("status", "currentReplicas"))...)
	errs = append(errs, nonNegative(int64(hpa.Status.DesiredReplicas), field.NewPath("status", "desiredReplicas"))...)
	return errs
}

func nonNegative(v int64, p *field.Path) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(p, v, "must be greater than or equal to 0")}
	}
	return nil
}

func validateSpec(spec *autoscalingv2.HorizontalPodAutoscalerSpec, p *field.Path, opts specOptions) field.ErrorList {
	var errs field.ErrorList
	if spec.MinReplicas != nil && *spec.MinReplicas < opts.minReplicasLowerBound {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), *spec.MinReplicas, fmt.Sprintf("must be greater than or equal to %d", opts.minReplicasLowerBound)))
	}
	if spec.MaxReplicas == 0 {
		errs = append(errs, field.Required(p.Child("maxReplicas"), "must be set and greater than 0"))
	} else if spec.MaxReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to 1"))
	}
	if spec.MinReplicas != nil && spec.MaxReplicas < *spec.MinReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	errs = append(errs, validateReference(spec.ScaleTargetRef, p.Child("scaleTargetRef"), opts.scaleTargetRef)...)
	errs = append(errs, validateMetrics(spec.Metrics, p.Child("metrics"), spec.MinReplicas, opts.objectMetrics)...)
	if spec.Behavior != nil {
		errs = append(errs, validateRules(spec.Behavior.ScaleUp, p.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateRules(spec.Behavior.ScaleDown, p.Child("behavior", "scaleDown"))...)
	}
	return errs
}

func validateReference(ref autoscalingv2.CrossVersionObjectReference, p *field.Path, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, requiredSegment(ref.Kind, p.Child("kind"))...)
	errs = append(errs, requiredSegment(ref.Name, p.Child("name"))...)
	if err := checkAPIVersion(ref.APIVersion, opts); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	return errs
}

// requiredSegment checks a name that becomes part of a request path.
func requiredSegment(v string, p *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsPathSegmentName(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func checkAPIVersion(apiVersion string, opts refOptions) error {
	if opts.allowInvalidGroup {
		return nil
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return err
	}
	if !opts.allowEmptyGroup && gv.Group == "" {
		return fmt.Errorf("apiVersion must specify API group")
	}
	return nil
}

var (
	selectPolicies = []string{string(autoscalingv2.DisabledPolicySelect), string(autoscalingv2.MaxChangePolicySelect), string(autoscalingv2.MinChangePolicySelect)}
	policyTypes    = []string{string(autoscalingv2.PercentScalingPolicy), string(autoscalingv2.PodsScalingPolicy)}
	metricTypes    = []string{
		string(autoscalingv2.ContainerResourceMetricSourceType), string(autoscalingv2.ExternalMetricSourceType),
		string(autoscalingv2.ObjectMetricSourceType), string(autoscalingv2.PodsMetricSourceType),
		string(autoscalingv2.ResourceMetricSourceType),
	}
)

func validateRules(rules *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if rules == nil {
		return nil
	}
	var errs field.ErrorList
	if w := rules.StabilizationWindowSeconds; w != nil && *w < 0 {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, "must be greater than or equal to zero"))
	}
	if w := rules.StabilizationWindowSeconds; w != nil && *w > maxStabilizationWindowSeconds {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, fmt.Sprintf("must be less than or equal to %v", maxStabilizationWindowSeconds)))
	}
	if s := rules.SelectPolicy; s != nil && !contains(selectPolicies, string(*s)) {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), *s, selectPolicies))
	}
	pp := p.Child("policies")
	if len(rules.Policies) == 0 {
		errs = append(errs, field.Required(pp, "must specify at least one Policy"))
	}
	for i, pol := range rules.Policies {
		ip := pp.Index(i)
		if !contains(policyTypes, string(pol.Type)) {
			errs = append(errs, field.NotSupported(ip.Child("type"), pol.Type, policyTypes))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(ip.Child("value"), pol.Value, "must be greater than zero"))
		}
		if pol.PeriodSeconds <= 0 {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), pol.PeriodSeconds, "must be greater than zero"))
		}
		if pol.PeriodSeconds > maxPeriodSeconds {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), pol.PeriodSeconds, fmt.Sprintf("must be less than or equal to %v", maxPeriodSeconds)))
		}
	}
	if rules.Tolerance != nil {
		errs = append(errs, core.ValidateNonnegativeQuantity(*rules.Tolerance, p.Child("tolerance"))...)
	}
	return errs
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}
