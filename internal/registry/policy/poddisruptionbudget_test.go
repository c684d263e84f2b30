package policy

import (
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
	"github.com/orca-project/orca/internal/registry/registrytest"
)

func TestValidatePodDisruptionBudget(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	i := intstr.FromInt32
	s := intstr.FromString
	tests := []struct {
		name string
		spec policyv1.PodDisruptionBudgetSpec
		want []registrytest.WantErr
	}{
		{name: "integer minAvailable", spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(i(2)), Selector: sel}},
		{name: "percent maxUnavailable", spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: utilptr.To(s("25%")), Selector: sel}},
		{name: "neither, no selector", spec: policyv1.PodDisruptionBudgetSpec{}},
		{name: "both set", spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(i(1)), MaxUnavailable: utilptr.To(i(1))},
			want: []registrytest.WantErr{{Type: field.ErrorTypeInvalid, Field: "spec", Detail: "minAvailable and maxUnavailable cannot be both set"}}},
		{name: "negative minAvailable", spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(i(-1))},
			want: []registrytest.WantErr{{Type: field.ErrorTypeInvalid, Field: "spec.minAvailable", Detail: "must be greater than or equal to 0"}}},
		{name: "not a percentage", spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: utilptr.To(s("half"))},
			want: []registrytest.WantErr{{Type: field.ErrorTypeInvalid, Field: "spec.maxUnavailable", Detail: "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"}}},
		{name: "over 100%", spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(s("101%"))},
			want: []registrytest.WantErr{{Type: field.ErrorTypeInvalid, Field: "spec.minAvailable", Detail: "must not be greater than 100%"}}},
		{name: "bad selector operator", spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}},
			want: []registrytest.WantErr{{Type: field.ErrorTypeInvalid, Field: "spec.selector.matchExpressions[0].operator", Detail: "not a valid selector operator"}}},
		{name: "bad selector value", spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "-x-"}}},
			want: []registrytest.WantErr{{Type: field.ErrorTypeInvalid, Field: "spec.selector.matchLabels"}}},
		{name: "AlwaysAllow", spec: policyv1.PodDisruptionBudgetSpec{UnhealthyPodEvictionPolicy: utilptr.To(policyv1.AlwaysAllow)}},
		{name: "IfHealthyBudget", spec: policyv1.PodDisruptionBudgetSpec{UnhealthyPodEvictionPolicy: utilptr.To(policyv1.IfHealthyBudget)}},
		{name: "unknown eviction policy", spec: policyv1.PodDisruptionBudgetSpec{UnhealthyPodEvictionPolicy: utilptr.To(policyv1.UnhealthyPodEvictionPolicyType("Sometimes"))},
			want: []registrytest.WantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.unhealthyPodEvictionPolicy", Detail: `supported values: "AlwaysAllow", "IfHealthyBudget"`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			registrytest.CheckErrs(t, validatePodDisruptionBudget(&policyv1.PodDisruptionBudget{Spec: tc.spec}), tc.want)
		})
	}
}

func TestValidatePodDisruptionBudgetStatusUpdate(t *testing.T) {
	tests := []struct {
		name   string
		status policyv1.PodDisruptionBudgetStatus
		want   []registrytest.WantErr
	}{
		{name: "counts", status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3}},
		{name: "negative allowed", status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: -1},
			want: []registrytest.WantErr{{Type: field.ErrorTypeInvalid, Field: "status.disruptionsAllowed", Detail: "must be greater than or equal to 0"}}},
		{name: "negative expected", status: policyv1.PodDisruptionBudgetStatus{ExpectedPods: -2},
			want: []registrytest.WantErr{{Type: field.ErrorTypeInvalid, Field: "status.expectedPods", Detail: "must be greater than or equal to 0"}}},
		{name: "condition without reason", status: policyv1.PodDisruptionBudgetStatus{Conditions: []metav1.Condition{{Type: "DisruptionAllowed", Status: metav1.ConditionTrue, LastTransitionTime: metav1.Now()}}},
			want: []registrytest.WantErr{{Type: field.ErrorTypeRequired, Field: "status.conditions[0].reason"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pdb := &policyv1.PodDisruptionBudget{Status: tc.status}
			registrytest.CheckErrs(t, validatePodDisruptionBudgetStatusUpdate(pdb, &policyv1.PodDisruptionBudget{}), tc.want)
		})
	}
}

func TestPodDisruptionBudgetTable(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	printerstest.CheckColumns(t, poddisruptionbudgetTable, []printerstest.Column{
		printerstest.Col("Min Available", "string", 0), printerstest.Col("Max Unavailable", "string", 0),
		printerstest.Col("Allowed Disruptions", "integer", 0), printerstest.Col("Age", "string", 0),
	})
	created := metav1.NewTime(now.Add(-90 * time.Second))
	minAvail := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(intstr.FromInt32(2))},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1},
	}
	printerstest.CheckRow(t, poddisruptionbudgetTable, minAvail, now, []any{"2", "N/A", int64(1), "90s"})
	maxUnavail := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: utilptr.To(intstr.FromString("25%"))},
	}
	printerstest.CheckRow(t, poddisruptionbudgetTable, maxUnavail, now, []any{"N/A", "25%", int64(0), "90s"})
}
