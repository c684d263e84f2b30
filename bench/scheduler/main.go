// Command scheduler benchmarks the scheduler the way upstream's
// scheduler_perf does: an in-process control plane (API server, embedded
// etcd, the scheduler) on a temporary directory, N Node objects with
// realistic capacity and labels, M pods created as fast as 16 clients
// can, and the time from the first create to the last bind. It also runs
// the bare algorithm over an in-memory snapshot with no API calls, so the
// API's share of the cost is visible.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"runtime/pprof"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/orca-project/orca/internal/scheduler"
	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/profile"
	"github.com/orca-project/orca/internal/server"
)

var (
	only    = flag.String("run", "", "run only scenarios whose name matches this regular expression")
	clients = flag.Int("clients", 16, "concurrent pod creators")
	skipAPI = flag.Bool("algorithm-only", false, "run only the in-memory algorithm rates")
	cpuProf = flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	child   = flag.Int("scenario", -1, "run one scenario's API measurement in this process (used internally)")
	backlog = flag.Bool("backlog", false, "with -scenario: create every pod first, then start the scheduler and time the drain")
)

type scenario struct {
	name         string
	nodes, pods  int
	antiAffinity bool
	spread       bool
}

var scenarios = []scenario{
	{name: "500 nodes / 1,000 pods", nodes: 500, pods: 1000},
	{name: "5,000 nodes / 10,000 pods", nodes: 5000, pods: 10000},
	{name: "5,000 nodes / 10,000 pods, anti-affinity", nodes: 5000, pods: 10000, antiAffinity: true},
	{name: "5,000 nodes / 10,000 pods, topology spread", nodes: 5000, pods: 10000, spread: true},
}

func main() {
	flag.Parse()
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	// Leader election and the event recorder log through klog; their
	// shutdown complaints are noise in a table of figures.
	klog.SetLogger(logr.Discard())
	if *child >= 0 {
		sc := scenarios[*child]
		r, err := endToEnd(sc, *backlog)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", sc.name+":", err)
			os.Exit(1)
		}
		if *backlog {
			fmt.Printf("%-46s %-10s %9.0f          -          -\n", sc.name, "backlog", r.rate)
			return
		}
		fmt.Printf("%-46s %-10s %9.0f  %9.1f  %9.1f  %10.0f\n", sc.name, "API", r.rate, ms(r.p50), ms(r.p99), r.created)
		return
	}
	fmt.Println("scenario                                       mode          pods/s     p50 ms     p99 ms   created/s")
	for i, sc := range scenarios {
		if ok, _ := regexp.MatchString(*only, sc.name); !ok {
			continue
		}
		rate := algorithm(sc)
		fmt.Printf("%-46s %-10s %9.0f          -          -\n", sc.name, "algorithm", rate)
		if *skipAPI {
			continue
		}
		// Each API measurement runs in a fresh process so one scenario's
		// garbage and goroutines do not slow the next.
		for _, extra := range [][]string{nil, {"-backlog"}} {
			args := append([]string{"-scenario", strconv.Itoa(i), "-clients", strconv.Itoa(*clients)}, extra...)
			cmd := exec.Command(os.Args[0], args...)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintln(os.Stderr, "bench:", sc.name+":", err)
				os.Exit(1)
			}
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

var zones = []string{"zone-a", "zone-b", "zone-c", "zone-d", "zone-e", "zone-f", "zone-g", "zone-h", "zone-i", "zone-j"}

// node is a typical cloud worker: 32 cores, 128 GiB, 110 pods.
func node(i int) *v1.Node {
	name := fmt.Sprintf("node-%05d", i)
	alloc := v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse("32"),
		v1.ResourceMemory:           resource.MustParse("128Gi"),
		v1.ResourcePods:             resource.MustParse("110"),
		v1.ResourceEphemeralStorage: resource.MustParse("500Gi"),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			v1.LabelHostname: name, v1.LabelTopologyZone: zones[i%len(zones)], v1.LabelTopologyRegion: "region-1",
			v1.LabelInstanceTypeStable: "m5.8xlarge", v1.LabelOSStable: "linux", v1.LabelArchStable: "amd64",
		}},
		Status: v1.NodeStatus{Capacity: alloc, Allocatable: alloc, Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
	}
}

// pod is a small web replica; the variants add required anti-affinity
// (groups of nodes/2 pods, one per host) or zone spreading.
func pod(sc scenario, i int) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", i), Namespace: "bench", Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "web", Image: "nginx", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("128Mi")},
		}}}},
	}
	if sc.antiAffinity {
		group := fmt.Sprintf("g%d", i/(sc.nodes/2))
		p.Labels["group"] = group
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"group": group}}, TopologyKey: v1.LabelHostname,
		}}}}
	}
	if sc.spread {
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
			{MaxSkew: 1, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		}
	}
	return p
}

