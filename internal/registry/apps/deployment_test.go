package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"
)

func TestDefaultDeployment(t *testing.T) {
	tests := []struct {
		name string
		in   appsv1.DeploymentSpec
		want func(*appsv1.DeploymentSpec)
	}{{
		name: "empty spec",
		in:   appsv1.DeploymentSpec{},
		want: func(s *appsv1.DeploymentSpec) {
			s.Replicas = utilptr.To[int32](1)
			s.Strategy = appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: utilptr.To(intstr.FromString("25%")),
					MaxSurge:       utilptr.To(intstr.FromString("25%")),
				},
			}
			s.RevisionHistoryLimit = utilptr.To[int32](10)
			s.ProgressDeadlineSeconds = utilptr.To[int32](600)
		},
	}, {
		name: "recreate gets no rolling update",
		in:   appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}},
		want: func(s *appsv1.DeploymentSpec) {
			s.Replicas = utilptr.To[int32](1)
			s.RevisionHistoryLimit = utilptr.To[int32](10)
			s.ProgressDeadlineSeconds = utilptr.To[int32](600)
		},
	}, {
		name: "explicit values kept, missing half of rolling update filled",
		in: appsv1.DeploymentSpec{
			Replicas:                utilptr.To[int32](0),
			Strategy:                appsv1.DeploymentStrategy{RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: utilptr.To(intstr.FromInt32(3))}},
			RevisionHistoryLimit:    utilptr.To[int32](0),
			ProgressDeadlineSeconds: utilptr.To[int32](30),
		},
		want: func(s *appsv1.DeploymentSpec) {
			s.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
			s.Strategy.RollingUpdate.MaxUnavailable = utilptr.To(intstr.FromString("25%"))
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &appsv1.Deployment{Spec: *tc.in.DeepCopy()}
			defaultDeployment(obj)
			want := tc.in.DeepCopy()
			tc.want(want)
			// The pod template's own defaults belong to the core package.
			want.Template = obj.Spec.Template
			if !apiequality.Semantic.DeepEqual(obj.Spec, *want) {
				t.Errorf("got %+v\nwant %+v", obj.Spec, *want)
			}
		})
	}
}

func validDeployment() *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: podTemplate(map[string]string{"app": "web"}),
		},
	}
	defaultDeployment(d)
	return d
}

