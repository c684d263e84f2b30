// Command scale measures how large a cluster Orca's control plane holds
// on this machine within upstream's scalability SLOs. It starts `orca
// server` (no node of its own) and `orca agent --simulate` with N
// SIMULATED nodes (no container runs; the agent takes bound pods through
// their lifecycle through the API, renews Leases and posts node status as
// kubelets do), then creates Deployments at a steady pod rate until the
// cluster holds M pods, with a background of list-watch clients (as
// nodes' service proxies: Services and EndpointSlices) and Services over
// a share of the Deployments. It reports upstream's SLIs: API call
// latency p99 per verb and resource from the server's own histograms,
// pod start-up latency (creationTimestamp to all containers started, as
// observed by a watch), watch latency, and the control plane's resident
// set, CPU and etcd database over time, with CPU and heap profiles.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/orca-project/orca/bench/internal/procstat"
)

var (
	orcaBin      = flag.String("orca", "bin/orca", "the orca binary under test")
	nodes        = flag.Int("nodes", 5000, "simulated nodes")
	pods         = flag.Int("pods", 150000, "pods, created through Deployments")
	replicas     = flag.Int("replicas", 30, "replicas of each Deployment")
	namespaces   = flag.Int("namespaces", 100, "namespaces the Deployments are spread over")
	rate         = flag.Float64("rate", 100, "pods per second the Deployments are created at")
	serviceEvery = flag.Int("service-every", 2, "every Nth Deployment gets a Service (0: none)")
	watchers     = flag.Int("watchers", 50, "list-watch clients of Services and EndpointSlices, each on its own connection")
	probes       = flag.Int("probes", 10, "watchers of the watch-latency probe, each on its own connection")
	simQPS       = flag.Int("sim-qps", 2000, "the simulated nodes' client QPS")
	settle       = flag.Duration("settle", time.Minute, "idle measurement after the nodes register and after the pods run")
	timeout      = flag.Duration("timeout", 90*time.Minute, "give up waiting for the pods after this long")
	outDir       = flag.String("out", "_output/scale", "directory for the report, profiles and the processes' logs")
)

func main() {
	flag.Parse()
	klog.SetLogger(logr.Discard())
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

// sample is one reading of the two processes and the pods.
type sample struct {
	at            time.Duration
	phase         string
	server, sim   procstat.Usage
	seen, running int
}

type recorder struct {
	mu      sync.Mutex
	start   time.Time
	phase   string
	samples []sample
}

func (r *recorder) setPhase(p string) {
	r.mu.Lock()
	r.phase = p
	r.mu.Unlock()
}

// sampleEvery reads the processes every period until ctx ends.
func (r *recorder) sampleEvery(ctx context.Context, period time.Duration, c *cluster, t *podTracker) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		s := sample{at: time.Since(r.start)}
		s.server, _ = procstat.Read(c.server.Process.Pid)
		if pid := c.simPid.Load(); pid != 0 {
			s.sim, _ = procstat.Read(int(pid))
		}
		s.seen, s.running = t.counts()
		r.mu.Lock()
		s.phase = r.phase
		r.samples = append(r.samples, s)
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (r *recorder) last() sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.samples[len(r.samples)-1]
}

