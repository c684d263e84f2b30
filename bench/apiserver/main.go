// Command apiserver benchmarks Orca's API server against the physical limit
// of the same machine: it starts `orca server` as its own process, measures
// raw etcd put/get through the embedded member's own client socket, then
// the same work through the Kubernetes API with client-go, at the same
// concurrency, in the same run. It prints one table of figures.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/bench/internal/procstat"
)

var (
	orcaBin      = flag.String("orca", "bin/orca", "orca binary to benchmark")
	duration     = flag.Duration("duration", 10*time.Second, "length of each throughput phase")
	concurrency  = flag.Int("concurrency", 16, "concurrent clients")
	watchers     = flag.Int("watchers", 1000, "concurrent watchers in the watch-delivery phase")
	objects      = flag.Int("objects", 10000, "ConfigMaps stored before the memory reading")
	apiOnly      = flag.Bool("api-only", false, "run the server without its controller manager and scheduler")
	cpuProfile   = flag.String("cpuprofile", "", "write the server's CPU profile during the phase -profile-phase names to this file")
	allocProfile = flag.String("allocprofile", "", "write the server's allocations during the phase -profile-phase names to this file")
	watchOnly    = flag.Bool("watch-only", false, "run the watch-delivery phase alone")
	writesOnly   = flag.Bool("writes-only", false, "stop after the write phases (no lists, watch delivery, collection or the comparisons on fresh servers)")
	serverEnv    = flag.String("server-env", "", "extra environment of the server process, comma-separated NAME=VALUE pairs (GOGC=200, say)")
	profilePhase = flag.String("profile-phase", "create", "phase the profiles cover: create, update, apply or pod")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type result struct {
	name       string
	ops        int
	elapsed    time.Duration
	p50, p99   time.Duration
	errors     int64
	throughput float64
	// serverCPU is the CPU time the server process spent during the
	// phase, and serverSyscalls its read and write system calls, when the
	// phase measured them.
	serverCPU      time.Duration
	serverSyscalls int64
}

func (r result) String() string {
	s := fmt.Sprintf("%-34s %9.0f ops/s   p50 %7.2f ms   p99 %7.2f ms   (%d ops, %d errors)",
		r.name, r.throughput, ms(r.p50), ms(r.p99), r.ops, r.errors)
	if r.serverCPU > 0 {
		s += fmt.Sprintf("   server CPU %.0f µs/op", r.cpuPerOp())
	}
	if r.serverSyscalls > 0 && r.ops > 0 {
		s += fmt.Sprintf(", %.1f reads+writes/op", float64(r.serverSyscalls)/float64(r.ops))
	}
	return s
}

// cpuPerOp is the server's CPU time per operation in microseconds.
func (r result) cpuPerOp() float64 {
	if r.ops == 0 {
		return 0
	}
	return float64(r.serverCPU.Microseconds()) / float64(r.ops)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// hammer runs op from n goroutines for d and collects latencies.
func hammer(name string, n int, d time.Duration, op func(worker, i int) error) result {
	var errs atomic.Int64
	lat := make([][]time.Duration, n)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				t0 := time.Now()
				if err := op(w, i); err != nil {
					if errs.Add(1) == 1 {
						fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
					}
					continue
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	r := result{name: name, ops: len(all), elapsed: elapsed, errors: errs.Load()}
	r.p50, r.p99 = percentile(all, 0.50), percentile(all, 0.99)
	r.throughput = float64(len(all)) / elapsed.Seconds()
	return r
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[int(float64(len(d)-1)*p)]
}

type server struct {
	cmd     *exec.Cmd
	dataDir string
	url     string
}

// startServer starts `orca server` on a fresh data directory; extra
// returns further flags given that directory.
func startServer(extra func(dataDir string) ([]string, error)) (*server, error) {
	dir, err := os.MkdirTemp("", "orca-bench-")
	if err != nil {
		return nil, err
	}
	args := []string{"server", "--data-dir", dir, "--https-listen-port", "0", "--bind-address", "127.0.0.1", "--disable-agent", "--log-level", "warn"}
	if *apiOnly {
		args = append(args, "--disable-controller-manager", "--disable-scheduler")
	}
	if extra != nil {
		more, err := extra(dir)
		if err != nil {
			return nil, err
		}
		args = append(args, more...)
	}
	cmd := exec.Command(*orcaBin, args...)
	if *serverEnv != "" {
		cmd.Env = append(os.Environ(), strings.Split(*serverEnv, ",")...)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", *orcaBin, err)
	}
	s := &server{cmd: cmd, dataDir: dir}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "API server ready at "); i >= 0 {
			s.url = strings.TrimSpace(line[i+len("API server ready at "):])
			go func() {
				for sc.Scan() {
				}
			}()
			return s, nil
		}
	}
	return nil, fmt.Errorf("server exited before it was ready")
}

func (s *server) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	os.RemoveAll(s.dataDir)
}

