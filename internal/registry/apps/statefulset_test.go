package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"
)

func TestDefaultStatefulSet(t *testing.T) {
	retain := &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
	tests := []struct {
		name string
		in   appsv1.StatefulSetSpec
		want appsv1.StatefulSetSpec
	}{{
		name: "empty spec",
		want: appsv1.StatefulSetSpec{
			Replicas:            utilptr.To[int32](1),
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{
					Partition:      utilptr.To[int32](0),
					MaxUnavailable: utilptr.To(intstr.FromInt32(1)),
				},
			},
			RevisionHistoryLimit:                 utilptr.To[int32](10),
			PersistentVolumeClaimRetentionPolicy: retain,
		},
	}, {
		name: "on delete and explicit values",
		in: appsv1.StatefulSetSpec{
			Replicas:            utilptr.To[int32](3),
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
			},
		},
		want: appsv1.StatefulSetSpec{
			Replicas:             utilptr.To[int32](3),
			PodManagementPolicy:  appsv1.ParallelPodManagement,
			UpdateStrategy:       appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			RevisionHistoryLimit: utilptr.To[int32](10),
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
				WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
		},
	}, {
		name: "explicit rolling update type without parameters stays bare",
		in:   appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}},
		want: appsv1.StatefulSetSpec{
			Replicas:                             utilptr.To[int32](1),
			PodManagementPolicy:                  appsv1.OrderedReadyPodManagement,
			UpdateStrategy:                       appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			RevisionHistoryLimit:                 utilptr.To[int32](10),
			PersistentVolumeClaimRetentionPolicy: retain,
		},
	}, {
		name: "partial rolling update filled",
		in: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
			Type:          appsv1.RollingUpdateStatefulSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: utilptr.To[int32](2)},
		}},
		want: appsv1.StatefulSetSpec{
			Replicas:            utilptr.To[int32](1),
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{
					Partition:      utilptr.To[int32](2),
					MaxUnavailable: utilptr.To(intstr.FromInt32(1)),
				},
			},
			RevisionHistoryLimit:                 utilptr.To[int32](10),
			PersistentVolumeClaimRetentionPolicy: retain,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &appsv1.StatefulSet{Spec: tc.in}
			defaultStatefulSet(obj)
			tc.want.Template = obj.Spec.Template
			if !apiequality.Semantic.DeepEqual(obj.Spec, tc.want) {
				t.Errorf("got %+v\nwant %+v", obj.Spec, tc.want)
			}
		})
	}
}

func TestDefaultStatefulSetClaimTemplates(t *testing.T) {
	obj := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{
			{ObjectMeta: metav1.ObjectMeta{Name: "data"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "logs"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}},
		},
	}}
	defaultStatefulSet(obj)
	if got := obj.Spec.VolumeClaimTemplates[0].Status.Phase; got != corev1.ClaimPending {
		t.Errorf("phase = %q, want Pending", got)
	}
	if got := obj.Spec.VolumeClaimTemplates[1].Status.Phase; got != corev1.ClaimBound {
		t.Errorf("explicit phase overwritten: %q", got)
	}
	// Upstream always shows the templates with their kind, written or read.
	for i, c := range obj.Spec.VolumeClaimTemplates {
		if c.APIVersion != "v1" || c.Kind != "PersistentVolumeClaim" {
			t.Errorf("template %d: apiVersion %q kind %q", i, c.APIVersion, c.Kind)
		}
	}
	read := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{}}}}
	Statefulsets.OnRead(read)
	if c := read.Spec.VolumeClaimTemplates[0]; c.APIVersion != "v1" || c.Kind != "PersistentVolumeClaim" {
		t.Errorf("read back: apiVersion %q kind %q", c.APIVersion, c.Kind)
	}
}

func validStatefulSet() *appsv1.StatefulSet {
	template := podTemplate(map[string]string{"app": "db"})
	template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/db"}}
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			ServiceName: "db",
			Template:    template,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
					},
				},
			}},
		},
	}
	defaultStatefulSet(s)
	return s
}

