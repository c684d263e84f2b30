package networking

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry/registrytest"
)

type wantErr = registrytest.WantErr

var checkErrs = registrytest.CheckErrs

func serviceCIDR(cidrs ...string) *networkingv1.ServiceCIDR {
	return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "extra"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
}

func TestValidateServiceCIDR(t *testing.T) {
	tests := []struct {
		name  string
		cidrs []string
		want  []wantErr
	}{
		{"IPv4", []string{"10.43.0.0/16"}, nil},
		{"IPv6", []string{"fd00:1:1::/64"}, nil},
		{"dual stack", []string{"10.43.0.0/16", "fd00:1:1::/64"}, nil},
		{"none", nil, []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.cidrs", Detail: "at least one CIDR required"}}},
		{"three", []string{"10.0.0.0/24", "10.1.0.0/24", "fd00::/64"}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.cidrs", Detail: "may only hold up to 2 values"},
		}},
		{"not a CIDR", []string{"10.0.0.0"}, []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.cidrs[0]"}}},
		{"not canonical", []string{"fd00:0::/64"}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.cidrs[0]", Detail: `must be in canonical form ("fd00::/64")`},
		}},
		{"host bits set", []string{"10.0.0.1/24"}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.cidrs[0]", Detail: "must not have bits set beyond the prefix length"},
		}},
		{"two of one family", []string{"10.0.0.0/24", "10.1.0.0/24"}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.cidrs", Detail: "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateServiceCIDR(serviceCIDR(tc.cidrs...)), tc.want)
		})
	}
}

// Upstream shows its internal spec as the bad value of a list that is too
// long; the message must read the same.
func TestValidateServiceCIDRTooManyMessage(t *testing.T) {
	errs := validateServiceCIDR(serviceCIDR("10.0.0.0/24", "10.1.0.0/24", "fd00::/64"))
	want := `spec.cidrs: Invalid value: {"CIDRs":["10.0.0.0/24","10.1.0.0/24","fd00::/64"]}: may only hold up to 2 values`
	if len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("got %v\nwant %s", errs, want)
	}
}

func TestValidateServiceCIDRUpdate(t *testing.T) {
	const immutable = "field is immutable"
	tests := []struct {
		name     string
		old, new []string
		want     []wantErr
	}{
		{"unchanged", []string{"10.43.0.0/16"}, []string{"10.43.0.0/16"}, nil},
		{"changed", []string{"10.43.0.0/16"}, []string{"10.44.0.0/16"}, []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.cidrs[0]", Detail: immutable}}},
		{"to dual stack", []string{"10.43.0.0/16"}, []string{"10.43.0.0/16", "fd00::/64"}, nil},
		{"to dual stack, first changed", []string{"10.43.0.0/16"}, []string{"10.44.0.0/16", "fd00::/64"}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.cidrs[0]", Detail: immutable},
		}},
		{"second changed", []string{"10.43.0.0/16", "fd00::/64"}, []string{"10.43.0.0/16", "fd01::/64"}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.cidrs[1]", Detail: immutable},
		}},
		{"back to single stack", []string{"10.43.0.0/16", "fd00::/64"}, []string{"10.43.0.0/16"}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.cidrs", Detail: immutable},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateServiceCIDRUpdate(serviceCIDR(tc.new...), serviceCIDR(tc.old...)), tc.want)
		})
	}
}