// hammer runs a phase against the server and records the CPU time the
// server process spent on it: for raw etcd that is etcd's own cost, since
// the member runs inside the server.
func (s *server) hammer(name string, n int, d time.Duration, op func(worker, i int) error) result {
	r, _ := s.measure(func() (result, error) { return hammer(name, n, d, op), nil })
	return r
}

// measure runs a phase and records in its result the CPU time and the
// read and write system calls the server process spent on it; either is
// left out when /proc cannot be read.
func (s *server) measure(phase func() (result, error)) (result, error) {
	pid := s.cmd.Process.Pid
	before, cpuErr := procstat.Read(pid)
	sysBefore, sysErr := procstat.Syscalls(pid)
	r, err := phase()
	if after, err := procstat.Read(pid); cpuErr == nil && err == nil && after.CPU > before.CPU {
		r.serverCPU = after.CPU - before.CPU
	}
	if after, err := procstat.Syscalls(pid); sysErr == nil && err == nil && after > sysBefore {
		r.serverSyscalls = after - sysBefore
	}
	return r, err
}

// rssMB reads the server's resident memory.
func (s *server) rssMB() float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

// clients returns n clientsets, each with its own connection, as n
// separate client programs would have.
func clients(kubeconfig string, n int) ([]kubernetes.Interface, error) {
	var out []kubernetes.Interface
	for i := 0; i < n; i++ {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, err
		}
		cfg.QPS, cfg.Burst = 1e6, 1e6
		d := &net.Dialer{Timeout: 10 * time.Second}
		// A dialer of its own keeps client-go from sharing one transport.
		cfg.Dial = d.DialContext
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func run() error {
	ctx := context.Background()
	if *upstreamOnly {
		return runUpstreamCompare(ctx, strings.Repeat("x", 256))
	}
	if *auditOnly {
		return runAuditCost(ctx, strings.Repeat("x", 256))
	}
	if *gateOnly {
		return runGateCost(ctx, strings.Repeat("x", 256))
	}
	if *extensionsOnly {
		return runExtensions(ctx, strings.Repeat("x", 256))
	}
	srv, err := startServer(nil)
	if err != nil {
		return err
	}
	defer srv.stop()
	// The server hands back its start-up pages 15 s after start.
	time.Sleep(20 * time.Second)
	idleRSS := srv.rssMB()

	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{"unix://" + filepath.Join(srv.dataDir, "etcd", "client.sock")}, DialTimeout: 5 * time.Second})
	if err != nil {
		return fmt.Errorf("etcd client: %w", err)
	}
	defer etcd.Close()
	kc := filepath.Join(srv.dataDir, "kubeconfig")
	cs, err := clients(kc, *concurrency)
	if err != nil {
		return err
	}
	c := cs[0]
	for _, ns := range []string{"bench", "fill", "watchbench", "pods"} {
		if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	payload := strings.Repeat("x", 256)
	value := make([]byte, 420) // about a ConfigMap's stored size
	n := *concurrency
	d := *duration

	what := "whole control plane (API server, controller manager, scheduler)"
	if *apiOnly {
		what = "API server only (--disable-controller-manager --disable-scheduler)"
	}
	fmt.Printf("Orca API server benchmark: %s; %d clients, %s per phase, %d watchers\n\n", what, n, d, *watchers)

	if *watchOnly {
		wr, err := srv.watchDelivery(ctx, kc)
		if err != nil {
			return err
		}
		fmt.Println(wr)
		return nil
	}
	// Memory with a known number of objects, before the throughput phases
	// add many more (and their garbage).
	var fillWG sync.WaitGroup
	per := (*objects + n - 1) / n
	for w := 0; w < n; w++ {
		fillWG.Add(1)
		go func(w int) {
			defer fillWG.Done()
			for i := 0; i < per; i++ {
				_, _ = cs[w].CoreV1().ConfigMaps("fill").Create(ctx, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fill-%d-%d", w, i)},
					Data:       map[string]string{"payload": payload},
				}, metav1.CreateOptions{})
			}
		}(w)
	}
	fillWG.Wait()
	time.Sleep(3 * time.Second)
	filledRSS := srv.rssMB()

	rawPut := srv.hammer("raw etcd put", n, d, func(w, i int) error {
		_, err := etcd.Put(ctx, fmt.Sprintf("/bench/raw/%d/%d", w, i), string(value))
		return err
	})
	fmt.Println(rawPut)
	profDone := profileServer(ctx, c, "create", d)
	create := srv.hammer("API create ConfigMap", n, d, createConfigMap(ctx, cs, payload))
	fmt.Println(create)
	profDone()
	rawGet := srv.hammer("raw etcd get", n, d, func(w, i int) error {
		_, err := etcd.Get(ctx, fmt.Sprintf("/bench/raw/%d/%d", w, i%100))
		return err
	})
	fmt.Println(rawGet)
	get := srv.hammer("API get ConfigMap", n, d, func(w, i int) error {
		_, err := cs[w].CoreV1().ConfigMaps("bench").Get(ctx, fmt.Sprintf("cm-%d-%d", w, i%100), metav1.GetOptions{})
		return err
	})
	fmt.Println(get)
	update, apply := updateAndApply(ctx, srv, cs, c, payload)
	profDone = profileServer(ctx, c, "pod", d)
	podCreate := srv.hammer("API create Pod", n, d, func(w, i int) error {
		_, err := cs[w].CoreV1().Pods("pods").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d-%d", w, i), Labels: map[string]string{"app": "bench"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36",
				Command: []string{"sleep", "3600"}, Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}},
		}, metav1.CreateOptions{})
		return err
	})
	fmt.Println(podCreate)
	profDone()
	if *writesOnly {
		fmt.Println()
		printWriteRatios(rawPut, rawGet, create, get, update, apply, podCreate)
		fmt.Printf("idle server RSS:             %.1f MB (target < 80 MB)\n", idleRSS)
		fmt.Printf("server RSS with %d ConfigMaps:   %.1f MB\n", per*n, filledRSS)
		return nil
	}

	list, err := c.CoreV1().ConfigMaps("bench").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	count := len(list.Items)
	listRes := hammer(fmt.Sprintf("API list %d ConfigMaps (rv=0)", count), n, d, func(w, i int) error {
		_, err := cs[w].CoreV1().ConfigMaps("bench").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		return err
	})
	fmt.Println(listRes)
	listLimit := hammer("API list limit=500 (etcd)", n, d, func(w, i int) error {
		_, err := cs[w].CoreV1().ConfigMaps("bench").List(ctx, metav1.ListOptions{Limit: 500})
		return err
	})
	fmt.Println(listLimit)
	time.Sleep(2 * time.Second)
	fullRSS := srv.rssMB()

	wr, err := srv.watchDelivery(ctx, kc)
	if err != nil {
		return err
	}
	fmt.Println(wr)
	if !*apiOnly { // without the controller manager nothing collects
		// A failure here is reported with the figures rather than ending
		// the run: the phases after it do not depend on it.
		if gcTime, err := gcCascade(ctx, c, 1000); err != nil {
			fmt.Printf("garbage collection: FAILED: %v\n", err)
		} else {
			fmt.Printf("garbage collection: owner with 1000 dependents collected in %.0f ms\n", ms(gcTime))
		}
	}

	fmt.Println()
	printWriteRatios(rawPut, rawGet, create, get, update, apply, podCreate)
	fmt.Printf("watch delivery p99:          %.1f ms (target <= 100 ms, %d watchers)\n", ms(wr.p99), *watchers)
	fmt.Printf("idle server RSS:             %.1f MB (target < 80 MB)\n", idleRSS)
	fmt.Printf("server RSS with %d ConfigMaps:   %.1f MB\n", per*n, filledRSS)
	fmt.Printf("server RSS after all phases:  %.1f MB (%d ConfigMaps, %d Pods, after concurrent lists)\n", fullRSS, count+per*n, podCreate.ops)
	// The audit and gate comparisons run on fresh servers of their own,
	// with this one gone so that it takes no CPU from them.
	srv.stop()
	if *auditRounds > 0 {
		fmt.Println()
		if err := runAuditCost(ctx, payload); err != nil {
			return err
		}
	}
	if *gateRounds > 0 {
		fmt.Println()
		if err := runGateCost(ctx, payload); err != nil {
			return err
		}
	}
	if *upstreamBin != "" {
		fmt.Println()
		return runUpstreamCompare(ctx, payload)
	}
	return nil
}

