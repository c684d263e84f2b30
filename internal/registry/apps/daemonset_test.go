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

func TestDefaultDaemonSet(t *testing.T) {
	tests := []struct {
		name string
		in   appsv1.DaemonSetSpec
		want appsv1.DaemonSetSpec
	}{{
		name: "empty spec",
		want: appsv1.DaemonSetSpec{
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{
					MaxUnavailable: utilptr.To(intstr.FromInt32(1)),
					MaxSurge:       utilptr.To(intstr.FromInt32(0)),
				},
			},
			RevisionHistoryLimit: utilptr.To[int32](10),
		},
	}, {
		name: "on delete",
		in:   appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}},
		want: appsv1.DaemonSetSpec{
			UpdateStrategy:       appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
			RevisionHistoryLimit: utilptr.To[int32](10),
		},
	}, {
		name: "surge kept",
		in: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
			RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxSurge: utilptr.To(intstr.FromString("10%"))},
		}},
		want: appsv1.DaemonSetSpec{
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{
					MaxUnavailable: utilptr.To(intstr.FromInt32(1)),
					MaxSurge:       utilptr.To(intstr.FromString("10%")),
				},
			},
			RevisionHistoryLimit: utilptr.To[int32](10),
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &appsv1.DaemonSet{Spec: tc.in}
			defaultDaemonSet(obj)
			tc.want.Template = obj.Spec.Template
			if !apiequality.Semantic.DeepEqual(obj.Spec, tc.want) {
				t.Errorf("got %+v\nwant %+v", obj.Spec, tc.want)
			}
		})
	}
}

func TestDaemonSetTemplateGeneration(t *testing.T) {
	ds := validDaemonSet()
	prepareDaemonSetForCreate(ds)
	if got := ds.Annotations[appsv1.DeprecatedTemplateGeneration]; got != "1" {
		t.Fatalf("create: template generation = %q, want 1", got)
	}

	// A client echoing a stale or bogus value cannot move it.
	same := ds.DeepCopy()
	same.Annotations[appsv1.DeprecatedTemplateGeneration] = "7"
	same.Spec.MinReadySeconds = 5
	prepareDaemonSetForUpdate(same, ds)
	if got := same.Annotations[appsv1.DeprecatedTemplateGeneration]; got != "1" {
		t.Errorf("update without template change: %q, want 1", got)
	}

	changed := ds.DeepCopy()
	changed.Annotations = nil
	changed.Spec.Template.Spec.Containers[0].Image = "agent:2"
	prepareDaemonSetForUpdate(changed, ds)
	if got := changed.Annotations[appsv1.DeprecatedTemplateGeneration]; got != "2" {
		t.Errorf("update with template change: %q, want 2", got)
	}
}

func validDaemonSet() *appsv1.DaemonSet {
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: podTemplate(map[string]string{"app": "agent"}),
		},
	}
	defaultDaemonSet(ds)
	return ds
}

func TestValidateDaemonSet(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1.DaemonSet)
		want   []wantErr
	}{{
		name:   "valid",
		mutate: func(*appsv1.DaemonSet) {},
	}, {
		name:   "missing selector only fails the label match",
		mutate: func(ds *appsv1.DaemonSet) { ds.Spec.Selector = nil },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.template.metadata.labels", Detail: "`selector` does not match template `labels`"}},
	}, {
		name:   "empty selector",
		mutate: func(ds *appsv1.DaemonSet) { ds.Spec.Selector = &metav1.LabelSelector{} },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.selector", Detail: "empty selector is invalid for daemonset"}},
	}, {
		name: "restart policy, deadline and minReadySeconds",
		mutate: func(ds *appsv1.DaemonSet) {
			ds.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			ds.Spec.Template.Spec.ActiveDeadlineSeconds = utilptr.To[int64](1)
			ds.Spec.MinReadySeconds = -1
		},
		want: []wantErr{
			{Type: field.ErrorTypeNotSupported, Field: "spec.template.spec.restartPolicy", Detail: ""},
			{Type: field.ErrorTypeForbidden, Field: "spec.template.spec.activeDeadlineSeconds", Detail: "activeDeadlineSeconds in DaemonSet is not Supported"},
			{Type: field.ErrorTypeInvalid, Field: "spec.minReadySeconds", Detail: ""},
		},
	}, {
		name: "surge and unavailable both set",
		mutate: func(ds *appsv1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge = utilptr.To(intstr.FromInt32(1))
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.updateStrategy.rollingUpdate.maxSurge", Detail: "may not be set when maxUnavailable is non-zero"}},
	}, {
		name: "surge and unavailable both zero",
		mutate: func(ds *appsv1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = utilptr.To(intstr.FromString("0%"))
		},
		want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.updateStrategy.rollingUpdate.maxUnavailable", Detail: "cannot be 0 when maxSurge is 0"}},
	}, {
		name: "surge only",
		mutate: func(ds *appsv1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = utilptr.To(intstr.FromInt32(0))
			ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge = utilptr.To(intstr.FromString("20%"))
		},
	}, {
		name: "percentages over 100",
		mutate: func(ds *appsv1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = utilptr.To(intstr.FromInt32(0))
			ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge = utilptr.To(intstr.FromString("101%"))
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.updateStrategy.rollingUpdate.maxSurge", Detail: "must not be greater than 100%"}},
	}, {
		name:   "rolling update without parameters",
		mutate: func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate = nil },
		want:   []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.updateStrategy.rollingUpdate", Detail: ""}},
	}, {
		name:   "unknown strategy",
		mutate: func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.Type = "Surge" },
		want:   []wantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.updateStrategy", Detail: ""}},
	}, {
		name:   "negative revision history",
		mutate: func(ds *appsv1.DaemonSet) { ds.Spec.RevisionHistoryLimit = utilptr.To[int32](-1) },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.revisionHistoryLimit", Detail: ""}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := validDaemonSet()
			tc.mutate(ds)
			checkErrs(t, validateDaemonSet(ds), tc.want)
		})
	}
}

func TestValidateDaemonSetUpdate(t *testing.T) {
	old := validDaemonSet()
	changed := old.DeepCopy()
	changed.Spec.Selector.MatchLabels["tier"] = "node"
	checkErrs(t, validateDaemonSetUpdate(changed, old), []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.selector", Detail: "field is immutable"}})
	checkErrs(t, validateDaemonSetUpdate(old.DeepCopy(), old), nil)
}
