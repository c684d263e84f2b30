package autoscaling

import (
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry"
)

// HorizontalPodAutoscalersV1 serves the stored autoscaling/v2 HPAs as
// autoscaling/v1 objects. Upstream validates both versions' objects in
// its internal form, which is v2's, so validation here converts first
// and errors name v2's fields.
var HorizontalPodAutoscalersV1 = &registry.Resource{
	Group: "autoscaling", Version: "v1", Name: "horizontalpodautoscalers", Singular: "horizontalpodautoscaler",
	Kind:             "HorizontalPodAutoscaler",
	Namespaced:       true,
	ShortNames:       []string{"hpa"},
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	New:              func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} },
	NewList:          func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscalerList{} },
	Default:          registry.Typed(defaultHPAV1),
	// What v1 keeps in annotations follows the rules of the field it
	// stands for: status annotations are not written with the spec, spec
	// annotations not through /status.
	PrepareForCreate: registry.Typed(func(hpa *autoscalingv1.HorizontalPodAutoscaler) {
		keepAnnotations(hpa, nil, metricStatusAnnotation, conditionsAnnotation)
	}),
	PrepareForUpdate: registry.Typed2(func(hpa, old *autoscalingv1.HorizontalPodAutoscaler) {
		keepAnnotations(hpa, old, metricStatusAnnotation, conditionsAnnotation)
	}),
	PrepareForStatusUpdate: registry.Typed2(func(hpa, old *autoscalingv1.HorizontalPodAutoscaler) {
		keepAnnotations(hpa, old, metricSpecsAnnotation, behaviorSpecsAnnotation)
	}),
	Validate: registry.TypedValidate(func(hpa *autoscalingv1.HorizontalPodAutoscaler) field.ErrorList {
		return validateHPA(storedV2(hpa))
	}),
	ValidateUpdate: registry.TypedValidateUpdate(func(hpa, old *autoscalingv1.HorizontalPodAutoscaler) field.ErrorList {
		return validateHPAUpdate(storedV2(hpa), storedV2(old))
	}),
	ValidateStatusUpdate: registry.TypedValidateUpdate(func(hpa, old *autoscalingv1.HorizontalPodAutoscaler) field.ErrorList {
		return validateHPAStatusUpdate(storedV2(hpa), storedV2(old))
	}),
	Table: &registry.Table{
		Columns: hpaTable.Columns,
		Row: registry.TypedRow(func(hpa *autoscalingv1.HorizontalPodAutoscaler, now time.Time) []any {
			return hpaRow(toV2(hpa), now)
		}),
	},
	StoredAs: &registry.StoredAs{
		Resource:   HorizontalPodAutoscalers,
		ToStored:   func(obj runtime.Object) runtime.Object { return storedV2(obj.(*autoscalingv1.HorizontalPodAutoscaler)) },
		FromStored: func(obj runtime.Object) runtime.Object { return toV1(obj.(*autoscalingv2.HorizontalPodAutoscaler)) },
	},
}

// keepAnnotations sets hpa's annotations keys to old's (drops them when
// old is nil or lacks them).
func keepAnnotations(hpa, old *autoscalingv1.HorizontalPodAutoscaler, keys ...string) {
	for _, k := range keys {
		v, ok := "", false
		if old != nil {
			v, ok = old.Annotations[k]
		}
		switch {
		case ok:
			if hpa.Annotations == nil {
				hpa.Annotations = map[string]string{}
			}
			hpa.Annotations[k] = v
		default:
			delete(hpa.Annotations, k)
		}
	}
}

// defaultHPAV1 is upstream's v1 default; the cpu target is defaulted by
// the conversion, which sees the metrics kept in annotations.
func defaultHPAV1(hpa *autoscalingv1.HorizontalPodAutoscaler) {
	if hpa.Spec.MinReplicas == nil {
		hpa.Spec.MinReplicas = ptr.To[int32](1)
	}
}

// storedV2 is a v1 object as it is stored: converted, then given v2's
// defaults (a behavior from the annotation gets its missing rules).
func storedV2(hpa *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := toV2(hpa)
	DefaultHPA(out)
	return out
}