// watchDelivery runs the watch-delivery phase and records the server's
// CPU time and system calls over it, per event delivered.
func (s *server) watchDelivery(ctx context.Context, kubeconfig string) (result, error) {
	return s.measure(func() (result, error) { return watchDelivery(ctx, kubeconfig) })
}

// watchDelivery opens many watchers, writes objects stamped with their send
// time, and measures how long each event takes to reach every watcher.
func watchDelivery(ctx context.Context, kubeconfig string) (result, error) {
	conns := (*watchers + 99) / 100
	cs, err := clients(kubeconfig, conns)
	if err != nil {
		return result{}, err
	}
	const events = 50
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	var ready sync.WaitGroup
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := 0; i < *watchers; i++ {
		w, err := cs[i%conns].CoreV1().ConfigMaps("watchbench").Watch(wctx, metav1.ListOptions{})
		if err != nil {
			return result{}, fmt.Errorf("watch %d: %w", i, err)
		}
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			ready.Done()
			seen := 0
			for ev := range w.ResultChan() {
				if ev.Type != watch.Added {
					continue
				}
				cm := ev.Object.(*corev1.ConfigMap)
				// Only the benchmark's objects count: the namespace also
				// gets the root CA ConfigMap from its controller.
				sent, err := strconv.ParseInt(cm.Annotations["sent"], 10, 64)
				if err != nil {
					continue
				}
				d := time.Since(time.Unix(0, sent))
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
				if seen++; seen == events {
					return
				}
			}
		}()
	}
	ready.Wait()
	time.Sleep(time.Second)
	start := time.Now()
	for i := 0; i < events; i++ {
		_, err := cs[0].CoreV1().ConfigMaps("watchbench").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w-%d", i), Annotations: map[string]string{"sent": strconv.FormatInt(time.Now().UnixNano(), 10)}},
		}, metav1.CreateOptions{})
		if err != nil {
			return result{}, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cancel()
		<-done
	}
	r := result{name: fmt.Sprintf("watch delivery (%d watchers)", *watchers), ops: len(lat), elapsed: time.Since(start)}
	r.p50, r.p99 = percentile(lat, 0.5), percentile(lat, 0.99)
	r.throughput = float64(len(lat)) / r.elapsed.Seconds()
	r.errors = int64(*watchers*events - len(lat))
	return r, nil
}

