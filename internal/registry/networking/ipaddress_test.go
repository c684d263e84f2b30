package networking

import (
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateIPAddressName(t *testing.T) {
	for _, name := range []string{"10.43.0.1", "255.255.255.255", "fe80::42:1dff:fe84:f9e2", "2001:db8::1"} {
		if errs := validateIPAddressName(name, false); len(errs) != 0 {
			t.Errorf("%s: %v", name, errs)
		}
	}
	for name, want := range map[string]string{
		"2001:DB8::1":   `must be in canonical form ("2001:db8::1")`,
		"2001:db8:0::1": `must be in canonical form ("2001:db8::1")`,
	} {
		if errs := validateIPAddressName(name, false); !slices.Equal(errs, []string{want}) {
			t.Errorf("%s: %q, want %q", name, errs, want)
		}
	}
	for _, name := range []string{"10.043.0.1", "10.43.0.0/16", "::ffff:10.43.0.1", "kubernetes", "10.43.0.1-"} {
		if errs := validateIPAddressName(name, true); len(errs) == 0 {
			t.Errorf("%s accepted", name)
		}
	}
}

func ipAddress(ref *networkingv1.ParentReference) *networkingv1.IPAddress {
	return &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "10.43.0.10"}, Spec: networkingv1.IPAddressSpec{ParentRef: ref}}
}

func TestValidateIPAddress(t *testing.T) {
	svc := networkingv1.ParentReference{Resource: "services", Namespace: "kube-system", Name: "kube-dns"}
	with := func(f func(*networkingv1.ParentReference)) *networkingv1.ParentReference {
		r := svc
		f(&r)
		return &r
	}
	tests := []struct {
		name string
		ref  *networkingv1.ParentReference
		want []wantErr
	}{
		{"service", &svc, nil},
		{"cluster-scoped parent of a group", &networkingv1.ParentReference{Group: "gateway.networking.k8s.io", Resource: "gateways", Name: "gw"}, nil},
		{"no parent", nil, []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.parentRef"}}},
		{"no resource or name", with(func(r *networkingv1.ParentReference) { r.Resource, r.Name = "", "" }), []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.parentRef.resource"},
			{Type: field.ErrorTypeRequired, Field: "spec.parentRef.name"},
		}},
		{"bad group", with(func(r *networkingv1.ParentReference) { r.Group = "Not_A_Group" }), []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.parentRef.group"},
		}},
		{"path segments", with(func(r *networkingv1.ParentReference) { r.Resource, r.Name, r.Namespace = "..", "a/b", "c%d" }), []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.parentRef.resource", Detail: "may not be '..'"},
			{Type: field.ErrorTypeInvalid, Field: "spec.parentRef.name", Detail: "may not contain '/'"},
			{Type: field.ErrorTypeInvalid, Field: "spec.parentRef.namespace", Detail: "may not contain '%'"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateIPAddress(ipAddress(tc.ref)), tc.want)
		})
	}
}

func TestValidateIPAddressUpdate(t *testing.T) {
	old := ipAddress(&networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "a"})
	same := old.DeepCopy()
	same.Labels = map[string]string{"patched": "true"}
	checkErrs(t, validateIPAddressUpdate(same, old), nil)
	moved := old.DeepCopy()
	moved.Spec.ParentRef.Name = "b"
	checkErrs(t, validateIPAddressUpdate(moved, old), []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.parentRef", Detail: "field is immutable"}})
}
