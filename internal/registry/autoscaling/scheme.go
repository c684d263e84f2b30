package autoscaling

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// The API server's field managers convert an object to the version each
// of its managedFields entries was written in, through client-go's
// scheme, which knows no conversion between the HPA versions (upstream's
// goes through the internal type). Without one, a write through one
// version to an object last written through the other could not update
// its managed fields.
func init() {
	if err := AddConversions(scheme.Scheme); err != nil {
		panic(err)
	}
}

// AddConversions registers the conversions between autoscaling/v1 and
// autoscaling/v2 HPAs with s.
func AddConversions(s *runtime.Scheme) error {
	if err := s.AddConversionFunc((*autoscalingv1.HorizontalPodAutoscaler)(nil), (*autoscalingv2.HorizontalPodAutoscaler)(nil),
		func(a, b any, _ conversion.Scope) error {
			*b.(*autoscalingv2.HorizontalPodAutoscaler) = *toV2(a.(*autoscalingv1.HorizontalPodAutoscaler))
			return nil
		}); err != nil {
		return err
	}
	return s.AddConversionFunc((*autoscalingv2.HorizontalPodAutoscaler)(nil), (*autoscalingv1.HorizontalPodAutoscaler)(nil),
		func(a, b any, _ conversion.Scope) error {
			*b.(*autoscalingv1.HorizontalPodAutoscaler) = *toV1(a.(*autoscalingv2.HorizontalPodAutoscaler))
			return nil
		})
}