// createConfigMap is the ConfigMap create phase's operation, the same in
// every phase that compares creates: worker w's i-th ConfigMap in
// namespace bench, labelled, with the payload, through worker w's client.
func createConfigMap(ctx context.Context, cs []kubernetes.Interface, payload string) func(w, i int) error {
	return func(w, i int) error {
		_, err := cs[w].CoreV1().ConfigMaps("bench").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d-%d", w, i), Labels: map[string]string{"bench": "yes"}},
			Data:       map[string]string{"payload": payload},
		}, metav1.CreateOptions{})
		return err
	}
}

// profileServer fetches the server's CPU profile and its allocations over
// the next d when -cpuprofile or -allocprofile is set and phase is
// -profile-phase; the returned function waits for both.
func profileServer(ctx context.Context, c kubernetes.Interface, phase string, d time.Duration) (wait func()) {
	var wg sync.WaitGroup
	secs := strconv.Itoa(int(d.Seconds()) - 1)
	fetch := func(path, file string) {
		if file == "" || phase != *profilePhase {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, err := c.CoreV1().RESTClient().Get().AbsPath(path).Param("seconds", secs).DoRaw(ctx)
			if err == nil {
				err = os.WriteFile(file, data, 0o644)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "profile:", err)
			}
		}()
	}
	fetch("/debug/pprof/profile", *cpuProfile)
	// With seconds, the allocs profile is the difference over that span.
	fetch("/debug/pprof/allocs", *allocProfile)
	return wg.Wait
}

// updateAndApply measures writes to existing ConfigMaps (the first 100 each
// client created): plain updates, then server-side applies of one more key,
// whose cost over an update is the merge and the field ownership.
func updateAndApply(ctx context.Context, srv *server, cs []kubernetes.Interface, c kubernetes.Interface, payload string) (update, apply result) {
	n, d := len(cs), *duration
	profDone := profileServer(ctx, c, "update", d)
	update = srv.hammer("API update ConfigMap", n, d, func(w, i int) error {
		_, err := cs[w].CoreV1().ConfigMaps("bench").Update(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d-%d", w, i%100), Labels: map[string]string{"bench": "yes"}},
			Data:       map[string]string{"payload": payload, "n": strconv.Itoa(i)},
		}, metav1.UpdateOptions{})
		return err
	})
	fmt.Println(update)
	profDone()
	profDone = profileServer(ctx, c, "apply", d)
	apply = srv.hammer("API apply (SSA) ConfigMap", n, d, func(w, i int) error {
		cfg := corev1ac.ConfigMap(fmt.Sprintf("cm-%d-%d", w, i%100), "bench").WithData(map[string]string{"applied": strconv.Itoa(i)})
		_, err := cs[w].CoreV1().ConfigMaps("bench").Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "bench-apply"})
		return err
	})
	fmt.Println(apply)
	profDone()
	return update, apply
}
