package allocator

import (
	"fmt"
	"net/netip"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var repairNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func svcWithIP(name, ip string) *corev1.Service {
	return service(name, corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = ip, []string{ip} })
}

// addr is an IPAddress of the allocator for svc's namespace and name,
// created age ago; mutate changes it further.
func addr(ip, svcName string, age time.Duration, mutate ...func(*networkingv1.IPAddress)) *networkingv1.IPAddress {
	a := newIPAddress(netip.MustParseAddr(ip), service(svcName, ""), repairNow.Add(-age))
	a.UID = types.UID("uid-" + ip)
	for _, m := range mutate {
		m(a)
	}
	return a
}

func foreign(a *networkingv1.IPAddress) {
	a.Labels = map[string]string{"type": "broadcast"}
	a.Spec.ParentRef = &networkingv1.ParentReference{Group: "mygroup", Resource: "myresources", Namespace: "foo", Name: "bar"}
}

func TestPlanIPAddresses(t *testing.T) {
	inRange := func(ip netip.Addr) bool { return netip.MustParsePrefix("10.43.0.0/16").Contains(ip) }
	a, b := svcWithIP("a", "10.43.0.10"), svcWithIP("b", "10.43.0.11")
	fix := func(op ipFixOp, ip string, svc *corev1.Service, uid string) string {
		name := ""
		if svc != nil {
			name = svc.Name
		}
		return fmt.Sprintf("%s %s %s %s", op, ip, name, uid)
	}
	tests := []struct {
		name  string
		svcs  []*corev1.Service
		addrs []*networkingv1.IPAddress
		want  []string
		dups  []string
	}{{
		name:  "in agreement",
		svcs:  []*corev1.Service{a, b},
		addrs: []*networkingv1.IPAddress{addr("10.43.0.10", "a", time.Hour), addr("10.43.0.11", "b", time.Hour)},
	}, {
		name:  "a service's address has none",
		svcs:  []*corev1.Service{a, b},
		addrs: []*networkingv1.IPAddress{addr("10.43.0.11", "b", time.Hour)},
		want:  []string{fix(ipCreate, "10.43.0.10", a, "")},
	}, {
		name: "services without addresses of their own",
		svcs: []*corev1.Service{
			service("headless", corev1.ServiceTypeClusterIP, func(s *corev1.Service) {
				s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
			}),
			service("ext", corev1.ServiceTypeExternalName, func(s *corev1.Service) { s.Spec.ExternalName = "example.com" }),
		},
	}, {
		name:  "an address outside the range gets none, but keeps the one it has",
		svcs:  []*corev1.Service{svcWithIP("old", "10.99.0.1"), svcWithIP("older", "10.99.0.2")},
		addrs: []*networkingv1.IPAddress{addr("10.99.0.1", "old", time.Hour)},
	}, {
		name:  "names another service",
		svcs:  []*corev1.Service{a},
		addrs: []*networkingv1.IPAddress{addr("10.43.0.10", "gone", time.Second)},
		want:  []string{fix(ipRecreate, "10.43.0.10", a, "uid-10.43.0.10")},
	}, {
		name:  "someone else's object on a service's address",
		svcs:  []*corev1.Service{a},
		addrs: []*networkingv1.IPAddress{addr("10.43.0.10", "a", time.Hour, foreign)},
		want:  []string{fix(ipRecreate, "10.43.0.10", a, "uid-10.43.0.10")},
	}, {
		name: "without the allocator's labels",
		svcs: []*corev1.Service{a, b},
		addrs: []*networkingv1.IPAddress{
			addr("10.43.0.10", "a", time.Hour, func(x *networkingv1.IPAddress) { x.Labels = nil }),
			addr("10.43.0.11", "b", time.Hour, func(x *networkingv1.IPAddress) { x.Labels[networkingv1.LabelIPAddressFamily] = "IPv6" }),
		},
		want: []string{fix(ipRecreate, "10.43.0.10", a, "uid-10.43.0.10"), fix(ipRecreate, "10.43.0.11", b, "uid-10.43.0.11")},
	}, {
		name: "leaked, past the grace period",
		addrs: []*networkingv1.IPAddress{
			addr("10.43.0.20", "gone", ipAddressGrace),
			addr("10.43.0.21", "a", 2*time.Minute), // a holds another address
		},
		svcs: []*corev1.Service{a},
		want: []string{fix(ipCreate, "10.43.0.10", a, ""), fix(ipDelete, "10.43.0.20", nil, "uid-10.43.0.20"), fix(ipDelete, "10.43.0.21", nil, "uid-10.43.0.21")},
	}, {
		name:  "within the grace period: a create in flight",
		addrs: []*networkingv1.IPAddress{addr("10.43.0.20", "new", 59*time.Second)},
	}, {
		name: "the allocator's object naming no service goes at once",
		addrs: []*networkingv1.IPAddress{addr("10.43.0.20", "x", 0, func(x *networkingv1.IPAddress) {
			x.Spec.ParentRef = &networkingv1.ParentReference{Group: "gateway.networking.k8s.io", Resource: "gateways", Name: "gw"}
		})},
		want: []string{fix(ipDelete, "10.43.0.20", nil, "uid-10.43.0.20")},
	}, {
		name: "someone else's objects are theirs",
		addrs: []*networkingv1.IPAddress{
			addr("255.255.255.255", "x", time.Hour, foreign),
			addr("fe80::42:1dff:fe84:f9e2", "x", time.Hour, foreign),
			addr("10.43.0.30", "x", time.Hour, func(x *networkingv1.IPAddress) { delete(x.Labels, networkingv1.LabelManagedBy) }),
		},
	}, {
		name:  "one address, two services: the named one keeps it",
		svcs:  []*corev1.Service{a, svcWithIP("twin", "10.43.0.10")},
		addrs: []*networkingv1.IPAddress{addr("10.43.0.10", "twin", time.Hour)},
		dups:  []string{"10.43.0.10"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fixes, dups := planIPAddresses(tc.svcs, tc.addrs, inRange, repairNow)
			var got []string
			for _, f := range fixes {
				got = append(got, fix(f.Op, f.IP, f.Service, string(f.UID)))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("fixes:\n%q\nwant\n%q", got, tc.want)
			}
			if !reflect.DeepEqual(dups, tc.dups) {
				t.Errorf("duplicates %q, want %q", dups, tc.dups)
			}
		})
	}
}

func TestNewIPAddress(t *testing.T) {
	got := newIPAddress(netip.MustParseAddr("10.43.0.1"), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"}}, repairNow.Add(500*time.Millisecond))
	if got.Name != "10.43.0.1" || got.UID == "" || !got.CreationTimestamp.Time.Equal(repairNow) ||
		!reflect.DeepEqual(got.Labels, map[string]string{"ipaddress.kubernetes.io/ip-family": "IPv4", "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}) ||
		!reflect.DeepEqual(got.Spec.ParentRef, &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "kubernetes"}) ||
		got.APIVersion != "networking.k8s.io/v1" || got.Kind != "IPAddress" {
		t.Errorf("%+v", got)
	}
}
