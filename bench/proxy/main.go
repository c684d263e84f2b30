// Command proxy measures how long the service proxy takes to program the
// kernel: 1,000 services of 10 endpoints each, written whole (the first
// sync) and after one endpoint changed (an incremental sync), applied to a
// private network namespace. The baseline is `nft -f` of the very same
// rules in the same run, so the ratio shows what the proxy adds over the
// kernel's own cost. A second figure is the latency of HTTP requests
// through a cluster IP against the endpoint's own address. It needs root
// and nft.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/knftables"

	"github.com/orca-project/orca/internal/proxy"
)

const childEnv = "ORCA_BENCH_PROXY_NETNS"

var (
	services  = flag.Int("services", 1000, "services")
	endpoints = flag.Int("endpoints", 10, "endpoints per service")
	rounds    = flag.Int("rounds", 5, "measurements per figure (the median is shown)")
	requests  = flag.Int("requests", 2000, "HTTP requests per path for the latency figure")
)

func main() {
	flag.Parse()
	if os.Getenv(childEnv) == "" {
		os.Exit(parent())
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-proxy:", err)
		os.Exit(1)
	}
}

// parent runs this program again in a network namespace of its own, which
// goes when the child exits, so the host's tables are never touched.
func parent() int {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "bench-proxy: needs root (it creates a network namespace)")
		return 1
	}
	cmd := exec.Command("unshare", append([]string{"--net", "--", os.Args[0]}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-proxy:", err)
		return 1
	}
	return 0
}

func workload(changed bool) []proxy.ServicePort {
	out := make([]proxy.ServicePort, *services)
	for i := range out {
		s := proxy.ServicePort{
			Namespace: fmt.Sprintf("ns-%d", i%20), Name: fmt.Sprintf("svc-%d", i), PortName: "http", Protocol: "tcp",
			ClusterIP: fmt.Sprintf("10.43.%d.%d", i/250, i%250+1), Port: 80,
		}
		if i%10 == 0 {
			s.NodePort = int32(30000 + i)
		}
		for j := 0; j < *endpoints; j++ {
			n := i**endpoints + j
			s.Endpoints = append(s.Endpoints, proxy.Endpoint{IP: fmt.Sprintf("10.42.%d.%d", n/250, n%250+1), Port: 8080, Ready: true, Serving: true, Local: j == 0, Near: j == 0})
		}
		out[i] = s
	}
	if changed {
		// One endpoint of one service moved (a pod replaced).
		out[*services/2].Endpoints[3].IP = "10.42.255.1"
	}
	return out
}

var cfg = proxy.Config{ClusterCIDR: "10.42.0.0/16", ServiceCIDR: "10.43.0.0/16"}

func run() error {
	ctx := context.Background()
	nft, err := knftables.New(proxy.Family, proxy.Table)
	if err != nil {
		return err
	}
	before, after := workload(false), workload(true)

	var full, fullRaw, inc, incRaw, build, rebuild []time.Duration
	var fullOps, incOps int
	for r := 0; r < *rounds; r++ {
		// The proxy: build the rules from plain data and apply them.
		start := time.Now()
		b := new(proxy.Builder)
		rs := b.Build(cfg, before)
		build = append(build, time.Since(start))
		s := &proxy.Syncer{NFT: nft}
		n, err := s.Sync(ctx, rs, false)
		if err != nil {
			return fmt.Errorf("full sync: %w", err)
		}
		full = append(full, time.Since(start))
		fullOps = n

		start = time.Now()
		next := b.Build(cfg, after)
		rebuild = append(rebuild, time.Since(start))
		n, err = s.Sync(ctx, next, false)
		if err != nil {
			return fmt.Errorf("incremental sync: %w", err)
		}
		inc = append(inc, time.Since(start))
		incOps = n

		// The baseline: the same transactions through nft -f, rendered
		// beforehand so only the kernel's work and nft's parsing count.
		fullText := render(nil, rs)
		d, err := nftFile(fullText)
		if err != nil {
			return err
		}
		fullRaw = append(fullRaw, d)
		d, err = nftFile(render(rs, next))
		if err != nil {
			return err
		}
		incRaw = append(incRaw, d)
	}
	lat, err := latency(ctx, nft, before)
	if err != nil {
		return err
	}
	_ = exec.Command("nft", "delete", "table", "ip", proxy.Table).Run()

	fmt.Printf("%d services × %d endpoints, %d rounds (median)\n\n", *services, *endpoints, *rounds)
	fmt.Println("| figure | proxy | nft -f of the same rules | ratio |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| full sync (%d operations) | %v | %v | %.2f |\n", fullOps, med(full), med(fullRaw), ratio(full, fullRaw))
	fmt.Printf("| one endpoint changed (%d operations) | %v | %v | %.2f |\n", incOps, med(inc), med(incRaw), ratio(inc, incRaw))
	fmt.Printf("| HTTP request on a new connection, p50 (%d) | %v via cluster IP | %v to the pod address | %.2f |\n", *requests, lat.p50Svc, lat.p50Direct, float64(lat.p50Svc)/float64(lat.p50Direct))
	fmt.Printf("| HTTP request on a new connection, p99 | %v via cluster IP | %v to the pod address | %.2f |\n", lat.p99Svc, lat.p99Direct, float64(lat.p99Svc)/float64(lat.p99Direct))
	fmt.Printf("| rule generation alone, all services | %v | | |\n", med(build))
	fmt.Printf("| rule generation alone, one endpoint changed | %v | | |\n", med(rebuild))
	return nil
}

