package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"
)

func TestDefaultReplicaSet(t *testing.T) {
	tests := []struct {
		name string
		in   *int32
		want int32
	}{
		{"unset replicas", nil, 1},
		{"zero kept", utilptr.To[int32](0), 0},
		{"explicit kept", utilptr.To[int32](4), 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: tc.in}}
			defaultReplicaSet(rs)
			if rs.Spec.Replicas == nil || *rs.Spec.Replicas != tc.want {
				t.Errorf("replicas = %v, want %d", rs.Spec.Replicas, tc.want)
			}
		})
	}
}

func validReplicaSet() *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: podTemplate(map[string]string{"app": "web", "pod-template-hash": "abc"}),
		},
	}
	defaultReplicaSet(rs)
	return rs
}

func TestValidateReplicaSet(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1.ReplicaSet)
		want   []wantErr
	}{{
		name:   "valid",
		mutate: func(*appsv1.ReplicaSet) {},
	}, {
		name:   "negative replicas and minReadySeconds",
		mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = utilptr.To[int32](-2); rs.Spec.MinReadySeconds = -1 },
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.replicas", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.minReadySeconds", Detail: ""},
		},
	}, {
		name:   "missing selector",
		mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Selector = nil },
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.selector", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.template.metadata.labels", Detail: ""},
		},
	}, {
		name:   "empty selector keeps upstream's wording",
		mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Selector = &metav1.LabelSelector{} },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.selector", Detail: "empty selector is invalid for deployment"}},
	}, {
		name: "selector expression not satisfied",
		mutate: func(rs *appsv1.ReplicaSet) {
			rs.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.template.metadata.labels", Detail: "`selector` does not match template `labels`"}},
	}, {
		name:   "restart policy",
		mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.RestartPolicy = "Never" },
		want:   []wantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.template.spec.restartPolicy", Detail: ""}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := validReplicaSet()
			tc.mutate(rs)
			checkErrs(t, validateReplicaSet(rs), tc.want)
		})
	}
}

func TestValidateReplicaSetUpdate(t *testing.T) {
	old := validReplicaSet()
	scaled := old.DeepCopy()
	scaled.Spec.Replicas = utilptr.To[int32](10)
	checkErrs(t, validateReplicaSetUpdate(scaled, old), nil)

	moved := old.DeepCopy()
	moved.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"pod-template-hash": "abc"}}
	checkErrs(t, validateReplicaSetUpdate(moved, old), []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.selector", Detail: "field is immutable"}})
}
