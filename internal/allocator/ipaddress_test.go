package allocator

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/orca-project/orca/internal/storage"
)

// storedIPAddress reads the IPAddress of ip, nil if there is none.
func storedIPAddress(t *testing.T, ip string) *networkingv1.IPAddress {
	t.Helper()
	obj, err := store.Get(context.Background(), ipAddressesPrefix+ip, ipAddressType, newIPAddressObject)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*networkingv1.IPAddress)
}

func wantIPAddressOf(t *testing.T, svc *corev1.Service) {
	t.Helper()
	got := storedIPAddress(t, svc.Spec.ClusterIP)
	if got == nil {
		t.Fatalf("no IPAddress for %s's %s", svc.Name, svc.Spec.ClusterIP)
	}
	if !refersTo(got.Spec.ParentRef, svc) || !allocatorLabels(got) {
		t.Fatalf("IPAddress %s: labels %v parent %+v, want the allocator's naming %s", got.Name, got.Labels, got.Spec.ParentRef, svc.Name)
	}
}

func wantNoIPAddress(t *testing.T, ip string) {
	t.Helper()
	if got := storedIPAddress(t, ip); got != nil {
		t.Fatalf("IPAddress %s still there, parent %+v", ip, got.Spec.ParentRef)
	}
}

// putForeign stores an IPAddress someone else owns.
func putForeign(t *testing.T, ip string, created time.Time) {
	t.Helper()
	obj := newIPAddress(netip.MustParseAddr(ip), service("x", ""), created)
	foreign(obj)
	if err := store.Create(context.Background(), ipAddressesPrefix+ip, ipAddressType, obj); err != nil {
		t.Fatal(err)
	}
}

func TestServicesIPAddresses(t *testing.T) {
	ctx := context.Background()
	// A /29: six addresses, no static band.
	a := newTestServices(t, "10.43.0.0/29", "30000-30099")

	web := service("web", corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.ClusterIP = "10.43.0.1" })
	if err := create(t, a, web); err != nil {
		t.Fatal(err)
	}
	wantIPAddressOf(t, web)

	// A create that fails in storage deletes the IPAddress it wrote.
	again := service("web", corev1.ServiceTypeClusterIP)
	if err := create(t, a, again); !errors.Is(err, storage.ErrAlreadyExists) {
		t.Fatalf("second create of web: %v", err)
	}
	wantNoIPAddress(t, again.Spec.ClusterIP)
	wantIPAddressOf(t, web)

	// Someone else's IPAddress holds its address: asked for, it is taken,
	// and the bitmap keeps nothing of the attempt.
	putForeign(t, "10.43.0.3", time.Now())
	taken := service("taken", corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.ClusterIP = "10.43.0.3" })
	wantInvalid(t, create(t, a, taken), `spec.clusterIPs: Invalid value: ["10.43.0.3"]: failed to allocate IP 10.43.0.3: provided IP is already allocated`)
	if ips, _, _ := a.ipRange.Snapshot(ctx); ips.Has(2) {
		t.Error("the refused address stays taken in the bitmap")
	}

	// Dynamic choices pass over such addresses until the range is full.
	for _, ip := range []string{"10.43.0.2", "10.43.0.4", "10.43.0.5"} {
		putForeign(t, ip, time.Now())
	}
	last := service("last", corev1.ServiceTypeClusterIP)
	if err := create(t, a, last); err != nil {
		t.Fatal(err)
	}
	if last.Spec.ClusterIP != "10.43.0.6" {
		t.Fatalf("last got %s, want the only address without an IPAddress, 10.43.0.6", last.Spec.ClusterIP)
	}
	wantIPAddressOf(t, last)
	full := service("full", corev1.ServiceTypeClusterIP)
	if err := create(t, a, full); err == nil || !strings.Contains(err.Error(), "failed to allocate a serviceIP: range is full") {
		t.Fatalf("create in a range whose addresses are all held: %v", err)
	}
	if ips, _, _ := a.ipRange.Snapshot(ctx); ips.Used() != 2 {
		t.Errorf("%d offsets taken, want 2 (web, last): passed-over addresses are returned", ips.Used())
	}

	// A service giving its address up deletes its IPAddress once stored.
	ext := last.DeepCopy()
	ext.Spec.Type, ext.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
	ext.Spec.ClusterIP, ext.Spec.ClusterIPs = "", nil
	done, err := a.Allocate(ctx, ext, last, false)
	if err != nil {
		t.Fatal(err)
	}
	wantIPAddressOf(t, last)
	done(true)
	wantNoIPAddress(t, last.Spec.ClusterIP)

	// Deletion deletes it, but never someone else's object on the address.
	a.Release(ctx, web)
	wantNoIPAddress(t, web.Spec.ClusterIP)
	putForeign(t, web.Spec.ClusterIP, time.Now())
	a.Release(ctx, web)
	if storedIPAddress(t, web.Spec.ClusterIP) == nil {
		t.Error("releasing a service deleted another owner's IPAddress")
	}
}

func TestServicesRepairIPAddresses(t *testing.T) {
	ctx := context.Background()
	a := newTestServices(t, "10.43.0.0/24", "30000-30099")
	kept := service("kept", corev1.ServiceTypeClusterIP)
	if err := create(t, a, kept); err != nil {
		t.Fatal(err)
	}
	// Lost, as after a restore from a backup taken before it was written.
	if _, err := store.Delete(ctx, ipAddressesPrefix+kept.Spec.ClusterIP, ipAddressType, newIPAddressObject, nil); err != nil {
		t.Fatal(err)
	}
	// A crash between writing an IPAddress and the service, long ago and
	// just now.
	old := newIPAddress(netip.MustParseAddr("10.43.0.200"), service("crashed", ""), time.Now().Add(-time.Hour))
	young := newIPAddress(netip.MustParseAddr("10.43.0.201"), service("inflight", ""), time.Now())
	for _, obj := range []*networkingv1.IPAddress{old, young} {
		if err := store.Create(ctx, ipAddressesPrefix+obj.Name, ipAddressType, obj); err != nil {
			t.Fatal(err)
		}
	}
	putForeign(t, "10.43.0.202", time.Now().Add(-time.Hour))

	if err := a.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	wantIPAddressOf(t, kept)
	wantNoIPAddress(t, "10.43.0.200")
	if storedIPAddress(t, "10.43.0.201") == nil || storedIPAddress(t, "10.43.0.202") == nil {
		t.Error("repair deleted a young IPAddress or someone else's")
	}
}
