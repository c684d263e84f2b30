package scheduling

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry/registrytest"
)

// wantErr and checkErrs are the shared validation-test helpers.
type wantErr = registrytest.WantErr

var checkErrs = registrytest.CheckErrs

func TestDefaultPriorityClass(t *testing.T) {
	pc := &schedulingv1.PriorityClass{}
	defaultPriorityClass(pc)
	if *pc.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Errorf("preemptionPolicy = %s", *pc.PreemptionPolicy)
	}
	never := &schedulingv1.PriorityClass{PreemptionPolicy: utilptr.To(corev1.PreemptNever)}
	defaultPriorityClass(never)
	if *never.PreemptionPolicy != corev1.PreemptNever {
		t.Errorf("explicit policy overwritten")
	}
}

func priorityClass(name string, value int32, globalDefault bool) *schedulingv1.PriorityClass {
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: globalDefault}
	defaultPriorityClass(pc)
	return pc
}

func TestValidatePriorityClass(t *testing.T) {
	const reserved = "priority class names with 'system-' prefix are reserved for system use only. error: "
	tests := []struct {
		name string
		pc   *schedulingv1.PriorityClass
		want []wantErr
	}{
		{"user class", priorityClass("high", 1000000, true), nil},
		{"user maximum", priorityClass("highest", 1000000000, false), nil},
		{"negative value", priorityClass("low", -5, false), nil},
		{"over the user maximum", priorityClass("greedy", 1000000001, false), []wantErr{
			{Type: field.ErrorTypeForbidden, Field: "value", Detail: "maximum allowed value of a user defined priority is 1000000000"},
		}},
		{"system class", priorityClass("system-node-critical", 2000001000, false), nil},
		{"system class with wrong value", priorityClass("system-cluster-critical", 5, false), []wantErr{
			{Type: field.ErrorTypeForbidden, Field: "metadata.name", Detail: reserved + "value of system-cluster-critical PriorityClass must be 2000000000"},
		}},
		{"system class as global default", priorityClass("system-cluster-critical", 2000000000, true), []wantErr{
			{Type: field.ErrorTypeForbidden, Field: "metadata.name", Detail: reserved + "globalDefault of system-cluster-critical PriorityClass must be false"},
		}},
		{"unknown system class", priorityClass("system-mine", 10, false), []wantErr{
			{Type: field.ErrorTypeForbidden, Field: "metadata.name", Detail: reserved + "system-mine is not a known system priority class"},
		}},
		{"bad preemption policy", func() *schedulingv1.PriorityClass {
			pc := priorityClass("p", 1, false)
			pc.PreemptionPolicy = utilptr.To[corev1.PreemptionPolicy]("Sometimes")
			return pc
		}(), []wantErr{{Type: field.ErrorTypeNotSupported, Field: "preemptionPolicy", Detail: ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validatePriorityClass(tc.pc), tc.want)
		})
	}
}

func TestSystemPriorityClassesValidate(t *testing.T) {
	for _, pc := range SystemPriorityClasses() {
		checkErrs(t, validatePriorityClass(pc), nil)
	}
}

func TestValidatePriorityClassUpdate(t *testing.T) {
	old := priorityClass("high", 1000, false)
	tests := []struct {
		name   string
		mutate func(*schedulingv1.PriorityClass)
		want   []wantErr
	}{{
		name:   "description and default",
		mutate: func(pc *schedulingv1.PriorityClass) { pc.Description = "batch"; pc.GlobalDefault = true },
	}, {
		name:   "value",
		mutate: func(pc *schedulingv1.PriorityClass) { pc.Value = 2000 },
		want:   []wantErr{{Type: field.ErrorTypeForbidden, Field: "value", Detail: "may not be changed in an update."}},
	}, {
		name:   "preemption policy",
		mutate: func(pc *schedulingv1.PriorityClass) { pc.PreemptionPolicy = utilptr.To(corev1.PreemptNever) },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "preemptionPolicy", Detail: "field is immutable"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pc := old.DeepCopy()
			tc.mutate(pc)
			checkErrs(t, validatePriorityClassUpdate(pc, old), tc.want)
		})
	}
}
