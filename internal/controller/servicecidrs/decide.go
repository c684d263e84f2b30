package servicecidrs

import (
	"net/netip"
	"slices"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/networking"
)

// Upstream's condition messages and grace period.
const (
	ReadyMessage       = "Kubernetes Service CIDR is ready"
	TerminatingMessage = "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"
	// DeletionGrace is how long a ServiceCIDR being deleted keeps its
	// finalizer after nothing blocks it, so that every allocator has seen
	// the deletion before its range can be reused.
	DeletionGrace = 10 * time.Second
)

// Plan is what a sync does to one ServiceCIDR.
type Plan struct {
	AddFinalizer    bool
	RemoveFinalizer bool
	// Condition, when set, is the Ready condition to apply.
	Condition *metav1.Condition
	// RequeueAfter, when positive, is when to look again.
	RequeueAfter time.Duration
}

// Decide is upstream's sync of one ServiceCIDR: a live one gets the
// finalizer and Ready=True; one being deleted loses the finalizer once no
// allocated address depends on it alone (after DeletionGrace), and is
// marked Ready=False, Terminating, while one does. all is every
// ServiceCIDR (sc among them), ips every IPAddress.
func Decide(sc *networkingv1.ServiceCIDR, all []*networkingv1.ServiceCIDR, ips []*networkingv1.IPAddress, now time.Time) Plan {
	if sc.DeletionTimestamp != nil {
		if !CanDelete(sc, all, ips) {
			return Plan{Condition: conditionIfChanged(sc, metav1.Condition{
				Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionFalse,
				Reason: networkingv1.ServiceCIDRReasonTerminating, Message: TerminatingMessage,
				LastTransitionTime: metav1.NewTime(now),
			})}
		}
		if wait := DeletionGrace - now.Sub(sc.DeletionTimestamp.Time); wait > 0 {
			return Plan{RequeueAfter: wait}
		}
		return Plan{RemoveFinalizer: slices.Contains(sc.Finalizers, networking.ServiceCIDRFinalizer)}
	}
	return Plan{
		AddFinalizer: !slices.Contains(sc.Finalizers, networking.ServiceCIDRFinalizer),
		Condition: conditionIfChanged(sc, metav1.Condition{
			Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue,
			Message: ReadyMessage, LastTransitionTime: metav1.NewTime(now),
		}),
	}
}

// conditionIfChanged is c unless sc's Ready condition already says the
// same (status, reason and message), as upstream compares.
func conditionIfChanged(sc *networkingv1.ServiceCIDR, c metav1.Condition) *metav1.Condition {
	cur := apimeta.FindStatusCondition(sc.Status.Conditions, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason && cur.Message == c.Message {
		return nil
	}
	return &c
}

// CanDelete is upstream's canDeleteCIDR: a ServiceCIDR another one
// contains may go at once; otherwise it may go when no address of the
// allocator is contained by it alone.
func CanDelete(sc *networkingv1.ServiceCIDR, all []*networkingv1.ServiceCIDR, ips []*networkingv1.IPAddress) bool {
	hasParent := true
	for _, c := range sc.Spec.CIDRs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			continue
		}
		if parents := containingPrefix(all, p); len(parents) == 0 || len(parents) == 1 && parents[0] == sc.Name {
			hasParent = false
		}
	}
	if hasParent {
		return true
	}
	for _, ip := range ips {
		if ip.Labels[networkingv1.LabelManagedBy] != networking.IPAllocatorManager {
			continue
		}
		addr, err := netip.ParseAddr(ip.Name)
		if err != nil {
			continue
		}
		if holders := Containing(all, addr); len(holders) == 1 && holders[0] == sc.Name {
			return false
		}
	}
	return true
}

// containingPrefix names the ServiceCIDRs with a CIDR that contains p.
func containingPrefix(all []*networkingv1.ServiceCIDR, p netip.Prefix) []string {
	var out []string
	for _, sc := range all {
		for _, c := range sc.Spec.CIDRs {
			if q, err := netip.ParsePrefix(c); err == nil && q.Overlaps(p) && q.Bits() <= p.Bits() {
				out = append(out, sc.Name)
			}
		}
	}
	return out
}

// Containing names the ServiceCIDRs that could have allocated addr: it is
// in one of their CIDRs and is neither the network address nor, for IPv4,
// the broadcast address, which allocators never hand out.
func Containing(all []*networkingv1.ServiceCIDR, addr netip.Addr) []string {
	var out []string
	for _, sc := range all {
		for _, c := range sc.Spec.CIDRs {
			if p, err := netip.ParsePrefix(c); err == nil && prefixAllocates(p, addr) {
				out = append(out, sc.Name)
			}
		}
	}
	return out
}

func prefixAllocates(p netip.Prefix, addr netip.Addr) bool {
	if !p.Contains(addr) || p.Masked().Addr() == addr {
		return false
	}
	if addr.Is4() {
		b := addr.As4()
		host := 32 - p.Bits()
		last := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		if mask := uint32(1)<<host - 1; last&mask == mask {
			return false
		}
	}
	return true
}
