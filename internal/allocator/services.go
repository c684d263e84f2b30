package allocator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/storage"
)

// Services allocates cluster IPs and node ports to services, with
// upstream's rules and messages. It implements apiserver.Allocator.
type Services struct {
	IPs      IPRange
	Ports    PortRange
	ipRange  *Range
	ptRange  *Range
	store    *storage.Store
	addrs    *storage.Store // IPAddress objects, with the API server's transformer for them
	log      *slog.Logger
	repairMu sync.Mutex
	leaks    map[string]map[int]int // per range key: offset -> repairs that saw it leaked
}

// Option configures a Services allocator.
type Option func(*Services)

// WithIPAddressStore writes IPAddress objects through st rather than the
// ranges' store: the API server reads them back, so they must pass
// through the same encryption-at-rest transformer as its own writes.
func WithIPAddressStore(st *storage.Store) Option {
	return func(a *Services) { a.addrs = st }
}

// NewServices returns the allocator for a service CIDR and a node port
// range kept in store. Init must run before it serves.
func NewServices(store *storage.Store, ips IPRange, ports PortRange, log *slog.Logger, opts ...Option) *Services {
	if log == nil {
		log = slog.Default()
	}
	a := &Services{
		IPs: ips, Ports: ports, store: store, addrs: store, log: log,
		ipRange: NewRange(store, ServiceIPsKey, ips.String(), ips.Size(), ips.StaticBand()),
		ptRange: NewRange(store, ServiceNodePortsKey, ports.String(), ports.Size, ports.StaticBand()),
		leaks:   map[string]map[int]int{},
	}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Init creates or adopts the persisted ranges and marks what the stored
// services hold, so that a cluster whose services predate the ranges (or
// whose range flag changed) starts consistent.
func (a *Services) Init(ctx context.Context) error {
	if err := a.ipRange.Init(ctx); err != nil {
		return err
	}
	if err := a.ptRange.Init(ctx); err != nil {
		return err
	}
	return a.Repair(ctx)
}

// FirstIP is the first address of the service CIDR, which upstream gives
// to the `kubernetes` service.
func (a *Services) FirstIP() netip.Addr { return a.IPs.Addr(0) }

// txn is what one write allocated and what it will free once stored.
type txn struct {
	svc                *corev1.Service // whose IPAddresses freeIPs delete
	ips, ports         []int
	addrs              []heldAddress // created for ips
	freeIPs, freePorts []int
}

var (
	clusterIPsPath = field.NewPath("spec", "clusterIPs")
	portsPath      = field.NewPath("spec", "ports")
	hcPath         = field.NewPath("spec", "healthCheckNodePort")
)

// Allocate implements apiserver.Allocator for services.
func (a *Services) Allocate(ctx context.Context, obj, old runtime.Object, dryRun bool) (func(bool), error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, nil
	}
	prev, _ := old.(*corev1.Service)
	if err := a.initIPFamilies(svc); err != nil {
		return nil, err
	}
	t := &txn{svc: svc}
	if err := a.allocClusterIP(ctx, svc, prev, dryRun, t); err != nil {
		return nil, err
	}
	if err := a.allocNodePorts(ctx, svc, prev, dryRun, t); err != nil {
		a.settle(ctx, t, false)
		return nil, err
	}
	if dryRun {
		return nil, nil
	}
	return func(stored bool) { a.settle(ctx, t, stored) }, nil
}

// settle frees what the write no longer needs: the old values when it was
// stored, the new ones when it was not. A failure here only leaks until
// the next repair, so it is logged rather than returned.
func (a *Services) settle(ctx context.Context, t *txn, stored bool) {
	ctx = context.WithoutCancel(ctx)
	ips, ports := t.ips, t.ports
	if stored {
		ips, ports = t.freeIPs, t.freePorts
		a.releaseIPAddresses(ctx, nil, ips, t.svc)
	} else {
		a.releaseIPAddresses(ctx, t.addrs, nil, nil)
	}
	if err := a.ipRange.Release(ctx, ips); err != nil {
		a.log.Warn("release service IPs; the repair loop will", "offsets", ips, "err", err)
	}
	if err := a.ptRange.Release(ctx, ports); err != nil {
		a.log.Warn("release node ports; the repair loop will", "offsets", ports, "err", err)
	}
}

// Release implements apiserver.Allocator: a deleted service's values are free.
func (a *Services) Release(ctx context.Context, obj runtime.Object) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return
	}
	a.settle(ctx, &txn{svc: svc, freeIPs: a.ipOffsets(svc), freePorts: a.portOffsets(svc)}, true)
}

func needsClusterIP(svc *corev1.Service) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.ClusterIP != corev1.ClusterIPNone
}

func hasNodePorts(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
}

