package allocator

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/registry/networking"
	"github.com/orca-project/orca/internal/storage"
)

// Every cluster IP a service holds has an IPAddress object named by the
// address, as upstream's allocator keeps them: clients and controllers
// (the ServiceCIDR finalizer among them) see which addresses are taken
// and by whom. The bitmap stays the lock that makes allocation safe and
// cheap; the objects follow it within the same write (created before the
// service is stored, deleted when it gives the address up), and the
// repair makes them agree after a crash. An IPAddress someone else
// created holds its address too: the allocator never hands it out.

// ipAddressesPrefix is where the API server keeps IPAddresses.
const ipAddressesPrefix = "/registry/" + networkingv1.GroupName + "/ipaddresses/"

const ipAddressType = "ipaddresses." + networkingv1.GroupName

// errIPAddressTaken says an IPAddress object already holds the address.
var errIPAddressTaken = errors.New("an IPAddress object already holds the address")

func newIPAddressObject() runtime.Object { return &networkingv1.IPAddress{} }

// serviceRef is the parent reference of a service's IPAddress.
func serviceRef(svc *corev1.Service) *networkingv1.ParentReference {
	return &networkingv1.ParentReference{Resource: "services", Namespace: svc.Namespace, Name: svc.Name}
}

// ipFamilyOf is the ip-family label of an address.
func ipFamilyOf(ip netip.Addr) corev1.IPFamily {
	if ip.Unmap().Is4() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// newIPAddress is the object upstream's allocator writes for a service's
// address, with the labels its repair and the ServiceCIDR controller
// select on.
func newIPAddress(ip netip.Addr, svc *corev1.Service, now time.Time) *networkingv1.IPAddress {
	obj := &networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{
			Name:              ip.String(),
			UID:               types.UID(uuid.NewString()),
			CreationTimestamp: metav1.NewTime(now.Truncate(time.Second)),
			Labels: map[string]string{
				networkingv1.LabelIPAddressFamily: string(ipFamilyOf(ip)),
				networkingv1.LabelManagedBy:       networking.IPAllocatorManager,
			},
		},
		Spec: networkingv1.IPAddressSpec{ParentRef: serviceRef(svc)},
	}
	storage.SetKind(obj, networkingv1.SchemeGroupVersion.WithKind("IPAddress"))
	return obj
}

// refersTo reports whether ref names svc.
func refersTo(ref *networkingv1.ParentReference, svc *corev1.Service) bool {
	return ref != nil && ref.Group == "" && ref.Resource == "services" && ref.Namespace == svc.Namespace && ref.Name == svc.Name
}

// createIPAddress writes svc's IPAddress for ip and returns its UID.
func (a *Services) createIPAddress(ctx context.Context, ip netip.Addr, svc *corev1.Service) (types.UID, error) {
	obj := newIPAddress(ip, svc, time.Now())
	err := a.addrs.Create(ctx, ipAddressesPrefix+obj.Name, ipAddressType, obj)
	if errors.Is(err, storage.ErrAlreadyExists) {
		return "", errIPAddressTaken
	}
	if err != nil {
		return "", fmt.Errorf("create IPAddress %s: %w", obj.Name, err)
	}
	return obj.UID, nil
}

// errNotOurs stops a deletion whose object is no longer the one meant.
var errNotOurs = errors.New("IPAddress belongs to another owner")

// deleteIPAddress deletes the IPAddress of ip if keep accepts it; a
// missing object, or one keep refuses, is left as it is.
func (a *Services) deleteIPAddress(ctx context.Context, ip string, keep func(*networkingv1.IPAddress) bool) error {
	_, err := a.addrs.Delete(ctx, ipAddressesPrefix+ip, ipAddressType, newIPAddressObject, func(cur runtime.Object) error {
		if !keep(cur.(*networkingv1.IPAddress)) {
			return errNotOurs
		}
		return nil
	})
	if err == nil || errors.Is(err, storage.ErrNotFound) || errors.Is(err, errNotOurs) {
		return nil
	}
	return fmt.Errorf("delete IPAddress %s: %w", ip, err)
}

// heldAddress is an IPAddress a write created, deleted again if the write
// is not stored.
type heldAddress struct {
	ip  netip.Addr
	uid types.UID
}

// releaseIPAddresses deletes the IPAddresses a write created (by UID) and
// those of the addresses svc gave up (by parent), before their offsets
// are freed: an offset free in the bitmap while its object lingers would
// only make the next allocation skip it, the other order could hand the
// address out twice.
func (a *Services) releaseIPAddresses(ctx context.Context, created []heldAddress, freed []int, svc *corev1.Service) {
	for _, h := range created {
		uid := h.uid
		if err := a.deleteIPAddress(ctx, h.ip.String(), func(cur *networkingv1.IPAddress) bool { return cur.UID == uid }); err != nil {
			a.log.Warn("delete the IPAddress of a write that was not stored; the repair loop will", "ip", h.ip, "err", err)
		}
	}
	if svc == nil {
		return
	}
	for _, off := range freed {
		ip := a.IPs.Addr(off)
		if err := a.deleteIPAddress(ctx, ip.String(), func(cur *networkingv1.IPAddress) bool { return refersTo(cur.Spec.ParentRef, svc) }); err != nil {
			a.log.Warn("delete the IPAddress of a released cluster IP; the repair loop will", "ip", ip, "service", svc.Namespace+"/"+svc.Name, "err", err)
		}
	}
}
