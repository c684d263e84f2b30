package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/orca-project/orca/internal/auth/bootstrappolicy"
	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/dns"
	"github.com/orca-project/orca/internal/nodeaddr"
)

// DefaultClusterDNSPort is where the cluster DNS server listens: not 53,
// which a host resolver (systemd-resolved, dnsmasq) often holds; pods
// reach it through the kube-dns Service's port 53 anyway.
const DefaultClusterDNSPort = 10053

// kubeDNSName is the Service pods' resolv.conf points at, kube-system's
// kube-dns as in kubeadm and k3s.
const kubeDNSName = "kube-dns"

// kubeDNSReconcileInterval is how often the kube-dns Service and its
// endpoints are put back, should someone have edited them.
const kubeDNSReconcileInterval = 30 * time.Second

// ClusterDNSIP is the kube-dns Service's address: the tenth of the service
// range (10.43.0.10 by default), as k3s has it.
func ClusterDNSIP(serviceCIDR string) (string, error) {
	ipr, _, err := serviceRanges(Options{ServiceCIDR: serviceCIDR})
	if err != nil {
		return "", err
	}
	return ipr.Addr(9).String(), nil
}

// clusterDNS builds the DNS server and opens its sockets on the bind
// address; nil when disabled.
func clusterDNS(opts Options, tlsDir string, ca *pki.Pair, port int, reg prometheus.Registerer) (*dns.Server, kubernetes.Interface, error) {
	if opts.ClusterDNSPort < 0 {
		return nil, nil, nil
	}
	cfg, err := loopbackConfig(opts, tlsDir, ca, port, "cluster-dns", bootstrappolicy.DNSUser, nil, "orca-dns", 20, 40)
	if err != nil {
		return nil, nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster DNS client: %w", err)
	}
	s, err := dns.New(dns.Config{Client: client, Zone: opts.ClusterDomain, Upstreams: opts.DNSUpstreams, Metrics: reg, Log: opts.Log})
	if err != nil {
		return nil, nil, err
	}
	if err := s.Listen(net.JoinHostPort(opts.BindAddress, strconv.Itoa(opts.ClusterDNSPort))); err != nil {
		return nil, nil, err
	}
	return s, client, nil
}

// kubeDNS keeps the kube-dns Service, its Endpoints and its EndpointSlice
// pointing at the servers' DNS ports. The Service has no selector: its
// endpoints are the servers' DNS processes, each ready once its caches
// have synced. Every server writes its own entry and drops those of
// servers gone from the kubernetes Service's endpoints (which the API
// servers' leases keep), so that several servers share the endpoints
// instead of taking them from each other in turn.
type kubeDNS struct {
	client    kubernetes.Interface
	clusterIP string
	nodeIP    string
	port      int32
	ready     func() bool
	log       *slog.Logger
}

// run reconciles at once, when the DNS server becomes ready, and then
// periodically, until ctx ends.
func (k *kubeDNS) run(ctx context.Context) error {
	wasReady := false
	for {
		wait := kubeDNSReconcileInterval
		if err := k.reconcile(ctx); err != nil && ctx.Err() == nil {
			// Another server's write in between (a conflict) is the
			// usual cause: try again soon.
			k.log.Warn("reconcile the kube-dns service", "err", err)
			wait = time.Second
		}
		if !wasReady {
			wait = 200 * time.Millisecond
		}
		wasReady = k.ready()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

func (k *kubeDNS) reconcile(ctx context.Context) error {
	ports := []corev1.ServicePort{
		{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(k.port)},
		{Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: 53, TargetPort: intstr.FromInt32(k.port)},
	}
	svcs := k.client.CoreV1().Services(metav1.NamespaceSystem)
	cur, err := svcs.Get(ctx, kubeDNSName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = svcs.Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: kubeDNSName, Namespace: metav1.NamespaceSystem, Labels: map[string]string{
				"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: k.clusterIP, Ports: ports},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create service: %w", err)
		}
	case err != nil:
		return fmt.Errorf("get service: %w", err)
	case !apiequality.Semantic.DeepEqual(cur.Spec.Ports, ports):
		// Only the ports: the address is immutable, as the kubernetes
		// service's is.
		cur.Spec.Ports = ports
		if _, err := svcs.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update service ports: %w", err)
		}
	}
	if net.ParseIP(k.nodeIP) == nil || net.ParseIP(k.nodeIP).IsLoopback() {
		// Pods cannot reach the host's loopback; endpoints refuse it too.
		return fmt.Errorf("no node address for the kube-dns endpoints (have %q)", k.nodeIP)
	}
	if err := k.putEndpoints(ctx); err != nil {
		return err
	}
	return k.putSlice(ctx)
}

// dnsEndpoint is one server's DNS process among the kube-dns endpoints.
type dnsEndpoint struct {
	ip    string
	ready bool
}

// mergeDNSEndpoints is what the kube-dns endpoints should be: this
// server's entry, and the others' of those still live (all of them when
// live is nil, unknown), in address order so that every server writes
// the same list.
func mergeDNSEndpoints(cur []dnsEndpoint, self dnsEndpoint, live map[string]bool) []dnsEndpoint {
	out := []dnsEndpoint{self}
	for _, e := range cur {
		if e.ip == self.ip || live != nil && !live[e.ip] || slices.ContainsFunc(out, func(o dnsEndpoint) bool { return o.ip == e.ip }) {
			continue
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b dnsEndpoint) int { return strings.Compare(a.ip, b.ip) })
	return out
}

