package allocator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/storage"
	"github.com/orca-project/orca/internal/storage/embedded"
)

var store *storage.Store

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	// A short path: the member listens on unix sockets inside it.
	dir, err := os.MkdirTemp("", "orca-alloc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := embedded.Start(ctx, embedded.Config{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer e.Close()
	store = storage.NewStore(e.Client(), storage.NewCodec())
	return m.Run()
}

// Two Range values on one key stand for two API servers: they share
// nothing but etcd, and must still never hand out one offset twice.
func TestRangeConcurrentServers(t *testing.T) {
	ctx := context.Background()
	key := "/registry/ranges/test-" + t.Name()
	a := NewRange(store, key, "test", 300, 10)
	b := NewRange(store, key, "test", 300, 10)
	if err := a.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Init(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(r *Range) {
			defer wg.Done()
			offs, err := r.Reserve(ctx, nil, 3, false)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, o := range offs {
				got[o]++
			}
			mu.Unlock()
		}(map[bool]*Range{true: a, false: b}[i%2 == 0])
	}
	wg.Wait()
	if len(got) != 300 {
		t.Errorf("%d distinct offsets for 300 allocations", len(got))
	}
	for o, n := range got {
		if n > 1 {
			t.Errorf("offset %d handed out %d times", o, n)
		}
	}
	if _, err := a.Reserve(ctx, nil, 1, false); !errors.Is(err, ErrFull) {
		t.Errorf("full range: %v, want ErrFull", err)
	}
	if err := b.Release(ctx, []int{5, 250}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Reserve(ctx, []int{5}, 0, false); err != nil {
		t.Errorf("reserve a released offset: %v", err)
	}
	_, err := a.Reserve(ctx, []int{250, 6}, 0, false)
	var se *SpecificError
	if !errors.As(err, &se) || se.Index != 1 || !errors.Is(err, ErrAllocated) {
		t.Errorf("reserve [free, taken]: %v, want the second reported taken", err)
	}
	// The failed reservation must not have taken 250 either.
	if offs, err := a.Reserve(ctx, nil, 1, true); err != nil || offs[0] != 250 {
		t.Errorf("dry run after a failed reservation: %v %v, want 250 free", offs, err)
	}
	bm, _, _ := a.Snapshot(ctx)
	if bm.Has(250) {
		t.Error("a dry run reserved")
	}
}

func newTestServices(t *testing.T, cidr, ports string) *Services {
	t.Helper()
	ipr, err := ParseIPRange(cidr)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := ParsePortRange(ports)
	if err != nil {
		t.Fatal(err)
	}
	// Tests share one etcd: clean the keys and services of earlier ones.
	for _, k := range []string{ServiceIPsKey, ServiceNodePortsKey, servicesPrefix, ipAddressesPrefix} {
		if _, err := store.Client().Delete(context.Background(), k, clientv3.WithPrefix()); err != nil {
			t.Fatal(err)
		}
	}
	a := NewServices(store, ipr, pr, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := a.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a
}

func service(name string, typ corev1.ServiceType, mutate ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

// create allocates for svc and stores it, as the API server's create does.
func create(t *testing.T, a *Services, svc *corev1.Service) error {
	t.Helper()
	done, err := a.Allocate(context.Background(), svc, nil, false)
	if err != nil {
		return err
	}
	storage.SetKind(svc, corev1.SchemeGroupVersion.WithKind("Service"))
	err = store.Create(context.Background(), servicesPrefix+svc.Namespace+"/"+svc.Name, "services", svc)
	done(err == nil)
	return err
}

func TestServicesAllocate(t *testing.T) {
	ctx := context.Background()
	a := newTestServices(t, "10.43.0.0/24", "30000-30099")

	web := service("web", corev1.ServiceTypeClusterIP)
	if err := create(t, a, web); err != nil {
		t.Fatal(err)
	}
	if web.Spec.ClusterIP == "" || len(web.Spec.ClusterIPs) != 1 || web.Spec.ClusterIPs[0] != web.Spec.ClusterIP ||
		*web.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack || len(web.Spec.IPFamilies) != 1 || web.Spec.IPFamilies[0] != corev1.IPv4Protocol {
		t.Fatalf("ClusterIP service: %+v", web.Spec)
	}
	// Dynamic addresses stay out of the static band (the first 16 of a /24).
	if off, _ := a.IPs.Offset(mustAddr(web.Spec.ClusterIP)); off < 16 {
		t.Errorf("dynamic address %s in the static band", web.Spec.ClusterIP)
	}

	fixed := service("fixed", corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.ClusterIP = "10.43.0.5" })
	if err := create(t, a, fixed); err != nil {
		t.Fatal(err)
	}
	dup := service("dup", corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.43.0.5", []string{"10.43.0.5"} })
	wantInvalid(t, create(t, a, dup), `spec.clusterIPs: Invalid value: ["10.43.0.5"]: failed to allocate IP 10.43.0.5: provided IP is already allocated`)
	out := service("out", corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.ClusterIP = "10.44.0.5" })
	wantInvalid(t, create(t, a, out), `failed to allocate IP 10.44.0.5: the provided IP (10.44.0.5) is not in the valid range. The range of valid IPs is 10.43.0.0/24`)

	headless := service("headless", corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone })
	if err := create(t, a, headless); err != nil || headless.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Fatalf("headless: %v %v", err, headless.Spec.ClusterIPs)
	}
	ext := service("ext", corev1.ServiceTypeExternalName, func(s *corev1.Service) { s.Spec.ExternalName = "example.com" })
	if err := create(t, a, ext); err != nil || ext.Spec.ClusterIP != "" || ext.Spec.IPFamilies != nil {
		t.Fatalf("ExternalName: %v %+v", err, ext.Spec)
	}
	dual := service("dual", corev1.ServiceTypeClusterIP, func(s *corev1.Service) {
		p := corev1.IPFamilyPolicyRequireDualStack
		s.Spec.IPFamilyPolicy = &p
	})
	wantInvalid(t, create(t, a, dual), `spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`)

	// Node ports: every port, TCP and UDP on one port number share one.
	np := service("np", corev1.ServiceTypeNodePort, func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 53, Protocol: corev1.ProtocolTCP}, {Name: "b", Port: 53, Protocol: corev1.ProtocolUDP}, {Name: "c", Port: 80, Protocol: corev1.ProtocolTCP, NodePort: 30001}}
	})
	if err := create(t, a, np); err != nil {
		t.Fatal(err)
	}
	p := np.Spec.Ports
	if p[0].NodePort < 30000 || p[0].NodePort > 30099 || p[1].NodePort != p[0].NodePort || p[2].NodePort != 30001 {
		t.Fatalf("node ports %d %d %d", p[0].NodePort, p[1].NodePort, p[2].NodePort)
	}
	clash := service("clash", corev1.ServiceTypeNodePort, func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30001 })
	wantInvalid(t, create(t, a, clash), `spec.ports[0].nodePort: Invalid value: 30001: provided port is already allocated`)
	far := service("far", corev1.ServiceTypeNodePort, func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 31000 })
	wantInvalid(t, create(t, a, far), `spec.ports[0].nodePort: Invalid value: 31000: provided port is not in the valid range. The range of valid ports is 30000-30099`)
	// The failed creates took nothing: the address of "clash" went back.
	ips, _, _ := a.ipRange.Snapshot(ctx)
	if ips.Used() != 3 {
		t.Errorf("%d addresses taken after failed creates, want 3 (web, fixed, np)", ips.Used())
	}

	lb := service("lb", corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	})
	if err := create(t, a, lb); err != nil || lb.Spec.HealthCheckNodePort == 0 || lb.Spec.Ports[0].NodePort == 0 {
		t.Fatalf("LoadBalancer Local: %v, healthCheckNodePort %d", err, lb.Spec.HealthCheckNodePort)
	}
	noPorts := service("lbnp", corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) { f := false; s.Spec.AllocateLoadBalancerNodePorts = &f })
	if err := create(t, a, noPorts); err != nil || noPorts.Spec.Ports[0].NodePort != 0 {
		t.Fatalf("allocateLoadBalancerNodePorts=false: %v, %d", err, noPorts.Spec.Ports[0].NodePort)
	}

	// Update NodePort -> ClusterIP: node ports freed once stored, address kept.
	next := np.DeepCopy()
	next.Spec.Type = corev1.ServiceTypeClusterIP
	for i := range next.Spec.Ports {
		next.Spec.Ports[i].NodePort = 0
	}
	done, err := a.Allocate(ctx, next, np, false)
	if err != nil {
		t.Fatal(err)
	}
	if next.Spec.ClusterIP != np.Spec.ClusterIP {
		t.Errorf("type change moved the address %s -> %s", np.Spec.ClusterIP, next.Spec.ClusterIP)
	}
	ports, _, _ := a.ptRange.Snapshot(ctx)
	if !ports.Has(1) {
		t.Error("node port freed before the write was stored")
	}
	done(true)
	ports, _, _ = a.ptRange.Snapshot(ctx)
	if ports.Has(1) || ports.Has(int(np.Spec.Ports[0].NodePort-30000)) {
		t.Error("node ports still taken after the type change was stored")
	}
	// An update whose write fails returns what it took.
	back := next.DeepCopy()
	back.Spec.Type = corev1.ServiceTypeNodePort
	done, err = a.Allocate(ctx, back, next, false)
	if err != nil || back.Spec.Ports[0].NodePort == 0 {
		t.Fatalf("ClusterIP -> NodePort: %v %d", err, back.Spec.Ports[0].NodePort)
	}
	done(false)
	ports, _, _ = a.ptRange.Snapshot(ctx)
	if ports.Has(int(back.Spec.Ports[0].NodePort - 30000)) {
		t.Error("a failed update leaked its node port")
	}

	// Delete releases everything.
	a.Release(ctx, lb)
	ports, _, _ = a.ptRange.Snapshot(ctx)
	if ports.Has(int(lb.Spec.HealthCheckNodePort-30000)) || ports.Has(int(lb.Spec.Ports[0].NodePort-30000)) {
		t.Error("deleted LoadBalancer still holds node ports")
	}
}

