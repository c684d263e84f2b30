package servicecidrs

import (
	"net/netip"
	"reflect"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/networking"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func cidr(name string, cidrs ...string) *networkingv1.ServiceCIDR {
	return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
}

func deleting(sc *networkingv1.ServiceCIDR, ago time.Duration) *networkingv1.ServiceCIDR {
	sc = sc.DeepCopy()
	sc.DeletionTimestamp = &metav1.Time{Time: now.Add(-ago)}
	sc.Finalizers = []string{networking.ServiceCIDRFinalizer}
	return sc
}

func ready(sc *networkingv1.ServiceCIDR) *networkingv1.ServiceCIDR {
	sc = sc.DeepCopy()
	sc.Finalizers = []string{networking.ServiceCIDRFinalizer}
	sc.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Message: ReadyMessage}}
	return sc
}

// allocated is an IPAddress of the cluster-IP allocator; foreign ones
// lack its label.
func allocated(ip string) *networkingv1.IPAddress {
	return &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: ip, Labels: map[string]string{networkingv1.LabelManagedBy: networking.IPAllocatorManager}}}
}

func foreign(ip string) *networkingv1.IPAddress {
	return &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: ip}}
}

func TestCanDelete(t *testing.T) {
	small, big := cidr("small", "10.0.0.0/24"), cidr("big", "10.0.0.0/16")
	twin := cidr("twin", "10.0.0.0/24")
	tests := []struct {
		name string
		sc   *networkingv1.ServiceCIDR
		all  []*networkingv1.ServiceCIDR
		ips  []*networkingv1.IPAddress
		want bool
	}{
		{"empty", small, []*networkingv1.ServiceCIDR{small}, nil, true},
		{"an address in it", small, []*networkingv1.ServiceCIDR{small}, []*networkingv1.IPAddress{allocated("10.0.0.10")}, false},
		{"someone else's address", small, []*networkingv1.ServiceCIDR{small}, []*networkingv1.IPAddress{foreign("10.0.0.10")}, true},
		{"an address elsewhere", small, []*networkingv1.ServiceCIDR{small}, []*networkingv1.IPAddress{allocated("10.1.0.10")}, true},
		{"its network and broadcast addresses are never allocated from it", small, []*networkingv1.ServiceCIDR{small},
			[]*networkingv1.IPAddress{allocated("10.0.0.0"), allocated("10.0.0.255")}, true},
		{"a larger one contains it", small, []*networkingv1.ServiceCIDR{small, big}, []*networkingv1.IPAddress{allocated("10.0.0.10")}, true},
		{"another of the same range", small, []*networkingv1.ServiceCIDR{small, twin}, []*networkingv1.IPAddress{allocated("10.0.0.10")}, true},
		{"the larger one holds an address outside the smaller", big, []*networkingv1.ServiceCIDR{small, big}, []*networkingv1.IPAddress{allocated("10.0.5.1")}, false},
		{"the larger one's addresses inside the smaller stay covered", big, []*networkingv1.ServiceCIDR{small, big}, []*networkingv1.IPAddress{allocated("10.0.0.10")}, true},
		{"dual stack", cidr("dual", "10.0.0.0/24", "fd00::/64"), []*networkingv1.ServiceCIDR{cidr("dual", "10.0.0.0/24", "fd00::/64")}, []*networkingv1.IPAddress{allocated("fd00::a")}, false},
	}
	for _, tc := range tests {
		if got := CanDelete(tc.sc, tc.all, tc.ips); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestContaining(t *testing.T) {
	all := []*networkingv1.ServiceCIDR{cidr("a", "10.0.0.0/24"), cidr("b", "10.0.0.0/16", "fd00::/64"), cidr("c", "10.0.0.8/31")}
	tests := map[string][]string{
		"10.0.0.10":  {"a", "b"},
		"10.0.0.0":   nil, // the network address of both
		"10.0.0.255": {"b"},
		"10.0.0.8":   {"a", "b"},
		"10.0.0.9":   {"a", "b"},
		"fd00::1":    {"b"},
		"fd00::":     nil,
		"10.1.0.1":   nil,
	}
	for ip, want := range tests {
		if got := Containing(all, netip.MustParseAddr(ip)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", ip, got, want)
		}
	}
}

func TestDecide(t *testing.T) {
	sc := cidr("extra", "10.0.0.0/24")
	readyTrue := &metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Message: ReadyMessage, LastTransitionTime: metav1.NewTime(now)}
	terminating := &metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Terminating", Message: TerminatingMessage, LastTransitionTime: metav1.NewTime(now)}
	inUse := []*networkingv1.IPAddress{allocated("10.0.0.10")}
	tests := []struct {
		name string
		sc   *networkingv1.ServiceCIDR
		ips  []*networkingv1.IPAddress
		want Plan
	}{
		{"new", sc, nil, Plan{AddFinalizer: true, Condition: readyTrue}},
		{"ready", ready(sc), nil, Plan{}},
		{"the default's own message is replaced", func() *networkingv1.ServiceCIDR {
			s := ready(sc)
			s.Status.Conditions[0].Message = "Kubernetes default Service CIDR is ready"
			return s
		}(), nil, Plan{Condition: readyTrue}},
		{"deleted while in use", deleting(ready(sc), time.Minute), inUse, Plan{Condition: terminating}},
		{"deleted while in use, already marked", func() *networkingv1.ServiceCIDR {
			s := deleting(sc, time.Minute)
			s.Status.Conditions = []metav1.Condition{*terminating}
			return s
		}(), inUse, Plan{}},
		{"deleted, free, within the grace period", deleting(ready(sc), 4*time.Second), nil, Plan{RequeueAfter: 6 * time.Second}},
		{"deleted, free, after the grace period", deleting(ready(sc), DeletionGrace), nil, Plan{RemoveFinalizer: true}},
	}
	for _, tc := range tests {
		got := Decide(tc.sc, []*networkingv1.ServiceCIDR{tc.sc}, tc.ips, now)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