// window is what the processes used between two samples: CPU in cores.
func window(a, b sample) (serverCores, simCores float64) {
	wall := (b.at - a.at).Seconds()
	if wall <= 0 {
		return 0, 0
	}
	return (b.server.CPU - a.server.CPU).Seconds() / wall, (b.sim.CPU - a.sim.CPU).Seconds() / wall
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "orca-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	logs, err := os.Create(filepath.Join(*outDir, "processes.log"))
	if err != nil {
		return err
	}
	defer logs.Close()
	var report strings.Builder
	out := io.MultiWriter(os.Stdout, &report)
	defer func() { _ = os.WriteFile(filepath.Join(*outDir, "report.md"), []byte(report.String()), 0o644) }()

	p := newPlan(*pods, *replicas, *namespaces, *serviceEvery, *rate)
	fmt.Fprintf(out, "# orca scale run, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(out, "%d SIMULATED nodes (one `orca agent --simulate` process; no containers), %d pods in %d Deployments of %d over %d namespaces at %.0f pods/s, a Service for every %d Deployment(s), %d Service+EndpointSlice list-watch clients, %d watch-latency probes.\n\n",
		*nodes, p.deployments*p.replicas, p.deployments, p.replicas, p.namespaces, p.podsPerSecond, *serviceEvery, *watchers, *probes)

	c, err := startServer(ctx, *orcaBin, dir, logs)
	if err != nil {
		return err
	}
	defer c.stop()
	newClient := func() (kubernetes.Interface, error) {
		cfg := rest.CopyConfig(c.cfg)
		cfg.QPS, cfg.Burst = 50, 100
		// A dialer of its own keeps client-go from sharing one cached
		// transport: each client has its own connection, as separate
		// processes have.
		cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		return kubernetes.NewForConfig(cfg)
	}

	rec := &recorder{start: time.Now(), phase: "empty"}
	tracker := newPodTracker()
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	go rec.sampleEvery(sctx, 5*time.Second, c, tracker)

	// Phase 1: the empty control plane.
	sleep(ctx, 20*time.Second)
	empty := rec.last()

	// Phase 2: the nodes register; then their idle load.
	rec.setPhase("nodes")
	regStart := time.Now()
	if err := c.startNodes(ctx, *orcaBin, *nodes, "sim-", *simQPS, logs); err != nil {
		return err
	}
	if err := waitFor(ctx, 15*time.Minute, func() (bool, error) {
		n, err := c.readyNodes(ctx)
		return n >= *nodes, err
	}); err != nil {
		return fmt.Errorf("waiting for %d Ready nodes: %w", *nodes, err)
	}
	registered := time.Since(regStart)
	rec.setPhase("nodes idle")
	idle0 := rec.last()
	page0, err := c.metrics(ctx)
	if err != nil {
		return err
	}
	sleep(ctx, *settle)
	idle1 := rec.last()
	page1, err := c.metrics(ctx)
	if err != nil {
		return err
	}
	nodeCalls := callRate(page0, page1, (idle1.at - idle0.at).Seconds())

	// Phase 3: the load.
	rec.setPhase("load")
	run := fmt.Sprintf("r%d", time.Now().Unix())
	tracker.start(ctx, c.cs, run)
	if err := createNamespaces(ctx, c.cs, p); err != nil {
		return err
	}
	if err := startWatchers(ctx, *watchers, newClient); err != nil {
		return err
	}
	pr := &probe{}
	if err := pr.run(ctx, c.cs, *probes, time.Second, newClient); err != nil {
		return err
	}
	before, err := c.metrics(ctx)
	if err != nil {
		return err
	}
	loadStart := time.Now()
	errs := make(chan error, 1)
	created := make(chan struct{})
	go func() { createLoad(ctx, c.cs, p, run, errs); close(created) }()
	want := p.deployments * p.replicas
	// The CPU profile covers the middle of the load.
	profiled := make(chan error, 1)
	go func() {
		sleep(ctx, p.interval()*time.Duration(p.deployments)/2)
		profiled <- c.profile(ctx, "profile", map[string]string{"seconds": "30"}, filepath.Join(*outDir, "cpu.pprof"))
	}()
	err = waitFor(ctx, *timeout, func() (bool, error) {
		select {
		case err := <-errs:
			return false, err
		default:
		}
		_, running := tracker.counts()
		return running >= want, nil
	})
	loadTime := time.Since(loadStart)
	<-created
	if err != nil {
		seen, running := tracker.counts()
		fmt.Fprintf(out, "**The load did not complete**: %v (%d pods seen, %d running of %d).\n\n", err, seen, running, want)
	}
	after, merr := c.metrics(ctx)
	if merr != nil {
		return merr
	}
	lat := tracker.latencies()
	watchLat := pr.take()

	// Phase 4: the loaded cluster at rest.
	rec.setPhase("loaded idle")
	loaded0 := rec.last()
	sleep(ctx, *settle)
	loaded1 := rec.last()
	if err := c.profile(ctx, "heap", nil, filepath.Join(*outDir, "heap.pprof")); err != nil {
		fmt.Fprintf(out, "heap profile: %v\n", err)
	}
	if err := <-profiled; err != nil {
		fmt.Fprintf(out, "cpu profile: %v\n", err)
	}
	final, err := c.metrics(ctx)
	if err != nil {
		return err
	}
	scancel()

	r := results{
		plan: p, want: want, registered: registered, loadTime: loadTime,
		empty: empty, idle0: idle0, idle1: idle1, loaded0: loaded0, loaded1: loaded1,
		nodeCalls: nodeCalls, startup: lat, watch: watchLat,
		calls:   responsiveness(mustLatencies(before), mustLatencies(after), 10),
		dbBytes: metricValue(final, "orca_etcd_db_total_size_bytes"),
		dbInUse: metricValue(final, "orca_etcd_db_total_size_in_use_bytes"),
		heap:    metricValue(final, "go_memstats_heap_inuse_bytes"),
		samples: rec.samples,
	}
	r.print(out)
	return nil
}