func TestServicesRepair(t *testing.T) {
	ctx := context.Background()
	a := newTestServices(t, "10.43.0.0/24", "30000-30099")
	kept := service("kept", corev1.ServiceTypeNodePort)
	if err := create(t, a, kept); err != nil {
		t.Fatal(err)
	}
	// A crash between allocating and writing the service: taken, unused.
	leaked := service("leaked", corev1.ServiceTypeNodePort)
	if _, err := a.Allocate(ctx, leaked, nil, false); err != nil {
		t.Fatal(err)
	}
	// A range that lost a value a service holds (restored from backup).
	keptIP, _ := a.IPs.Offset(mustAddr(kept.Spec.ClusterIP))
	if err := a.ipRange.Release(ctx, []int{keptIP}); err != nil {
		t.Fatal(err)
	}
	leakedIP, _ := a.IPs.Offset(mustAddr(leaked.Spec.ClusterIP))
	for i := 1; i <= leakedRepairs; i++ {
		if err := a.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		ips, _, _ := a.ipRange.Snapshot(ctx)
		if !ips.Has(keptIP) {
			t.Fatalf("repair %d did not mark the address of a stored service", i)
		}
		if got, want := ips.Has(leakedIP), i < leakedRepairs; got != want {
			t.Fatalf("after repair %d the leaked address is taken=%v, want %v", i, got, want)
		}
	}
	ports, _, _ := a.ptRange.Snapshot(ctx)
	if ports.Has(int(leaked.Spec.Ports[0].NodePort-30000)) || !ports.Has(int(kept.Spec.Ports[0].NodePort-30000)) {
		t.Error("node port repair: leaked still taken or kept freed")
	}
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

func wantInvalid(t *testing.T, err error, msg string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("error %v, want 422 Invalid", err)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Fatalf("error %q\nwant it to contain %q", err.Error(), msg)
	}
}
