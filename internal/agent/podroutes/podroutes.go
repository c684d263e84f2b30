// Package podroutes keeps a node's routes to the rest of the pod network,
// host-gateway style: every other node's pod range via that node's
// InternalIP. Beneath those it keeps an unreachable route for the whole
// cluster CIDR, so that a pod address no node owns is refused on the node
// instead of following the default route off the machine, and sends the
// service range to a dummy device, so that a service address no proxy rule
// claims is dropped on the node too (while local connections to service
// addresses still find a route for the proxy's DNAT to rewrite).
package podroutes

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/orca-project/orca/internal/nodekind"
)

// Proto marks the routes this package owns (a private routing protocol
// number), so that it never touches anyone else's.
const Proto = "199"

// ServiceDevice is the dummy interface that swallows unclaimed service
// traffic.
const ServiceDevice = "orca-svc"

// Route is one route the node should have.
type Route struct {
	Dst string
	// Via is the gateway; empty with Type "unreachable", or with Dev set.
	Via  string
	Dev  string
	Type string // "" (unicast) or "unreachable"
}

func (r Route) args() []string {
	var a []string
	if r.Type != "" {
		a = append(a, r.Type)
	}
	a = append(a, r.Dst)
	if r.Via != "" {
		a = append(a, "via", r.Via)
	}
	if r.Dev != "" {
		a = append(a, "dev", r.Dev)
	}
	return append(a, "proto", Proto)
}

// Desired is the route set of node self, given every Node. The node's own
// pod range goes to bridge: the kernel adds that route when the bridge
// gets its address, but not while another route to the range is in its
// way (one a cluster that gave the range to another node left behind), and
// never again once it is gone, so the node keeps it itself.
func Desired(self, bridge string, nodes []*v1.Node, clusterCIDR, serviceCIDR string) []Route {
	var out []Route
	if clusterCIDR != "" {
		out = append(out, Route{Dst: clusterCIDR, Type: "unreachable"})
	}
	if serviceCIDR != "" {
		out = append(out, Route{Dst: serviceCIDR, Dev: ServiceDevice})
	}
	for _, n := range nodes {
		// A simulated node's pods have no host to route to.
		if n.Spec.PodCIDR == "" || nodekind.Simulated(n) {
			continue
		}
		if n.Name == self {
			if _, cidr, err := net.ParseCIDR(n.Spec.PodCIDR); err == nil && bridge != "" {
				out = append(out, Route{Dst: cidr.String(), Dev: bridge})
			}
			continue
		}
		ip := internalIP(n)
		if ip == "" {
			continue
		}
		_, cidr, err := net.ParseCIDR(n.Spec.PodCIDR)
		if err != nil {
			continue
		}
		out = append(out, Route{Dst: cidr.String(), Via: ip})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dst < out[j].Dst })
	return out
}

func internalIP(n *v1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == v1.NodeInternalIP && net.ParseIP(a.Address).To4() != nil {
			return a.Address
		}
	}
	return ""
}

// Diff returns the routes to add or replace and the destinations of the
// owned routes to delete.
func Diff(want []Route, have map[string]Route) (set []Route, del []string) {
	keep := map[string]bool{}
	for _, r := range want {
		keep[r.Dst] = true
		if h, ok := have[r.Dst]; !ok || h != r {
			set = append(set, r)
		}
	}
	for dst := range have {
		if !keep[dst] {
			del = append(del, dst)
		}
	}
	sort.Strings(del)
	return set, del
}

// parse reads `ip -4 route show proto 199` output.
func parse(out string) map[string]Route {
	have := map[string]Route{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		var r Route
		if f[0] == "unreachable" {
			r.Type, f = "unreachable", f[1:]
		}
		if len(f) == 0 {
			continue
		}
		r.Dst = f[0]
		for i := 1; i+1 < len(f); i++ {
			switch f[i] {
			case "via":
				r.Via = f[i+1]
			case "dev":
				if r.Via == "" && r.Type == "" {
					r.Dev = f[i+1]
				}
			}
		}
		have[r.Dst] = r
	}
	return have
}

// Manager applies Desired whenever Nodes change.
type Manager struct {
	Client                   kubernetes.Interface
	Node                     string
	Bridge                   string // the bridge of this node's pods
	ClusterCIDR, ServiceCIDR string
	Log                      *slog.Logger
}

