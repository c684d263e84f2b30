package node

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
	"github.com/orca-project/orca/internal/registry/registrytest"
)

type wantErr = registrytest.WantErr

func runtimeClass(mutate func(*nodev1.RuntimeClass)) *nodev1.RuntimeClass {
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"}
	if mutate != nil {
		mutate(rc)
	}
	return rc
}

func TestValidateRuntimeClass(t *testing.T) {
	overhead := func(rl corev1.ResourceList) func(*nodev1.RuntimeClass) {
		return func(rc *nodev1.RuntimeClass) { rc.Overhead = &nodev1.Overhead{PodFixed: rl} }
	}
	scheduling := func(s nodev1.Scheduling) func(*nodev1.RuntimeClass) {
		return func(rc *nodev1.RuntimeClass) { rc.Scheduling = &s }
	}
	noSchedule := corev1.Toleration{Key: "sandboxed", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name   string
		mutate func(*nodev1.RuntimeClass)
		want   []wantErr
	}{
		{"handler only", nil, nil},
		{"no handler", func(rc *nodev1.RuntimeClass) { rc.Handler = "" },
			[]wantErr{{Type: field.ErrorTypeRequired, Field: "handler"}}},
		{"handler is a subdomain, not a label", func(rc *nodev1.RuntimeClass) { rc.Handler = "kata.v2" },
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "handler", Detail: "must not contain dots"}}},
		{"handler in upper case", func(rc *nodev1.RuntimeClass) { rc.Handler = "RunSC" },
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "handler"}}},
		{"overhead", overhead(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("120Mi")}), nil},
		{"negative overhead", overhead(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}),
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "overhead.limits[cpu]", Detail: "must be greater than or equal to 0"}}},
		{"overhead of no container resource", overhead(corev1.ResourceList{"pods": resource.MustParse("1")}),
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "overhead.limits[pods]", Detail: "must be a standard resource for containers"}}},
		{"scheduling", scheduling(nodev1.Scheduling{NodeSelector: map[string]string{"sandbox": "gvisor"}, Tolerations: []corev1.Toleration{noSchedule}}), nil},
		{"bad node selector", scheduling(nodev1.Scheduling{NodeSelector: map[string]string{"bad key!": "x"}}),
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "scheduling.nodeSelector"}}},
		{"bad toleration", scheduling(nodev1.Scheduling{Tolerations: []corev1.Toleration{{Key: "k", Operator: "Matches"}}}),
			[]wantErr{{Type: field.ErrorTypeNotSupported, Field: "scheduling.tolerations[0].operator"}}},
		{"duplicate toleration", scheduling(nodev1.Scheduling{Tolerations: []corev1.Toleration{noSchedule, noSchedule}}),
			[]wantErr{{Type: field.ErrorTypeDuplicate, Field: "scheduling.tolerations[1]"}}},
		{"tolerations differing only in seconds are duplicates", scheduling(nodev1.Scheduling{Tolerations: []corev1.Toleration{
			{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](10)},
			{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](20)},
		}}), []wantErr{{Type: field.ErrorTypeDuplicate, Field: "scheduling.tolerations[1]"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			registrytest.CheckErrs(t, validateRuntimeClass(runtimeClass(tc.mutate)), tc.want)
		})
	}
}

func TestValidateRuntimeClassUpdate(t *testing.T) {
	old := runtimeClass(nil)
	relabelled := runtimeClass(func(rc *nodev1.RuntimeClass) { rc.Labels = map[string]string{"a": "b"} })
	registrytest.CheckErrs(t, validateRuntimeClassUpdate(relabelled, old), nil)
	newHandler := runtimeClass(func(rc *nodev1.RuntimeClass) { rc.Handler = "kata" })
	registrytest.CheckErrs(t, validateRuntimeClassUpdate(newHandler, old),
		[]wantErr{{Type: field.ErrorTypeInvalid, Field: "handler", Detail: "field is immutable"}})
}

func TestRuntimeClassTable(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	printerstest.CheckColumns(t, runtimeclassTable, []printerstest.Column{
		printerstest.Col("Handler", "string", 0), printerstest.Col("Age", "string", 0),
	})
	rc := runtimeClass(func(rc *nodev1.RuntimeClass) { rc.CreationTimestamp = metav1.NewTime(now.Add(-90 * time.Second)) })
	printerstest.CheckRow(t, runtimeclassTable, rc, now, []any{"runsc", "90s"})
}
