package allocator

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/registry/networking"
	"github.com/orca-project/orca/internal/storage"
)

// ipAddressGrace is how old an allocator's IPAddress must be before the
// repair deletes it for want of a service holding its address: a create
// writes the IPAddress before the service, and upstream waits out the
// API server's 60 s request timeout before calling it leaked.
const ipAddressGrace = 60 * time.Second

// ipFixOp is what the repair does to one address's IPAddress.
type ipFixOp int

const (
	ipCreate   ipFixOp = iota // the service's address has no IPAddress
	ipRecreate                // the IPAddress names another parent or lacks the allocator's labels
	ipDelete                  // the allocator's IPAddress outlived its service's hold on the address
)

func (o ipFixOp) String() string {
	return [...]string{"create", "recreate", "delete"}[o]
}

// ipFix is one change the repair makes. UID is the stored object's, so
// that a recreate or delete never removes an object written meanwhile.
type ipFix struct {
	Op      ipFixOp
	IP      string
	Service *corev1.Service // the parent, for create and recreate
	UID     types.UID
	Reason  string
}

// planIPAddresses decides how to make the IPAddresses agree with the
// services, as upstream's RepairIPAddress does: every address a service
// holds inside the range has an IPAddress of the allocator naming that
// service; the allocator's IPAddresses whose address no service holds go
// once they are older than the grace period (at once if they name no
// service at all). Others' IPAddresses are left alone unless a service
// holds their address. An address outside the range gets no IPAddress,
// but one naming a service that holds it is kept, as upstream keeps it.
// Two services holding one address keep the IPAddress of whichever it
// names. Services must be listed after the IPAddresses, so that a
// service created in between only costs a create that finds its object.
func planIPAddresses(svcs []*corev1.Service, addrs []*networkingv1.IPAddress, inRange func(netip.Addr) bool, now time.Time) (fixes []ipFix, duplicates []string) {
	holders := map[string][]*corev1.Service{}
	var ips []string
	for _, svc := range svcs {
		if !needsClusterIP(svc) {
			continue
		}
		for _, s := range svc.Spec.ClusterIPs {
			ip, err := netip.ParseAddr(s)
			if err != nil {
				continue
			}
			k := ip.String()
			if holders[k] == nil {
				ips = append(ips, k)
			}
			holders[k] = append(holders[k], svc)
		}
	}
	byName := map[string]*networkingv1.IPAddress{}
	for _, a := range addrs {
		byName[a.Name] = a
	}
	slices.Sort(ips)
	for _, k := range ips {
		hs := holders[k]
		if len(hs) > 1 {
			duplicates = append(duplicates, k)
		}
		cur := byName[k]
		if cur != nil {
			if i := slices.IndexFunc(hs, func(s *corev1.Service) bool { return refersTo(cur.Spec.ParentRef, s) }); i >= 0 {
				delete(byName, k)
				if !allocatorLabels(cur) && inRange(netip.MustParseAddr(k)) {
					fixes = append(fixes, ipFix{Op: ipRecreate, IP: k, Service: hs[i], UID: cur.UID, Reason: "lacks the allocator's labels"})
				}
				continue
			}
		}
		if !inRange(netip.MustParseAddr(k)) {
			continue
		}
		if cur == nil {
			fixes = append(fixes, ipFix{Op: ipCreate, IP: k, Service: hs[0], Reason: "the cluster IP is not allocated"})
			continue
		}
		delete(byName, k)
		fixes = append(fixes, ipFix{Op: ipRecreate, IP: k, Service: hs[0], UID: cur.UID, Reason: "names " + parentString(cur.Spec.ParentRef)})
	}
	var rest []string
	for k := range byName {
		rest = append(rest, k)
	}
	slices.Sort(rest)
	for _, k := range rest {
		cur := byName[k]
		if cur.Labels[networkingv1.LabelManagedBy] != networking.IPAllocatorManager {
			continue
		}
		ref := cur.Spec.ParentRef
		if ref == nil || ref.Group != "" || ref.Resource != "services" {
			fixes = append(fixes, ipFix{Op: ipDelete, IP: k, UID: cur.UID, Reason: "names no service"})
			continue
		}
		if now.Sub(cur.CreationTimestamp.Time) >= ipAddressGrace {
			fixes = append(fixes, ipFix{Op: ipDelete, IP: k, UID: cur.UID, Reason: "appears to have leaked: service " + ref.Namespace + "/" + ref.Name + " does not hold it"})
		}
	}
	return fixes, duplicates
}

// allocatorLabels reports whether an IPAddress carries the labels the
// allocator gives its own.
func allocatorLabels(a *networkingv1.IPAddress) bool {
	ip, err := netip.ParseAddr(a.Name)
	return err == nil && a.Labels[networkingv1.LabelManagedBy] == networking.IPAllocatorManager &&
		a.Labels[networkingv1.LabelIPAddressFamily] == string(ipFamilyOf(ip))
}

func parentString(ref *networkingv1.ParentReference) string {
	if ref == nil {
		return "no parent"
	}
	s := ref.Resource
	if ref.Group != "" {
		s += "." + ref.Group
	}
	if ref.Namespace != "" {
		s += "/" + ref.Namespace
	}
	return s + "/" + ref.Name
}

// repairIPAddresses applies planIPAddresses to the stored objects.
func (a *Services) repairIPAddresses(ctx context.Context) error {
	addrList, err := a.addrs.List(ctx, ipAddressesPrefix, ipAddressType, newIPAddressObject, storage.ListOptions{})
	if err != nil {
		return fmt.Errorf("repair IPAddresses: list: %w", err)
	}
	svcList, err := a.store.List(ctx, servicesPrefix, "services", func() runtime.Object { return &corev1.Service{} }, storage.ListOptions{})
	if err != nil {
		return fmt.Errorf("repair IPAddresses: list services: %w", err)
	}
	addrs := make([]*networkingv1.IPAddress, len(addrList.Items))
	for i, o := range addrList.Items {
		addrs[i] = o.(*networkingv1.IPAddress)
	}
	svcs := make([]*corev1.Service, len(svcList.Items))
	for i, o := range svcList.Items {
		svcs[i] = o.(*corev1.Service)
	}
	inRange := func(ip netip.Addr) bool { _, ok := a.IPs.Offset(ip); return ok }
	fixes, dups := planIPAddresses(svcs, addrs, inRange, time.Now())
	for _, ip := range dups {
		a.log.Warn("a cluster IP was assigned to multiple services; please recreate them", "ip", ip)
	}
	var errs []error
	for _, f := range fixes {
		a.log.Info("repairing an IPAddress", "op", f.Op.String(), "ip", f.IP, "reason", f.Reason)
		if err := a.applyIPFix(ctx, f); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (a *Services) applyIPFix(ctx context.Context, f ipFix) error {
	if f.Op != ipCreate {
		uid := f.UID
		if err := a.deleteIPAddress(ctx, f.IP, func(cur *networkingv1.IPAddress) bool { return cur.UID == uid }); err != nil {
			return err
		}
	}
	if f.Op == ipDelete {
		return nil
	}
	_, err := a.createIPAddress(ctx, netip.MustParseAddr(f.IP), f.Service)
	if errors.Is(err, errIPAddressTaken) {
		// Written since the list: the next round looks at it.
		return nil
	}
	return err
}
