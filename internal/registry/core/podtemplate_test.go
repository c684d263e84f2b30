package core

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

func newPodTemplate() *corev1.PodTemplate {
	return &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default"},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
		},
	}
}

func TestDefaultPodTemplate(t *testing.T) {
	pt := newPodTemplate()
	defaultPodTemplate(pt)
	spec := pt.Template.Spec
	if spec.RestartPolicy != corev1.RestartPolicyAlways || spec.DNSPolicy != corev1.DNSClusterFirst || spec.SchedulerName != corev1.DefaultSchedulerName {
		t.Errorf("pod spec defaults not applied: %+v", spec)
	}
	c := spec.Containers[0]
	if c.ImagePullPolicy != corev1.PullIfNotPresent || c.TerminationMessagePath != corev1.TerminationMessagePathDefault {
		t.Errorf("container defaults not applied: %+v", c)
	}
	if spec.EnableServiceLinks != nil {
		t.Errorf("enableServiceLinks is a Pod default, not a template's")
	}
}

func TestValidatePodTemplate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.PodTemplate)
		want   []string
	}{
		{"valid", func(*corev1.PodTemplate) {}, nil},
		{"any restart policy", func(pt *corev1.PodTemplate) { pt.Template.Spec.RestartPolicy = corev1.RestartPolicyNever }, nil},
		{"no containers", func(pt *corev1.PodTemplate) { pt.Template.Spec.Containers = nil },
			[]string{"template.spec.containers: Required value"}},
		{"container without image", func(pt *corev1.PodTemplate) { pt.Template.Spec.Containers[0].Image = "" },
			[]string{"template.spec.containers[0].image: Required value"}},
		{"bad template label", func(pt *corev1.PodTemplate) { pt.Template.Labels = map[string]string{"a b": "c"} },
			[]string{"template.labels: Invalid value"}},
		{"ephemeral containers", func(pt *corev1.PodTemplate) {
			pt.Template.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: "busybox", ImagePullPolicy: corev1.PullIfNotPresent,
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}}}
		}, []string{"template.spec.ephemeralContainers: Forbidden"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pt := newPodTemplate()
			tc.mutate(pt)
			expectErrs(t, runCreate(Podtemplates, pt), tc.want...)
		})
	}
}

func TestPodTemplateGeneration(t *testing.T) {
	pt := newPodTemplate()
	runCreate(Podtemplates, pt)
	if pt.Generation != 1 {
		t.Fatalf("generation on create = %d, want 1", pt.Generation)
	}
	relabelled := pt.DeepCopy()
	relabelled.Labels = map[string]string{"tier": "front"}
	Podtemplates.PrepareForUpdate(relabelled, pt)
	if relabelled.Generation != 1 {
		t.Errorf("metadata change bumped generation to %d", relabelled.Generation)
	}
	changed := pt.DeepCopy()
	changed.Template.Spec.Containers[0].Image = "nginx:1.28"
	Podtemplates.PrepareForUpdate(changed, pt)
	if changed.Generation != 2 {
		t.Errorf("template change: generation = %d, want 2", changed.Generation)
	}
}

func TestPodTemplateTable(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	col := printerstest.Col
	printerstest.CheckColumns(t, podtemplateTable, []printerstest.Column{
		col("Containers", "string", 0), col("Images", "string", 0), col("Pod Labels", "string", 0),
	})
	pt := newPodTemplate()
	pt.Template.Spec.Containers = append(pt.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "busybox"})
	printerstest.CheckRow(t, podtemplateTable, pt, now, []any{"nginx,sidecar", "nginx:1.27,busybox", "app=web"})
	printerstest.CheckRow(t, podtemplateTable, &corev1.PodTemplate{}, now, []any{"", "", "<none>"})
}
