package apiregistration

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// LocalAvailable is the Available condition of a group version the server
// serves itself.
func LocalAvailable() apiregistrationv1.APIServiceCondition {
	return apiregistrationv1.APIServiceCondition{
		Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue,
		Reason: "Local", Message: "Local APIServices are always available",
	}
}

// SetCondition sets a condition, keeping its transition time when its
// status does not change, as upstream's helper does.
func SetCondition(svc *apiregistrationv1.APIService, c apiregistrationv1.APIServiceCondition) {
	for i := range svc.Status.Conditions {
		old := &svc.Status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status && !old.LastTransitionTime.IsZero() {
			c.LastTransitionTime = old.LastTransitionTime
		} else if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = metav1.Now()
		}
		*old = c
		return
	}
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = metav1.Now()
	}
	svc.Status.Conditions = append(svc.Status.Conditions, c)
}

// IsAvailable reports whether the APIService's Available condition is True.
func IsAvailable(svc *apiregistrationv1.APIService) bool {
	for _, c := range svc.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status == apiregistrationv1.ConditionTrue
		}
	}
	return false
}