func mustLatencies(page string) map[callKey]histogram {
	h, err := latencies(strings.NewReader(page))
	if err != nil {
		return map[callKey]histogram{}
	}
	return h
}

// callRate is the API calls per second made between two pages.
func callRate(a, b string, secs float64) float64 {
	var n float64
	for k, h := range mustLatencies(b) {
		n += h.since(mustLatencies(a)[k]).count
	}
	return n / secs
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// waitFor polls cond every second until it holds, fails, or d passes.
func waitFor(ctx context.Context, d time.Duration, cond func() (bool, error)) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, d, true, func(context.Context) (bool, error) { return cond() })
}

// results is everything the report prints.
type results struct {
	plan                                  plan
	want                                  int
	registered, loadTime                  time.Duration
	empty, idle0, idle1, loaded0, loaded1 sample
	nodeCalls                             float64
	startup                               startup
	watch                                 []time.Duration
	calls                                 []callLatency
	dbBytes, dbInUse, heap                float64
	samples                               []sample
}

func mb(b int64) float64 { return float64(b) / 1e6 }

func (r results) print(w io.Writer) {
	seenPods := len(r.startup.sli)
	fmt.Fprintf(w, "## Result\n\n")
	fmt.Fprintf(w, "| SLI | value | SLO | held |\n|---|---|---|---|\n")
	worstMut, worstRead := callLatency{}, callLatency{}
	for _, c := range r.calls {
		if c.Mutating() {
			if c.P99 > worstMut.P99 {
				worstMut = c
			}
		} else if c.P99 > worstRead.P99 {
			worstRead = c
		}
	}
	allMet := true
	for _, c := range r.calls {
		allMet = allMet && c.Met()
	}
	fmt.Fprintf(w, "| slowest mutating call p99 | %v (%s) | ≤ 1s | %s |\n", worstMut.P99.Round(time.Millisecond), worstMut.Key, yes(worstMut.P99 <= time.Second))
	fmt.Fprintf(w, "| slowest read-only call p99 | %v (%s) | ≤ %v | %s |\n", worstRead.P99.Round(time.Millisecond), worstRead.Key, worstRead.Limit, yes(worstRead.Met()))
	fmt.Fprintf(w, "| every call within its SLO | | | %s |\n", yes(allMet))
	p50, p99 := percentile(r.startup.sli, 50), percentile(r.startup.sli, 99)
	fmt.Fprintf(w, "| pod start-up p50 / p99 (creationTimestamp → running, watched), %d pods | %v / %v | p99 ≤ 5s | %s |\n",
		seenPods, p50.Round(time.Millisecond), p99.Round(time.Millisecond), yes(p99 <= 5*time.Second && seenPods >= r.want))
	peak := r.peakRSS()
	fmt.Fprintf(w, "| control plane peak RSS | %.0f MB | ≤ 4 GB | %s |\n\n", mb(peak), yes(peak <= 4e9))

	fmt.Fprintf(w, "- Nodes: %d registered and Ready in %v; idle, the server took %.2f cores and the simulator %.2f cores for %.0f API calls/s (Leases, node status).\n",
		*nodes, r.registered.Round(time.Second), cores(r.idle0, r.idle1, true), cores(r.idle0, r.idle1, false), r.nodeCalls)
	fmt.Fprintf(w, "- Load: %d pods running %v after the first Deployment (%.0f pods/s asked, %.0f pods/s achieved).\n",
		seenPods, r.loadTime.Round(time.Second), r.plan.podsPerSecond, float64(seenPods)/r.loadTime.Seconds())
	fmt.Fprintf(w, "- Pod start-up as first seen by a watch → running: p50 %v, p99 %v; seen → bound: p50 %v, p99 %v.\n",
		percentile(r.startup.seen, 50).Round(time.Millisecond), percentile(r.startup.seen, 99).Round(time.Millisecond),
		percentile(r.startup.schedule, 50).Round(time.Millisecond), percentile(r.startup.schedule, 99).Round(time.Millisecond))
	fmt.Fprintf(w, "- Watch latency (write → event at %d watchers, %d events): p50 %v, p99 %v.\n",
		*probes, len(r.watch), percentile(r.watch, 50).Round(time.Millisecond), percentile(r.watch, 99).Round(time.Millisecond))
	fmt.Fprintf(w, "- Server RSS: %.0f MB empty, %.0f MB with the nodes (%.1f KB per node), %.0f MB loaded at rest (%.1f KB per pod beyond the nodes); Go heap in use at the end %.0f MB.\n",
		mb(r.empty.server.RSS), mb(r.idle1.server.RSS), float64(r.idle1.server.RSS-r.empty.server.RSS)/float64(*nodes)/1e3,
		mb(r.loaded1.server.RSS), float64(r.loaded1.server.RSS-r.idle1.server.RSS)/math.Max(1, float64(seenPods))/1e3, r.heap/1e6)
	fmt.Fprintf(w, "- Loaded at rest the server took %.2f cores; the simulator %.2f cores and %.0f MB.\n",
		cores(r.loaded0, r.loaded1, true), cores(r.loaded0, r.loaded1, false), mb(r.loaded1.sim.RSS))
	fmt.Fprintf(w, "- etcd database: %.0f MB (%.0f MB in use).\n\n", r.dbBytes/1e6, r.dbInUse/1e6)

	fmt.Fprintf(w, "## API call latency during the load (server histograms; calls made at least 10 times)\n\n")
	fmt.Fprintf(w, "| call | count | p50 | p99 | SLO |\n|---|---|---|---|---|\n")
	for _, c := range r.calls {
		fmt.Fprintf(w, "| %s | %.0f | %v | %v | %v %s |\n", c.Key, c.Count, c.P50.Round(time.Millisecond), c.P99.Round(time.Millisecond), c.Limit, yes(c.Met()))
	}
	fmt.Fprintf(w, "\n## Over time (every 60 s)\n\n| t | phase | pods running | server RSS MB | server cores | simulator RSS MB | simulator cores |\n|---|---|---|---|---|---|---|\n")
	var prev *sample
	for i := range r.samples {
		s := r.samples[i]
		if prev != nil && s.at-prev.at < time.Minute && i != len(r.samples)-1 {
			continue
		}
		sc, mc := 0.0, 0.0
		if prev != nil {
			sc, mc = window(*prev, s)
		}
		fmt.Fprintf(w, "| %v | %s | %d | %.0f | %.2f | %.0f | %.2f |\n", s.at.Round(time.Second), s.phase, s.running, mb(s.server.RSS), sc, mb(s.sim.RSS), mc)
		prev = &r.samples[i]
	}
	fmt.Fprintln(w)
}

func (r results) peakRSS() int64 {
	var peak int64
	for _, s := range r.samples {
		peak = max(peak, s.server.RSS)
	}
	return peak
}

func cores(a, b sample, server bool) float64 {
	s, m := window(a, b)
	if server {
		return s
	}
	return m
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}