// algorithm schedules every pod against an in-memory cache, assuming each
// placement as the scheduler does, and returns pods per second.
func algorithm(sc scenario) float64 {
	c := framework.NewCache()
	for i := range sc.nodes {
		c.AddNode(node(i))
	}
	fw := profile.Default(0)
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	for i := range sc.pods {
		p := pod(sc, i)
		p.UID = types.UID(fmt.Sprintf("uid-%d", i))
		pi := framework.NewPodInfo(p)
		var res framework.Result
		var err error
		c.WithSnapshot(func(s *framework.Snapshot) {
			res, err = fw.Schedule(context.Background(), framework.NewCycleState(), pi, s, rng)
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: algorithm:", err)
			os.Exit(1)
		}
		p.Spec.NodeName = res.Node
		_ = c.AssumePod(pi)
	}
	return float64(sc.pods) / time.Since(start).Seconds()
}

type e2eResult struct {
	// created is the create rate alone: the ceiling for the bind rate.
	created  float64
	rate     float64
	p50, p99 time.Duration
}

// endToEnd measures through the API. With backlog, the in-process
// scheduler is off while the pods are created; a scheduler is then started
// on its own and the time to bind the whole backlog is measured, which
// shows the scheduler's rate apart from the API server's create rate.
func endToEnd(sc scenario, backlog bool) (e2eResult, error) {
	dir, err := os.MkdirTemp("", "orca-bench-scheduler-")
	if err != nil {
		return e2eResult{}, err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	inst, err := server.Start(ctx, server.Options{
		DataDir: dir, BindAddress: "127.0.0.1", Port: 0, DisableScheduler: backlog,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return e2eResult{}, fmt.Errorf("start server: %w", err)
	}
	defer inst.Stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", inst.Kubeconfig)
	if err != nil {
		return e2eResult{}, err
	}
	cfg.QPS, cfg.Burst = 100000, 100000
	cs := kubernetes.NewForConfigOrDie(cfg)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		return e2eResult{}, err
	}
	if err := parallel(*clients, sc.nodes, func(i int) error {
		n := node(i)
		created, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		created.Status = n.Status
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return e2eResult{}, fmt.Errorf("create nodes: %w", err)
	}
	// Let the scheduler's informers take in the nodes before the clock starts.
	time.Sleep(3 * time.Second)

	// An informer rather than a bare watch: it resumes by itself if the
	// server drops a watcher that fell behind during the create burst.
	created := make([]atomic.Int64, sc.pods)
	bound := make([]int64, sc.pods)
	done := make(chan struct{})
	var mu sync.Mutex
	n := 0
	seen := func(obj any) {
		p, ok := obj.(*v1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return
		}
		var i int
		if _, err := fmt.Sscanf(p.Name, "pod-%d", &i); err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if bound[i] != 0 {
			return
		}
		bound[i] = time.Now().UnixNano()
		if n++; n == sc.pods {
			close(done)
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("bench"))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, o any) { seen(o) }}); err != nil {
		return e2eResult{}, err
	}
	ictx, icancel := context.WithCancel(ctx)
	defer icancel()
	factory.Start(ictx.Done())
	factory.WaitForCacheSync(ictx.Done())
	start := time.Now()
	if err := parallel(*clients, sc.pods, func(i int) error {
		created[i].Store(time.Now().UnixNano())
		_, err := cs.CoreV1().Pods("bench").Create(ctx, pod(sc, i), metav1.CreateOptions{})
		return err
	}); err != nil {
		return e2eResult{}, fmt.Errorf("create pods: %w", err)
	}
	createRate := float64(sc.pods) / time.Since(start).Seconds()
	if backlog {
		s, err := scheduler.New(scheduler.Config{Client: cs, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			return e2eResult{}, err
		}
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		start = time.Now()
		go func() { _ = s.Run(sctx) }()
	}
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		return e2eResult{}, fmt.Errorf("not every pod was bound within 5 minutes")
	}
	var last int64
	lat := make([]time.Duration, sc.pods)
	for i := range bound {
		last = max(last, bound[i])
		lat[i] = time.Duration(bound[i] - created[i].Load())
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	elapsed := time.Duration(last - start.UnixNano())
	return e2eResult{created: createRate, rate: float64(sc.pods) / elapsed.Seconds(), p50: lat[len(lat)/2], p99: lat[len(lat)*99/100]}, nil
}

// parallel runs f(0..n-1) on c goroutines and returns the first error.
func parallel(c, n int, f func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
