package admissionregistration

import (
	"reflect"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

func TestTables(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	created := metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-90 * time.Minute))}
	col := printerstest.Col
	webhookCols := []printerstest.Column{col("Webhooks", "integer", 0), col("Age", "string", 0)}
	bindingCols := []printerstest.Column{col("PolicyName", "string", 0), col("ParamRef", "string", 0), col("Age", "string", 0)}

	tests := []struct {
		name    string
		table   *registry.Table
		columns []printerstest.Column
		rows    []runtime.Object
		want    [][]any
	}{{
		name:    "validatingwebhookconfigurations",
		table:   ValidatingWebhookConfigurations.Table,
		columns: webhookCols,
		rows: []runtime.Object{
			&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: created, Webhooks: make([]admissionregistrationv1.ValidatingWebhook, 2)},
			&admissionregistrationv1.ValidatingWebhookConfiguration{},
		},
		want: [][]any{{int64(2), "90m"}, {int64(0), "<unknown>"}},
	}, {
		name:    "mutatingwebhookconfigurations",
		table:   MutatingWebhookConfigurations.Table,
		columns: webhookCols,
		rows: []runtime.Object{
			&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: created, Webhooks: make([]admissionregistrationv1.MutatingWebhook, 1)},
		},
		want: [][]any{{int64(1), "90m"}},
	}, {
		name:    "validatingadmissionpolicies",
		table:   ValidatingAdmissionPolicies.Table,
		columns: []printerstest.Column{col("Validations", "integer", 0), col("ParamKind", "string", 0), col("Age", "string", 0)},
		rows: []runtime.Object{
			vap(func(*admissionregistrationv1.ValidatingAdmissionPolicySpec) {}),
			&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: created, Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				Validations: make([]admissionregistrationv1.Validation, 3),
				ParamKind:   &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Limits"},
			}},
		},
		want: [][]any{{int64(1), "v1/ConfigMap", "<unknown>"}, {int64(3), "example.com/v1/Limits", "90m"}},
	}, {
		name:    "validatingadmissionpolicies without paramKind",
		table:   ValidatingAdmissionPolicies.Table,
		columns: []printerstest.Column{col("Validations", "integer", 0), col("ParamKind", "string", 0), col("Age", "string", 0)},
		rows:    []runtime.Object{&admissionregistrationv1.ValidatingAdmissionPolicy{}},
		want:    [][]any{{int64(0), "<unset>", "<unknown>"}},
	}, {
		name:    "mutatingadmissionpolicies",
		table:   MutatingAdmissionPolicies.Table,
		columns: []printerstest.Column{col("Mutations", "integer", 0), col("ParamKind", "string", 0), col("Age", "string", 0)},
		rows: []runtime.Object{
			mutatingPolicy(func(*admissionregistrationv1.MutatingAdmissionPolicySpec) {}),
			&admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: created},
		},
		want: [][]any{{int64(1), "example.com/v1/SidecarConfig", "<unknown>"}, {int64(0), "<unset>", "90m"}},
	}, {
		name:    "validatingadmissionpolicybindings",
		table:   ValidatingAdmissionPolicyBindings.Table,
		columns: bindingCols,
		rows: []runtime.Object{
			vapb(func(*admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {}),
			vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) { s.ParamRef.Namespace = "" }),
			vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
				s.ParamRef = &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
			}),
			vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) { s.ParamRef = nil }),
			vapb(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
				s.ParamRef = &admissionregistrationv1.ParamRef{Namespace: "default"}
			}),
		},
		want: [][]any{
			{"replica-limit", "default/limits", "<unknown>"},
			{"replica-limit", "*/limits", "<unknown>"},
			// Upstream prints the selector's generated Go form.
			{"replica-limit", "&LabelSelector{MatchLabels:map[string]string{env: prod,},MatchExpressions:[]LabelSelectorRequirement{},}", "<unknown>"},
			{"replica-limit", "<unset>", "<unknown>"},
			{"replica-limit", "<unset>", "<unknown>"},
		},
	}, {
		name:    "mutatingadmissionpolicybindings",
		table:   MutatingAdmissionPolicyBindings.Table,
		columns: bindingCols,
		rows: []runtime.Object{
			&admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: created, Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{
				PolicyName: "sidecar", ParamRef: &admissionregistrationv1.ParamRef{Name: "mesh", Namespace: "istio"},
			}},
			&admissionregistrationv1.MutatingAdmissionPolicyBinding{},
		},
		want: [][]any{{"sidecar", "istio/mesh", "90m"}, {"", "<unset>", "<unknown>"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			printerstest.CheckColumns(t, tc.table, tc.columns)
			for i, obj := range tc.rows {
				printerstest.CheckRow(t, tc.table, obj, now, tc.want[i])
			}
		})
	}
}

func TestResources(t *testing.T) {
	for _, r := range []*registry.Resource{
		MutatingAdmissionPolicies, MutatingAdmissionPolicyBindings, MutatingWebhookConfigurations,
		ValidatingAdmissionPolicies, ValidatingAdmissionPolicyBindings, ValidatingWebhookConfigurations,
	} {
		t.Run(r.Name, func(t *testing.T) {
			if r.Group != "admissionregistration.k8s.io" || r.Version != "v1" || r.Namespaced {
				t.Errorf("%s/%s namespaced=%v", r.Group, r.Version, r.Namespaced)
			}
			if len(r.Categories) != 1 || r.Categories[0] != "api-extensions" {
				t.Errorf("categories %v", r.Categories)
			}
			if r.Name != r.Singular+"s" && r.Name != r.Singular[:len(r.Singular)-1]+"ies" {
				t.Errorf("name %q, singular %q", r.Name, r.Singular)
			}
			if kind := typeName(r.New()); kind != r.Kind {
				t.Errorf("New() is a %s, kind %s", kind, r.Kind)
			}
			if kind := typeName(r.NewList()); kind != r.ListKindName() {
				t.Errorf("NewList() is a %s, list kind %s", kind, r.ListKindName())
			}
			if !r.TracksGeneration || !r.ValidateUpdateReplaces || r.Default == nil || r.Validate == nil || r.ValidateUpdate == nil || r.Table == nil {
				t.Errorf("hooks missing: %+v", r)
			}
			if r.Status != (r == ValidatingAdmissionPolicies) || r.Status != (r.ValidateStatusUpdate != nil) {
				t.Errorf("status %v", r.Status)
			}
		})
	}
}

func typeName(obj runtime.Object) string { return reflect.TypeOf(obj).Elem().Name() }