// liveServers are the addresses of the kubernetes Service's endpoints,
// one per running API server; nil when they cannot be read.
func (k *kubeDNS) liveServers(ctx context.Context) map[string]bool {
	list, err := k.client.CoreV1().Endpoints(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kubernetes"})
	if err != nil || len(list.Items) == 0 {
		return nil
	}
	live := map[string]bool{}
	for _, ss := range list.Items[0].Subsets {
		for _, a := range ss.Addresses {
			live[a.IP] = true
		}
	}
	if len(live) == 0 {
		return nil
	}
	return live
}

func (k *kubeDNS) self() dnsEndpoint { return dnsEndpoint{ip: k.nodeIP, ready: k.ready()} }

func (k *kubeDNS) putEndpoints(ctx context.Context) error {
	subset := corev1.EndpointSubset{Ports: []corev1.EndpointPort{
		{Name: "dns", Protocol: corev1.ProtocolUDP, Port: k.port},
		{Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: k.port},
	}}
	eps := k.client.CoreV1().Endpoints(metav1.NamespaceSystem)
	cur, err := eps.Get(ctx, kubeDNSName, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get endpoints: %w", err)
	}
	var have []dnsEndpoint
	if err == nil {
		for _, ss := range cur.Subsets {
			for _, a := range ss.Addresses {
				have = append(have, dnsEndpoint{ip: a.IP, ready: true})
			}
			for _, a := range ss.NotReadyAddresses {
				have = append(have, dnsEndpoint{ip: a.IP})
			}
		}
	}
	for _, e := range mergeDNSEndpoints(have, k.self(), k.liveServers(ctx)) {
		if e.ready {
			subset.Addresses = append(subset.Addresses, corev1.EndpointAddress{IP: e.ip})
		} else {
			subset.NotReadyAddresses = append(subset.NotReadyAddresses, corev1.EndpointAddress{IP: e.ip})
		}
	}
	want := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: kubeDNSName, Namespace: metav1.NamespaceSystem,
			// The slice is written here; the mirroring controller must not
			// write a second one.
			Labels: map[string]string{discoveryv1.LabelSkipMirror: "true", "k8s-app": "kube-dns"}},
		Subsets: []corev1.EndpointSubset{subset},
	}
	if apierrors.IsNotFound(err) {
		if _, err := eps.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create endpoints: %w", err)
		}
		return nil
	}
	if apiequality.Semantic.DeepEqual(cur.Subsets, want.Subsets) && cur.Labels[discoveryv1.LabelSkipMirror] == "true" {
		return nil
	}
	cur.Subsets = want.Subsets
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	cur.Labels[discoveryv1.LabelSkipMirror] = "true"
	if _, err := eps.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update endpoints: %w", err)
	}
	return nil
}

func (k *kubeDNS) putSlice(ctx context.Context) error {
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	dnsName, tcpName := "dns", "dns-tcp"
	client := k.client.DiscoveryV1().EndpointSlices(metav1.NamespaceSystem)
	cur, err := client.Get(ctx, kubeDNSName, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get endpointslice: %w", err)
	}
	var have []dnsEndpoint
	if err == nil {
		for _, e := range cur.Endpoints {
			for _, a := range e.Addresses {
				have = append(have, dnsEndpoint{ip: a, ready: e.Conditions.Ready != nil && *e.Conditions.Ready})
			}
		}
	}
	want := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: kubeDNSName, Namespace: metav1.NamespaceSystem, Labels: map[string]string{
			discoveryv1.LabelServiceName: kubeDNSName, discoveryv1.LabelManagedBy: "orca-server"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{
			{Name: &dnsName, Protocol: &udp, Port: &k.port},
			{Name: &tcpName, Protocol: &tcp, Port: &k.port},
		},
	}
	for _, e := range mergeDNSEndpoints(have, k.self(), k.liveServers(ctx)) {
		want.Endpoints = append(want.Endpoints, discoveryv1.Endpoint{Addresses: []string{e.ip},
			Conditions: discoveryv1.EndpointConditions{Ready: &e.ready, Serving: &e.ready, Terminating: new(bool)}})
	}
	if apierrors.IsNotFound(err) {
		if _, err := client.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create endpointslice: %w", err)
		}
		return nil
	}
	if apiequality.Semantic.DeepEqual(cur.Endpoints, want.Endpoints) && apiequality.Semantic.DeepEqual(cur.Ports, want.Ports) &&
		cur.Labels[discoveryv1.LabelServiceName] == kubeDNSName {
		return nil
	}
	cur.Endpoints, cur.Ports = want.Endpoints, want.Ports
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	for k, v := range want.Labels {
		cur.Labels[k] = v
	}
	if _, err := client.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update endpointslice: %w", err)
	}
	return nil
}

// dnsNodeIP is the address pods reach this process at: the in-process
// agent's node IP, else a non-loopback advertise address, else the
// default route's source address.
func dnsNodeIP(opts Options) string {
	if opts.Agent != nil && net.ParseIP(opts.Agent.NodeIP) != nil {
		return opts.Agent.NodeIP
	}
	if ip := net.ParseIP(opts.AdvertiseAddress); nodeaddr.Routable(ip) {
		return ip.String()
	}
	ip, _ := nodeaddr.Default()
	return ip
}

// startClusterDNS runs the DNS server and the kube-dns reconciler in g.
func startClusterDNS(ctx context.Context, opts Options, tlsDir string, ca *pki.Pair, port int, reg prometheus.Registerer, goFn func(func() error)) error {
	s, client, err := clusterDNS(opts, tlsDir, ca, port, reg)
	if err != nil || s == nil {
		return err
	}
	ip, err := ClusterDNSIP(opts.ServiceCIDR)
	if err != nil {
		return err
	}
	k := &kubeDNS{client: client, clusterIP: ip, nodeIP: dnsNodeIP(opts), port: int32(s.Port()), ready: s.Ready, log: opts.Log}
	goFn(func() error { return s.Run(ctx) })
	goFn(func() error { return k.run(ctx) })
	return nil
}
