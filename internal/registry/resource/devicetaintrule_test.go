package resource

import (
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// rule is the rule of upstream's conformance test: a taint with effect
// None on no device in particular.
func rule(mutate func(*resourcev1.DeviceTaintRuleSpec)) *resourcev1.DeviceTaintRule {
	r := &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: "test"},
		Spec:       resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "testing", Effect: resourcev1.DeviceTaintEffectNone}},
	}
	if mutate != nil {
		mutate(&r.Spec)
	}
	return r
}

func TestValidateDeviceTaintRule(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*resourcev1.DeviceTaintRuleSpec)
		want   []wantErr
	}{
		{name: "conformance rule"},
		{name: "selector", mutate: func(s *resourcev1.DeviceTaintRuleSpec) {
			s.DeviceSelector = &resourcev1.DeviceTaintSelector{Driver: ptr.To("dra.example.com"), Pool: ptr.To("node-1"), Device: ptr.To("gpu-0")}
		}},
		{name: "bad selector", mutate: func(s *resourcev1.DeviceTaintRuleSpec) {
			s.DeviceSelector = &resourcev1.DeviceTaintSelector{Driver: ptr.To(""), Pool: ptr.To("Pool"), Device: ptr.To("gpu.0")}
		}, want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.deviceSelector.driver"},
			{Type: field.ErrorTypeInvalid, Field: "spec.deviceSelector.pool"},
			{Type: field.ErrorTypeInvalid, Field: "spec.deviceSelector.device"},
		}},
		{name: "no key", mutate: func(s *resourcev1.DeviceTaintRuleSpec) { s.Taint.Key = "" },
			want: []wantErr{
				{Type: field.ErrorTypeInvalid, Field: "spec.taint.key", Detail: "name part must be non-empty"},
				{Type: field.ErrorTypeInvalid, Field: "spec.taint.key"},
			}},
		{name: "bad value", mutate: func(s *resourcev1.DeviceTaintRuleSpec) { s.Taint.Value = "not a value" },
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.taint.value"}}},
		{name: "no effect", mutate: func(s *resourcev1.DeviceTaintRuleSpec) { s.Taint.Effect = "" },
			want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.taint.effect"}}},
		{name: "unknown effect", mutate: func(s *resourcev1.DeviceTaintRuleSpec) { s.Taint.Effect = "PreferNoSchedule" },
			want: []wantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.taint.effect"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, create(Devicetaintrules, rule(tc.mutate)), tc.want)
		})
	}
}

func TestDeviceTaintRuleTime(t *testing.T) {
	r := rule(nil)
	create(Devicetaintrules, r)
	if r.Spec.Taint.TimeAdded == nil {
		t.Fatal("no timeAdded on create")
	}
	long := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	r.Spec.Taint.TimeAdded = &long

	relabelled := r.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	checkErrs(t, update(Devicetaintrules, relabelled, r), nil)
	if !relabelled.Spec.Taint.TimeAdded.Equal(&long) {
		t.Errorf("timeAdded moved without an effect change")
	}
	// The conformance test's update: NoExecute from now on.
	evicting := r.DeepCopy()
	evicting.Spec.Taint.Effect = resourcev1.DeviceTaintEffectNoExecute
	checkErrs(t, update(Devicetaintrules, evicting, r), nil)
	if evicting.Spec.Taint.TimeAdded.Equal(&long) {
		t.Errorf("timeAdded kept across an effect change")
	}
}

func TestDeviceTaintRuleStatus(t *testing.T) {
	old := rule(nil)
	create(Devicetaintrules, old)
	cond := metav1.Condition{Type: "Testing", Status: metav1.ConditionTrue, LastTransitionTime: metav1.Now(), Reason: "E2E_test_running", Message: "This condition can be ignored."}
	next := old.DeepCopy()
	next.Status.Conditions = []metav1.Condition{cond}
	checkErrs(t, updateStatus(Devicetaintrules, next, old), nil)
	bad := old.DeepCopy()
	cond.Reason = ""
	bad.Status.Conditions = []metav1.Condition{cond}
	checkErrs(t, updateStatus(Devicetaintrules, bad, old), []wantErr{{Type: field.ErrorTypeRequired, Field: "status.conditions[0].reason"}})
}