// Run keeps the routes until ctx ends; the first application happens
// before it returns from the initial sync, so that pods never start
// without the unreachable routes.
func (m *Manager) Run(ctx context.Context, ready chan<- struct{}) error {
	if err := ensurePodBridge(m.Bridge); err != nil {
		m.Log.Warn("pod bridge; bridged traffic between pods of this node may miss the service proxy and network policies", "bridge", m.Bridge, "err", err)
	}
	serviceCIDR := m.ServiceCIDR
	if err := ensureDevice(ServiceDevice); err != nil {
		// Without the device the service range keeps no route of its own;
		// the rest of the pod network still works.
		m.Log.Warn("no device for the service range; unclaimed service traffic follows the default route", "err", err)
		serviceCIDR = ""
	}
	factory := informers.NewSharedInformerFactory(m.Client, 0)
	inf := factory.Core().V1().Nodes()
	kick := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: poke, UpdateFunc: func(_, o any) { poke(o) }, DeleteFunc: poke})
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		return ctx.Err()
	}
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	first := true
	for {
		nodes, _ := inf.Lister().List(labels.Everything())
		if err := m.apply(ctx, present(Desired(m.Node, m.Bridge, nodes, m.ClusterCIDR, serviceCIDR))); err != nil {
			m.Log.Warn("pod routes", "err", err)
		}
		if first {
			first = false
			close(ready)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
		case <-t.C:
		}
	}
}

// present leaves out the routes through devices that do not exist yet (the
// pod bridge before the first pod): a stale route to the same range is
// then deleted, and the kernel's own route appears with the bridge.
func present(want []Route) []Route {
	out := want[:0:0]
	for _, r := range want {
		if r.Dev != "" && r.Dev != ServiceDevice {
			if _, err := net.InterfaceByName(r.Dev); err != nil {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

func (m *Manager) apply(ctx context.Context, want []Route) error {
	out, err := ip(ctx, "-4", "route", "show", "proto", Proto)
	if err != nil {
		return err
	}
	set, del := Diff(want, parse(out))
	var errs []string
	for _, r := range set {
		if _, err := ip(ctx, append([]string{"-4", "route", "replace"}, r.args()...)...); err != nil {
			errs = append(errs, err.Error())
		} else {
			m.Log.Info("route", "dst", r.Dst, "via", r.Via, "dev", r.Dev, "type", r.Type)
		}
	}
	for _, d := range del {
		if _, err := ip(ctx, "-4", "route", "del", d, "proto", Proto); err != nil {
			// An unreachable route is deleted by type as well.
			if _, err2 := ip(ctx, "-4", "route", "del", "unreachable", d, "proto", Proto); err2 != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// ensurePodBridge makes the pods' bridge before the CNI bridge plugin
// does (it adopts one that exists), with nf_call_iptables on: traffic
// between two pods of the node is bridged, not routed, and must still
// pass the service proxy's DNAT (a reply would miss conntrack's reverse
// NAT otherwise) and the network policies. The flag is the bridge's own,
// not the machine-wide net.bridge.bridge-nf-call-iptables, so that other
// bridges of the machine (a VM's, or the switch joining test nodes) are
// left to their owners.
func ensurePodBridge(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := ip(ctx, "link", "show", name); err != nil {
		if _, err := ip(ctx, "link", "add", name, "type", "bridge", "nf_call_iptables", "1"); err != nil {
			return err
		}
	} else if _, err := ip(ctx, "link", "set", "dev", name, "type", "bridge", "nf_call_iptables", "1"); err != nil {
		return err
	}
	// The flag acts only with bridge netfilter loaded.
	if _, err := os.Stat("/proc/sys/net/bridge"); err != nil {
		if out, err := exec.CommandContext(ctx, "modprobe", "br_netfilter").CombinedOutput(); err != nil {
			return fmt.Errorf("load br_netfilter: %v: %s", err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// ensureDevice makes the device that swallows service traffic: a dummy
// interface, or, on kernels built without the dummy driver, a bridge with
// no ports, which drops what it is given just the same.
func ensureDevice(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := ip(ctx, "link", "show", name); err != nil {
		if _, err := ip(ctx, "link", "add", name, "type", "dummy"); err != nil {
			if _, err2 := ip(ctx, "link", "add", name, "type", "bridge"); err2 != nil {
				return fmt.Errorf("create %s: %w; as a bridge: %v", name, err, err2)
			}
		}
	}
	if _, err := ip(ctx, "link", "set", name, "up"); err != nil {
		return fmt.Errorf("bring up %s: %w", name, err)
	}
	return nil
}

func ip(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "ip", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