// render is the transaction turning prev into next, as nft input.
func render(prev, next *proxy.Ruleset) string {
	tx := knftables.NewFake(proxy.Family, proxy.Table).NewTransaction()
	proxy.Plan(tx, prev, next, false)
	return tx.String()
}

func nftFile(text string) (time.Duration, error) {
	f, err := os.CreateTemp("", "bench-proxy-*.nft")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(text); err != nil {
		return 0, err
	}
	f.Close()
	start := time.Now()
	out, err := exec.Command("nft", "-f", f.Name()).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("nft -f: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return time.Since(start), nil
}

func med(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2].Round(100 * time.Microsecond)
}

func ratio(a, b []time.Duration) float64 { return float64(med(a)) / float64(med(b)) }

type latencies struct{ p50Svc, p99Svc, p50Direct, p99Direct time.Duration }

// latency compares HTTP requests, each on a new connection, through a
// cluster IP (DNAT by the proxy's rules, with the benchmark's services in
// the maps) and straight to the endpoint's address: an HTTP server on an
// extra address of the namespace's loopback device.
func latency(ctx context.Context, nft knftables.Interface, svcs []proxy.ServicePort) (latencies, error) {
	const podIP, clusterIP = "10.42.255.200", "10.43.255.1"
	for _, c := range [][]string{
		{"ip", "link", "set", "lo", "up"},
		{"ip", "addr", "add", podIP + "/32", "dev", "lo"},
		{"ip", "route", "add", "10.43.0.0/16", "dev", "lo"},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return latencies{}, fmt.Errorf("%v: %v: %s", c, err, out)
		}
	}
	ln, err := net.Listen("tcp", podIP+":8080")
	if err != nil {
		return latencies{}, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	svcs = append(svcs, proxy.ServicePort{Namespace: "bench", Name: "echo", Protocol: "tcp", ClusterIP: clusterIP, Port: 80,
		Endpoints: []proxy.Endpoint{{IP: podIP, Port: 8080, Ready: true, Serving: true}}})
	if _, err := (&proxy.Syncer{NFT: nft}).Sync(ctx, proxy.Build(cfg, svcs), false); err != nil {
		return latencies{}, err
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	get := func(url string) (time.Duration, error) {
		start := time.Now()
		resp, err := client.Get(url)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start), nil
	}
	var svc, direct []time.Duration
	// Alternate, so both paths see the same machine load.
	for i := 0; i < *requests; i++ {
		d, err := get("http://" + clusterIP + "/")
		if err != nil {
			return latencies{}, fmt.Errorf("via cluster IP: %w", err)
		}
		svc = append(svc, d)
		if d, err = get("http://" + podIP + ":8080/"); err != nil {
			return latencies{}, err
		}
		direct = append(direct, d)
	}
	return latencies{pct(svc, 50), pct(svc, 99), pct(direct, 50), pct(direct, 99)}, nil
}

func pct(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100].Round(time.Microsecond)
}