func shouldAllocateNodePorts(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

func needsHealthCheckNodePort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// ipOffsets are the offsets of the range a service holds.
func (a *Services) ipOffsets(svc *corev1.Service) []int {
	if svc == nil || !needsClusterIP(svc) {
		return nil
	}
	var out []int
	for _, s := range svc.Spec.ClusterIPs {
		if ip, err := netip.ParseAddr(s); err == nil {
			if off, ok := a.IPs.Offset(ip); ok {
				out = append(out, off)
			}
		}
	}
	return out
}

// portOffsets are the offsets of the node port range a service holds.
func (a *Services) portOffsets(svc *corev1.Service) []int {
	if svc == nil || !hasNodePorts(svc) {
		return nil
	}
	var out []int
	seen := map[int]bool{}
	add := func(p int32) {
		if off, ok := a.Ports.Offset(int(p)); ok && p != 0 && !seen[off] {
			seen[off] = true
			out = append(out, off)
		}
	}
	for _, p := range svc.Spec.Ports {
		add(p.NodePort)
	}
	if needsHealthCheckNodePort(svc) {
		add(svc.Spec.HealthCheckNodePort)
	}
	return out
}

// initIPFamilies sets ipFamilies and ipFamilyPolicy as upstream does on a
// single-stack IPv4 cluster.
func (a *Services) initIPFamilies(svc *corev1.Service) error {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	spec := &svc.Spec
	headlessSelectorless := spec.ClusterIP == corev1.ClusterIPNone && len(spec.Selector) == 0
	if spec.IPFamilyPolicy == nil {
		p := corev1.IPFamilyPolicySingleStack
		// Such a service needs no address from a range, so it may list
		// endpoints of both families even on a single-stack cluster.
		if headlessSelectorless && len(spec.IPFamilies) != 1 {
			p = corev1.IPFamilyPolicyRequireDualStack
		}
		spec.IPFamilyPolicy = &p
	}
	policy := *spec.IPFamilyPolicy
	if headlessSelectorless {
		if len(spec.IPFamilies) == 0 {
			spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		}
		if policy == corev1.IPFamilyPolicyRequireDualStack && len(spec.IPFamilies) == 1 {
			other := corev1.IPv6Protocol
			if spec.IPFamilies[0] == corev1.IPv6Protocol {
				other = corev1.IPv4Protocol
			}
			spec.IPFamilies = append(spec.IPFamilies, other)
		}
		return nil
	}
	if policy == corev1.IPFamilyPolicyRequireDualStack {
		return invalid(svc, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), policy, "this cluster is not configured for dual-stack services"))
	}
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if policy == corev1.IPFamilyPolicyPreferDualStack && len(spec.IPFamilies) > 1 {
		spec.IPFamilies = spec.IPFamilies[:1]
	}
	for i, f := range spec.IPFamilies {
		if f != corev1.IPv4Protocol {
			return invalid(svc, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), f, "not configured on this cluster"))
		}
	}
	if len(spec.IPFamilies) > 1 {
		return invalid(svc, field.Invalid(field.NewPath("spec", "ipFamilies"), spec.IPFamilies, "when multiple IP families are specified, IP family policy must be PreferDualStack or RequireDualStack"))
	}
	return nil
}

func invalid(svc *corev1.Service, errs ...*field.Error) error {
	return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, errs)
}

// allocClusterIP gives the service its address: the one it asked for if
// free, else the next free one; an update keeps the address it has.
func (a *Services) allocClusterIP(ctx context.Context, svc, prev *corev1.Service, dry bool, t *txn) error {
	held := a.ipOffsets(prev)
	if !needsClusterIP(svc) {
		t.freeIPs = held
		return nil
	}
	if prev != nil && needsClusterIP(prev) && svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP == prev.Spec.ClusterIP {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
		return nil
	}
	t.freeIPs = held
	if svc.Spec.ClusterIP == "" {
		return a.allocNextClusterIP(ctx, svc, dry, t)
	}
	ipFail := func(msg string) error {
		return invalid(svc, field.Invalid(clusterIPsPath, svc.Spec.ClusterIPs, fmt.Sprintf("failed to allocate IP %s: %s", svc.Spec.ClusterIP, msg)))
	}
	ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil {
		return ipFail(err.Error())
	}
	off, ok := a.IPs.Offset(ip)
	if !ok {
		return ipFail(fmt.Sprintf("the provided IP (%s) is not in the valid range. The range of valid IPs is %s", ip, a.IPs))
	}
	if _, err := a.ipRange.Reserve(ctx, []int{off}, 0, dry); err != nil {
		if errors.Is(err, ErrAllocated) {
			return ipFail("provided IP is already allocated")
		}
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate IP %s: %w", ip, err))
	}
	svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	if dry {
		return nil
	}
	uid, err := a.createIPAddress(ctx, ip, svc)
	if err != nil {
		a.releaseOffsets(ctx, []int{off})
		if errors.Is(err, errIPAddressTaken) {
			return ipFail("provided IP is already allocated")
		}
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate IP %s: %w", ip, err))
	}
	t.ips, t.addrs = []int{off}, []heldAddress{{ip: ip, uid: uid}}
	return nil
}