func TestValidateStatefulSet(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1.StatefulSet)
		want   []wantErr
	}{{
		name:   "valid",
		mutate: func(*appsv1.StatefulSet) {},
	}, {
		name: "claim templates count as pod volumes, other mounts do not",
		mutate: func(s *appsv1.StatefulSet) {
			s.Spec.Template.Spec.Containers[0].VolumeMounts = append(s.Spec.Template.Spec.Containers[0].VolumeMounts,
				corev1.VolumeMount{Name: "scratch", MountPath: "/scratch"})
		},
		want: []wantErr{{Type: field.ErrorTypeNotFound, Field: "spec.template.spec.containers[0].volumeMounts[1].name", Detail: ""}},
	}, {
		// The volume added for the claim is not reported itself, but pods
		// could not mount it under that name, which is.
		name: "claim template whose name cannot be a volume name",
		mutate: func(s *appsv1.StatefulSet) {
			s.Spec.VolumeClaimTemplates[0].Name = "Data_Dir"
			s.Spec.Template.Spec.Containers[0].VolumeMounts[0].Name = "Data_Dir"
		},
		want: []wantErr{{Type: field.ErrorTypeNotFound, Field: "spec.template.spec.containers[0].volumeMounts[0].name", Detail: ""}},
	}, {
		name:   "missing pod management policy",
		mutate: func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = "" },
		want:   []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.podManagementPolicy", Detail: ""}},
	}, {
		name:   "unknown pod management policy",
		mutate: func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = "Random" },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.podManagementPolicy", Detail: "must be 'OrderedReady' or 'Parallel'"}},
	}, {
		name:   "missing update strategy",
		mutate: func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.Type = "" },
		want:   []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.updateStrategy", Detail: ""}},
	}, {
		name:   "on delete with rolling update",
		mutate: func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.updateStrategy.rollingUpdate", Detail: "only allowed for updateStrategy 'RollingUpdate'"}},
	}, {
		name:   "unknown update strategy",
		mutate: func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.Type = "Canary" },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.updateStrategy", Detail: "must be 'RollingUpdate' or 'OnDelete'"}},
	}, {
		name:   "negative partition",
		mutate: func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = utilptr.To[int32](-1) },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.updateStrategy.rollingUpdate.partition", Detail: ""}},
	}, {
		name: "zero max unavailable",
		mutate: func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = utilptr.To(intstr.FromString("0%"))
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.updateStrategy.rollingUpdate.maxUnavailable", Detail: "cannot be 0"}},
	}, {
		name: "max unavailable over 100%",
		mutate: func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = utilptr.To(intstr.FromString("150%"))
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.updateStrategy.rollingUpdate.maxUnavailable", Detail: "must not be greater than 100%"}},
	}, {
		name:   "unknown retention policy",
		mutate: func(s *appsv1.StatefulSet) { s.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = "Keep" },
		want:   []wantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.persistentVolumeClaimRetentionPolicy.whenScaled", Detail: ""}},
	}, {
		name: "negative counts",
		mutate: func(s *appsv1.StatefulSet) {
			s.Spec.Replicas = utilptr.To[int32](-1)
			s.Spec.MinReadySeconds = -1
			s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: -1}
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.replicas", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.minReadySeconds", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.ordinals.start", Detail: ""},
		},
	}, {
		name:   "empty selector",
		mutate: func(s *appsv1.StatefulSet) { s.Spec.Selector = &metav1.LabelSelector{} },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.selector", Detail: "empty selector is invalid for statefulset"}},
	}, {
		name:   "missing selector",
		mutate: func(s *appsv1.StatefulSet) { s.Spec.Selector = nil },
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.selector", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.template.metadata.labels", Detail: ""},
		},
	}, {
		name: "restart policy and deadline checked even with a bad selector",
		mutate: func(s *appsv1.StatefulSet) {
			s.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "x", Operator: metav1.LabelSelectorOpIn}}
			s.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
			s.Spec.Template.Spec.ActiveDeadlineSeconds = utilptr.To[int64](5)
		},
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.selector.matchExpressions[0].values", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.selector", Detail: ""},
			{Type: field.ErrorTypeNotSupported, Field: "spec.template.spec.restartPolicy", Detail: ""},
			{Type: field.ErrorTypeForbidden, Field: "spec.template.spec.activeDeadlineSeconds", Detail: "activeDeadlineSeconds in StatefulSet is not Supported"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validStatefulSet()
			tc.mutate(s)
			checkErrs(t, validateStatefulSet(s), tc.want)
		})
	}
}

func TestVolumeIndex(t *testing.T) {
	const volumes = "spec.template.spec.volumes"
	tests := []struct {
		path string
		idx  int
		ok   bool
	}{
		{"spec.template.spec.volumes[2].name", 2, true},
		{"spec.template.spec.volumes[10]", 10, true},
		{"spec.template.spec.volumes", 0, false},
		{"spec.template.spec.containers[0].volumeMounts[1].name", 0, false},
	}
	for _, tc := range tests {
		idx, ok := volumeIndex(tc.path, volumes)
		if idx != tc.idx || ok != tc.ok {
			t.Errorf("volumeIndex(%q) = %d, %v; want %d, %v", tc.path, idx, ok, tc.idx, tc.ok)
		}
	}
}

func TestValidateStatefulSetUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1.StatefulSet)
		want   []wantErr
	}{{
		name: "mutable fields",
		mutate: func(s *appsv1.StatefulSet) {
			s.Spec.Replicas = utilptr.To[int32](5)
			s.Spec.Template.Spec.Containers[0].Image = "postgres:17"
			s.Spec.UpdateStrategy.RollingUpdate.Partition = utilptr.To[int32](2)
			s.Spec.RevisionHistoryLimit = utilptr.To[int32](3)
			s.Spec.MinReadySeconds = 10
			s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 1}
			s.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
		},
	}, {
		name:   "service name",
		mutate: func(s *appsv1.StatefulSet) { s.Spec.ServiceName = "other" },
		want:   []wantErr{{Type: field.ErrorTypeForbidden, Field: "spec", Detail: "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"}},
	}, {
		name: "claim templates",
		mutate: func(s *appsv1.StatefulSet) {
			s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		},
		want: []wantErr{{Type: field.ErrorTypeForbidden, Field: "spec", Detail: ""}},
	}, {
		name:   "pod management policy",
		mutate: func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement },
		want:   []wantErr{{Type: field.ErrorTypeForbidden, Field: "spec", Detail: ""}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validStatefulSet()
			s := old.DeepCopy()
			tc.mutate(s)
			checkErrs(t, validateStatefulSetUpdate(s, old), tc.want)
		})
	}
}

func TestStatefulSetName(t *testing.T) {
	if errs := Statefulsets.ValidateName("web.v1", false); len(errs) == 0 {
		t.Error("dotted name accepted; pods need DNS-label hostnames")
	}
	if errs := Statefulsets.ValidateName("web", false); len(errs) != 0 {
		t.Errorf("plain name rejected: %v", errs)
	}
}
