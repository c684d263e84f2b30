package endpoints

import (
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OverCapacityTruncated is the value of endpoints.kubernetes.io/over-capacity
// on a truncated Endpoints object.
const OverCapacityTruncated = "truncated"

// Desired returns the Endpoints object svc should have given its computed
// subsets and the current object (nil when there is none), or nil when
// current is already right. A new trigger time alone does not warrant a
// write.
func Desired(svc *v1.Service, subsets []v1.EndpointSubset, current *v1.Endpoints, trigger time.Time) *v1.Endpoints {
	subsets = cloneSubsets(subsets)
	truncated := Truncate(subsets)
	labels := maps.Clone(svc.Labels)
	// The headless label is the controller's to set, whatever the
	// service's own labels say.
	delete(labels, v1.IsHeadlessService)
	if IsHeadless(svc) {
		if labels == nil {
			labels = map[string]string{}
		}
		labels[v1.IsHeadlessService] = ""
	}
	if current != nil {
		_, annotated := current.Annotations[v1.EndpointsOverCapacity]
		if equality.Semantic.DeepEqual(current.Subsets, subsets) &&
			equality.Semantic.DeepEqual(current.Labels, labels) && annotated == truncated {
			return nil
		}
	}
	next := &v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace}}
	if current != nil {
		next = current.DeepCopy()
	}
	next.Subsets = subsets
	next.Labels = labels
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	if !trigger.IsZero() {
		next.Annotations[v1.EndpointsLastChangeTriggerTime] = trigger.UTC().Format(time.RFC3339Nano)
	} else {
		delete(next.Annotations, v1.EndpointsLastChangeTriggerTime)
	}
	if truncated {
		next.Annotations[v1.EndpointsOverCapacity] = OverCapacityTruncated
	} else {
		delete(next.Annotations, v1.EndpointsOverCapacity)
	}
	return next
}

func cloneSubsets(in []v1.EndpointSubset) []v1.EndpointSubset {
	out := make([]v1.EndpointSubset, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}