// allocNextClusterIP gives the service the next free address. One that
// an IPAddress object already holds is passed over and kept reserved
// until the choice is made, so the bitmap cannot offer it again; it is
// then returned, since nothing of this allocator holds it.
func (a *Services) allocNextClusterIP(ctx context.Context, svc *corev1.Service, dry bool, t *txn) error {
	var skipped []int
	defer func() { a.releaseOffsets(ctx, skipped) }()
	for {
		offs, err := a.ipRange.Reserve(ctx, nil, 1, dry)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: %w", err))
		}
		ip := a.IPs.Addr(offs[0])
		if !dry {
			uid, err := a.createIPAddress(ctx, ip, svc)
			if errors.Is(err, errIPAddressTaken) {
				skipped = append(skipped, offs[0])
				continue
			}
			if err != nil {
				a.releaseOffsets(ctx, offs)
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: %w", err))
			}
			t.ips, t.addrs = offs, []heldAddress{{ip: ip, uid: uid}}
		}
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip.String(), []string{ip.String()}
		return nil
	}
}

// releaseOffsets returns service IP offsets; a failure only leaks them
// until the repair frees them.
func (a *Services) releaseOffsets(ctx context.Context, offs []int) {
	if err := a.ipRange.Release(context.WithoutCancel(ctx), offs); err != nil {
		a.log.Warn("release service IPs; the repair loop will", "offsets", offs, "err", err)
	}
}

// portWant is one node port the service needs: a specific one (value set)
// or the next free one, written back through set.
type portWant struct {
	path  *field.Path
	value int32
	set   []func(int32)
}

// allocNodePorts gives every port of a NodePort or LoadBalancer service a
// node port, and the health check port where one is needed. Ports the
// service already holds stay; ports it no longer holds are freed once the
// write is stored. A port number exposed over two protocols shares one
// node port, as upstream does.
func (a *Services) allocNodePorts(ctx context.Context, svc, prev *corev1.Service, dry bool, t *txn) error {
	held := map[int32]bool{}
	for _, off := range a.portOffsets(prev) {
		held[int32(a.Ports.Base+off)] = true
	}
	keep := map[int32]bool{}
	var specific, next []*portWant
	wanted := map[int32]bool{}
	byPort := map[int32]*portWant{}
	want := func(path *field.Path, v int32, set func(int32)) error {
		if v != 0 {
			if held[v] {
				keep[v] = true
				return nil
			}
			if wanted[v] {
				return nil
			}
			if _, ok := a.Ports.Offset(int(v)); !ok {
				return invalid(svc, field.Invalid(path, v, fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %s", a.Ports)))
			}
			wanted[v] = true
			specific = append(specific, &portWant{path: path, value: v})
			return nil
		}
		w := &portWant{path: path, set: []func(int32){set}}
		next = append(next, w)
		return nil
	}
	if hasNodePorts(svc) {
		alloc := shouldAllocateNodePorts(svc)
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			if sp.NodePort == 0 {
				if !alloc {
					continue
				}
				if w := byPort[sp.Port]; w != nil {
					w.set = append(w.set, func(v int32) { sp.NodePort = v })
					continue
				}
			}
			if err := want(portsPath.Index(i).Child("nodePort"), sp.NodePort, func(v int32) { sp.NodePort = v }); err != nil {
				return err
			}
			if sp.NodePort == 0 {
				byPort[sp.Port] = next[len(next)-1]
			}
		}
		if needsHealthCheckNodePort(svc) {
			if err := want(hcPath, svc.Spec.HealthCheckNodePort, func(v int32) { svc.Spec.HealthCheckNodePort = v }); err != nil {
				return err
			}
		}
	}
	for v := range held {
		if !keep[v] {
			off, _ := a.Ports.Offset(int(v))
			t.freePorts = append(t.freePorts, off)
		}
	}
	if len(specific) == 0 && len(next) == 0 {
		return nil
	}
	offs := make([]int, len(specific))
	for i, w := range specific {
		offs[i], _ = a.Ports.Offset(int(w.value))
	}
	chosen, err := a.ptRange.Reserve(ctx, offs, len(next), dry)
	if err != nil {
		var se *SpecificError
		if errors.As(err, &se) && errors.Is(err, ErrAllocated) {
			w := specific[se.Index]
			return invalid(svc, field.Invalid(w.path, w.value, "provided port is already allocated"))
		}
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
	}
	for i, w := range next {
		for _, set := range w.set {
			set(int32(a.Ports.Base + chosen[i]))
		}
	}
	if !dry {
		t.ports = append(offs, chosen...)
	}
	return nil
}