func TestValidateDeployment(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1.Deployment)
		want   []wantErr
	}{{
		name:   "valid",
		mutate: func(*appsv1.Deployment) {},
	}, {
		name:   "missing selector",
		mutate: func(d *appsv1.Deployment) { d.Spec.Selector = nil },
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.selector", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.template.metadata.labels", Detail: "`selector` does not match template `labels`"},
		},
	}, {
		name:   "empty selector",
		mutate: func(d *appsv1.Deployment) { d.Spec.Selector = &metav1.LabelSelector{} },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.selector", Detail: "empty selector is invalid for deployment"}},
	}, {
		name: "selector does not match template",
		mutate: func(d *appsv1.Deployment) {
			d.Spec.Selector.MatchLabels = map[string]string{"app": "other"}
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.template.metadata.labels", Detail: "`selector` does not match template `labels`"}},
	}, {
		name: "unparseable selector skips the template",
		mutate: func(d *appsv1.Deployment) {
			d.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}
			d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.selector.matchExpressions[0].operator", Detail: "not a valid selector operator"},
			{Type: field.ErrorTypeInvalid, Field: "spec.selector", Detail: "invalid label selector"},
		},
	}, {
		name:   "negative replicas",
		mutate: func(d *appsv1.Deployment) { d.Spec.Replicas = utilptr.To[int32](-1) },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.replicas", Detail: "must be greater than or equal to 0"}},
	}, {
		name:   "restart policy must be Always",
		mutate: func(d *appsv1.Deployment) { d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
		want:   []wantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.template.spec.restartPolicy", Detail: ""}},
	}, {
		name:   "no active deadline",
		mutate: func(d *appsv1.Deployment) { d.Spec.Template.Spec.ActiveDeadlineSeconds = utilptr.To[int64](10) },
		want:   []wantErr{{Type: field.ErrorTypeForbidden, Field: "spec.template.spec.activeDeadlineSeconds", Detail: "activeDeadlineSeconds in ReplicaSet is not Supported"}},
	}, {
		name: "surge and unavailable both zero",
		mutate: func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxSurge = utilptr.To(intstr.FromInt32(0))
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = utilptr.To(intstr.FromString("0%"))
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.strategy.rollingUpdate.maxUnavailable", Detail: "may not be 0 when `maxSurge` is 0"}},
	}, {
		name: "unavailable over 100%",
		mutate: func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = utilptr.To(intstr.FromString("110%"))
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.strategy.rollingUpdate.maxUnavailable", Detail: "must not be greater than 100%"}},
	}, {
		name: "surge over 100% is allowed",
		mutate: func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxSurge = utilptr.To(intstr.FromString("200%"))
		},
	}, {
		name: "malformed percentage",
		mutate: func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxSurge = utilptr.To(intstr.FromString("lots"))
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.strategy.rollingUpdate.maxSurge", Detail: ""}},
	}, {
		name: "negative unavailable",
		mutate: func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = utilptr.To(intstr.FromInt32(-1))
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.strategy.rollingUpdate.maxUnavailable", Detail: "must be greater than or equal to 0"}},
	}, {
		name:   "recreate with rolling update",
		mutate: func(d *appsv1.Deployment) { d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType },
		want:   []wantErr{{Type: field.ErrorTypeForbidden, Field: "spec.strategy.rollingUpdate", Detail: "may not be specified when strategy `type` is 'Recreate'"}},
	}, {
		name:   "rolling update without parameters",
		mutate: func(d *appsv1.Deployment) { d.Spec.Strategy.RollingUpdate = nil },
		want:   []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.strategy.rollingUpdate", Detail: ""}},
	}, {
		name:   "unknown strategy",
		mutate: func(d *appsv1.Deployment) { d.Spec.Strategy.Type = "BlueGreen" },
		want:   []wantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.strategy", Detail: ""}},
	}, {
		name:   "negative minReadySeconds",
		mutate: func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = -1 },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.minReadySeconds", Detail: ""}},
	}, {
		name:   "negative revision history",
		mutate: func(d *appsv1.Deployment) { d.Spec.RevisionHistoryLimit = utilptr.To[int32](-1) },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.revisionHistoryLimit", Detail: ""}},
	}, {
		name:   "deadline not beyond minReadySeconds",
		mutate: func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = 600 },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.progressDeadlineSeconds", Detail: "must be greater than minReadySeconds"}},
	}, {
		name:   "negative deadline",
		mutate: func(d *appsv1.Deployment) { d.Spec.ProgressDeadlineSeconds = utilptr.To[int32](-1) },
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.progressDeadlineSeconds", Detail: "must be greater than or equal to 0"},
			{Type: field.ErrorTypeInvalid, Field: "spec.progressDeadlineSeconds", Detail: "must be greater than minReadySeconds"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := validDeployment()
			tc.mutate(d)
			checkErrs(t, validateDeployment(d), tc.want)
		})
	}
}

func TestValidateDeploymentUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1.Deployment)
		want   []wantErr
	}{{
		name: "scale and new image",
		mutate: func(d *appsv1.Deployment) {
			d.Spec.Replicas = utilptr.To[int32](5)
			d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		},
	}, {
		name: "selector is immutable",
		mutate: func(d *appsv1.Deployment) {
			d.Spec.Selector.MatchLabels["tier"] = "front"
			d.Spec.Template.Labels["tier"] = "front"
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.selector", Detail: "field is immutable"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validDeployment()
			d := old.DeepCopy()
			tc.mutate(d)
			checkErrs(t, validateDeploymentUpdate(d, old), tc.want)
		})
	}
}
