// Command dns measures the cluster DNS server's queries per second for a
// service name over UDP, and, in the same run and with the same clients, a
// trivial miekg/dns server answering one static record: the ratio says
// what the cluster lookup costs over the DNS library itself.
//
// The cluster DNS server is the real one (informers, indexes, metrics),
// fed by an in-memory clientset holding -services services with ready
// EndpointSlices.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	mdns "github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/orca-project/orca/internal/dns"
)

func main() {
	var (
		services = flag.Int("services", 1000, "services in the cluster")
		clients  = flag.Int("clients", 8, "concurrent clients, each with one UDP socket and one query in flight")
		duration = flag.Duration("duration", 5*time.Second, "length of each measurement")
	)
	flag.Parse()
	if err := run(*services, *clients, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "bench/dns:", err)
		os.Exit(1)
	}
}

func run(services, clients int, d time.Duration) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var objs []k8sruntime.Object
	ready := true
	for i := 0; i < services; i++ {
		name := fmt.Sprintf("svc-%d", i)
		ip := fmt.Sprintf("10.43.%d.%d", 1+i/250, 1+i%250)
		objs = append(objs,
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: ip, ClusterIPs: []string{ip},
					Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}}}},
			&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name + "-1",
				Labels: map[string]string{discoveryv1.LabelServiceName: name}}, AddressType: discoveryv1.AddressTypeIPv4,
				Endpoints: []discoveryv1.Endpoint{{Addresses: []string{fmt.Sprintf("10.42.%d.%d", 1+i/250, 1+i%250)},
					Conditions: discoveryv1.EndpointConditions{Ready: &ready}}}})
	}
	srv, err := dns.New(dns.Config{Client: fake.NewSimpleClientset(objs...), Metrics: prometheus.NewRegistry(),
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return err
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		return err
	}
	go func() { _ = srv.Run(ctx) }()
	for !srv.Ready() {
		time.Sleep(10 * time.Millisecond)
	}
	cluster := fmt.Sprintf("127.0.0.1:%d", srv.Port())

	static, stop, err := staticServer()
	if err != nil {
		return err
	}
	defer stop()

	name := fmt.Sprintf("svc-%d.bench.svc.cluster.local.", services/2)
	fmt.Printf("cluster DNS vs static miekg server, %d services, %d clients, %v each, GOMAXPROCS=%d\n", services, clients, d, runtime.GOMAXPROCS(0))
	// Static first and last, so that warm-up and machine noise show as a
	// spread rather than bias one side.
	base1, err := measure(static, name, clients, d)
	if err != nil {
		return err
	}
	got, err := measure(cluster, name, clients, d)
	if err != nil {
		return err
	}
	base2, err := measure(static, name, clients, d)
	if err != nil {
		return err
	}
	base := (base1 + base2) / 2
	fmt.Printf("static miekg server: %8.0f queries/s (runs %.0f, %.0f)\n", base, base1, base2)
	fmt.Printf("cluster DNS:         %8.0f queries/s\n", got)
	fmt.Printf("ratio:               %8.2f of the static server\n", got/base)
	return nil
}

// staticServer answers every A query with one fixed record.
func staticServer() (string, func(), error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	rr, _ := mdns.NewRR(". 30 IN A 10.43.0.99")
	s := &mdns.Server{PacketConn: pc, Handler: mdns.HandlerFunc(func(w mdns.ResponseWriter, r *mdns.Msg) {
		m := new(mdns.Msg).SetReply(r)
		a := *rr.(*mdns.A)
		a.Hdr.Name = r.Question[0].Name
		m.Answer = []mdns.RR{&a}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = s.ActivateAndServe() }()
	return pc.LocalAddr().String(), func() { _ = s.Shutdown() }, nil
}

// measure runs clients query loops against addr for d and returns the
// answered queries per second; a wrong answer is an error.
func measure(addr, name string, clients int, d time.Duration) (float64, error) {
	var n atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	deadline := time.Now().Add(d)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &mdns.Client{Net: "udp", Timeout: 2 * time.Second}
			conn, err := c.Dial(addr)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			q := new(mdns.Msg).SetQuestion(name, mdns.TypeA)
			for time.Now().Before(deadline) {
				q.Id = mdns.Id()
				resp, _, err := c.ExchangeWithConn(q, conn)
				if err != nil {
					errs <- err
					return
				}
				if len(resp.Answer) != 1 {
					errs <- fmt.Errorf("%s: %d answers (rcode %s)", name, len(resp.Answer), mdns.RcodeToString[resp.Rcode])
					return
				}
				n.Add(1)
			}
		}()
	}
	start := time.Now()
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(n.Load()) / time.Since(start).Seconds(), nil
}
