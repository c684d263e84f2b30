// Command workloads benchmarks the workload controllers: how long the
// controller manager takes to bring a Deployment of 1,000 replicas from
// creation to every pod bound and Ready, and to roll it to a new template,
// each against a baseline of the same pod writes made directly through the
// API in the same run; and what the controller manager costs in CPU and
// memory while 10,000 pods sit idle.
//
// The control plane (API server on embedded etcd, scheduler) runs in this
// process with its controller manager turned off; the controller manager
// runs as a child process (this program re-executed) so that its CPU time
// and resident set are its own. The nodes are SIMULATED (internal/simnode,
// the same as `orca agent --simulate`, run in this process): N Nodes with
// Leases and status, and a kubelet stand-in that reports bound pods
// Running and Ready and finishes graceful deletions through the API; no
// container runs. The real scheduler binds pods to them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/orca-project/orca/bench/internal/procstat"
	"github.com/orca-project/orca/internal/server"
	"github.com/orca-project/orca/internal/simnode"
)

var (
	nodes       = flag.Int("nodes", 100, "Node objects the scheduler binds pods to")
	replicas    = flag.Int("replicas", 1000, "replicas of the timed Deployment")
	deployments = flag.Int("deployments", 10, "Deployments of -replicas each present during the idle measurement")
	clients     = flag.Int("clients", 16, "concurrent writers of the baseline, and workers of the simulated kubelet")
	cmQPS       = flag.Float64("cm-qps", 500, "the controller manager's client QPS (orca server gives its in-process manager 500)")
	cmBurst     = flag.Int("cm-burst", 1000, "the controller manager's client burst; the baseline's client gets the same limits")
	settle      = flag.Duration("settle", 15*time.Second, "wait after the last pod is Ready before the idle measurement")
	idle        = flag.Duration("idle", 30*time.Second, "length of the idle measurement")
	rounds      = flag.Int("rounds", 3, "rounds of the timed phases; the table shows medians")
	timeout     = flag.Duration("timeout", 10*time.Minute, "give up on a phase after this long")
	cmChild     = flag.String("controller-manager", "", "run the controller manager against this kubeconfig (used internally)")
)

func main() {
	flag.Parse()
	// Leader election and event recorders log through klog; their
	// shutdown complaints are noise in a table of figures.
	klog.SetLogger(logr.Discard())
	var err error
	if *cmChild != "" {
		err = runControllerManager(*cmChild)
	} else {
		err = run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// bench is one run's cluster: the in-process control plane, clients, the
// pod informer every wait reads, and the controller manager's process.
type bench struct {
	cs      kubernetes.Interface // unlimited: the benchmark's own reads and waits
	limited kubernetes.Interface // the controller manager's rate limits: the baseline's writes
	pods    cache.Indexer
	sim     *simnode.Simulator
	cm      *exec.Cmd
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "orca-bench-workloads-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	inst, err := server.Start(ctx, server.Options{
		DataDir: dir, BindAddress: "127.0.0.1", Port: 0, DisableControllerManager: true, ClusterDNSPort: -1,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	defer inst.Stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", inst.Kubeconfig)
	if err != nil {
		return err
	}
	b := &bench{}
	fast := rest.CopyConfig(cfg)
	fast.QPS, fast.Burst = -1, 0
	b.cs = kubernetes.NewForConfigOrDie(fast)
	slow := rest.CopyConfig(cfg)
	slow.QPS, slow.Burst = float32(*cmQPS), *cmBurst
	b.limited = kubernetes.NewForConfigOrDie(slow)

	factory := informers.NewSharedInformerFactory(b.cs, 0)
	inf := factory.Core().V1().Pods().Informer()
	b.pods = inf.GetIndexer()
	ictx, icancel := context.WithCancel(ctx)
	factory.Start(ictx.Done())
	// Shutdown waits for the informers, which stop only when told to.
	defer func() { icancel(); factory.Shutdown() }()
	factory.WaitForCacheSync(ctx.Done())
	if b.sim, err = simnode.New(simnode.Options{Client: b.cs, Nodes: *nodes, Prefix: "node-", Workers: *clients,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}); err != nil {
		return err
	}
	simDone := make(chan error, 1)
	go func() { simDone <- b.sim.Run(ictx) }()
	defer func() { icancel(); <-simDone }()

	b.cm = exec.CommandContext(ctx, os.Args[0], "-controller-manager", inst.Kubeconfig,
		"-cm-qps", fmt.Sprint(*cmQPS), "-cm-burst", fmt.Sprint(*cmBurst))
	b.cm.Stderr = os.Stderr
	b.cm.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := b.cm.Start(); err != nil {
		return fmt.Errorf("start controller manager: %w", err)
	}
	defer func() { _ = b.cm.Process.Kill(); _ = b.cm.Wait() }()
	// The service-account controller giving each namespace its default
	// account shows the controller manager leads; pods need the account.
	for _, ns := range []string{"baseline", "deploy"} {
		if err := b.namespace(ctx, ns); err != nil {
			return err
		}
	}

	start, err := procstat.Read(b.cm.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("workloads benchmark: %d SIMULATED nodes (internal/simnode, %d workers: leases, bound pods -> Running+Ready, graceful deletions finished; no containers), real scheduler\n", *nodes, *clients)
	fmt.Printf("controller manager in its own process (pid %d, VmRSS %.1f MB with no pods), client QPS %.0f burst %d; baseline: %d writers under the same limits\n\n",
		b.cm.Process.Pid, float64(start.RSS)/1e6, *cmQPS, *cmBurst, *clients)
	fmt.Printf("%-58s %9s %13s %9s %11s\n", "phase (median of -rounds)", "seconds", "min-max", "ratio", "CM CPU s")
	return b.phases(ctx)
}

func (b *bench) phases(ctx context.Context) error {
	n := *replicas
	names := []string{
		fmt.Sprintf("baseline: %d bare pods created, bound, Ready", n),
		fmt.Sprintf("Deployment of %d: created -> all pods bound and Ready", n),
		fmt.Sprintf("baseline: %d bare pods deleted and recreated, Ready", n),
		fmt.Sprintf("rolling update of %d (25%% surge/unavailable) to done", n),
	}
	var times, cpus [4][]time.Duration
	for r := range *rounds {
		last := r == *rounds-1
		d, err := b.round(ctx, r, !last)
		if err != nil {
			return fmt.Errorf("round %d: %w", r+1, err)
		}
		for i := range d {
			times[i] = append(times[i], d[i].wall)
			cpus[i] = append(cpus[i], d[i].cpu)
		}
	}
	for i, name := range names {
		base := time.Duration(0)
		if i%2 == 1 {
			base = median(times[i-1])
		}
		cpu := time.Duration(-1)
		if i%2 == 1 {
			cpu = median(cpus[i])
		}
		row(name, times[i], base, cpu)
	}
	return b.idleUsage(ctx)
}

// timing is one phase's wall time and the controller manager's CPU time.
type timing struct{ wall, cpu time.Duration }

// round runs the four timed phases with objects of its own names; with
// cleanup it then deletes them all and waits until they are gone.
func (b *bench) round(ctx context.Context, r int, cleanup bool) ([4]timing, error) {
	n := *replicas
	web := fmt.Sprintf("web-%d", r)
	var out [4]timing
	var err error
	// Creation: bare pods, then the Deployment.
	out[0], err = b.measure(ctx, func() error {
		if err := parallel(*clients, n, func(i int) error {
			_, err := b.limited.CoreV1().Pods("baseline").Create(ctx, barePod(r, i, "v1"), metav1.CreateOptions{})
			return err
		}); err != nil {
			return err
		}
		return b.waitPods(ctx, "baseline", "bare", n, "v1")
	})
	if err != nil {
		return out, fmt.Errorf("baseline create: %w", err)
	}
	out[1], err = b.measure(ctx, func() error {
		if _, err := b.cs.AppsV1().Deployments("deploy").Create(ctx, deployment(web, n), metav1.CreateOptions{}); err != nil {
			return err
		}
		return b.waitDeployment(ctx, web, n, "v1")
	})
	if err != nil {
		return out, fmt.Errorf("deployment create: %w", err)
	}
	// Replacement: every bare pod deleted and recreated, then a rolling
	// update of the Deployment's template.
	out[2], err = b.measure(ctx, func() error {
		if err := parallel(*clients, n, func(i int) error {
			if err := b.limited.CoreV1().Pods("baseline").Delete(ctx, barePod(r, i, "v1").Name, metav1.DeleteOptions{}); err != nil {
				return err
			}
			_, err := b.limited.CoreV1().Pods("baseline").Create(ctx, barePod(r, i, "v2"), metav1.CreateOptions{})
			return err
		}); err != nil {
			return err
		}
		return b.waitPods(ctx, "baseline", "bare", n, "v2")
	})
	if err != nil {
		return out, fmt.Errorf("baseline replace: %w", err)
	}
	out[3], err = b.measure(ctx, func() error {
		patch := `{"spec":{"template":{"metadata":{"labels":{"version":"v2"}}}}}`
		if _, err := b.cs.AppsV1().Deployments("deploy").Patch(ctx, web, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return err
		}
		return b.waitDeployment(ctx, web, n, "v2")
	})
	if err != nil {
		return out, fmt.Errorf("rolling update: %w", err)
	}
	if err := b.cs.CoreV1().Pods("baseline").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return out, fmt.Errorf("delete bare pods: %w", err)
	}
	if err := b.waitPods(ctx, "baseline", "bare", 0, ""); err != nil {
		return out, fmt.Errorf("delete bare pods: %w", err)
	}
	if !cleanup {
		return out, nil
	}
	// The garbage collector removes the ReplicaSets and pods; the
	// simulated kubelet finishes the pods' graceful deletion.
	if err := b.cs.AppsV1().Deployments("deploy").Delete(ctx, web, metav1.DeleteOptions{}); err != nil {
		return out, fmt.Errorf("delete deployment: %w", err)
	}
	if err := b.waitPods(ctx, "deploy", web, 0, ""); err != nil {
		return out, fmt.Errorf("delete deployment: %w", err)
	}
	return out, nil
}

// idleUsage adds -deployments minus one Deployments to the last round's,
// lets the cluster settle, and reads the controller manager's usage while
// nothing changes.
func (b *bench) idleUsage(ctx context.Context) error {
	n := *replicas
	var more []string
	for i := range *deployments - 1 {
		more = append(more, fmt.Sprintf("idle-%d", i))
	}
	u, err := procstat.Read(b.cm.Process.Pid)
	if err != nil {
		return err
	}
	start := time.Now()
	for _, name := range more {
		if _, err := b.cs.AppsV1().Deployments("deploy").Create(ctx, deployment(name, n), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create deployment %s: %w", name, err)
		}
	}
	for _, name := range more {
		if err := b.waitDeployment(ctx, name, n, "v1"); err != nil {
			return fmt.Errorf("deployment %s: %w", name, err)
		}
	}
	elapsed := time.Since(start)
	filled, err := procstat.Read(b.cm.Process.Pid)
	if err != nil {
		return err
	}
	total := len(b.podsIn("deploy"))
	fmt.Printf("\n%d more Deployments of %d created at once: all Ready in %.1f s (CM CPU %.1f s); %d pods in the cluster\n",
		len(more), n, elapsed.Seconds(), (filled.CPU - u.CPU).Seconds(), total)
	time.Sleep(*settle)
	pid := b.cm.Process.Pid
	u0, err := procstat.Read(pid)
	if err != nil {
		return err
	}
	writes0 := podWrites(b.sim.Counts())
	time.Sleep(*idle)
	u1, err := procstat.Read(pid)
	if err != nil {
		return err
	}
	if w := podWrites(b.sim.Counts()) - writes0; w != 0 {
		fmt.Printf("note: the simulated kubelet wrote %d times during the idle window (the cluster was not quiet)\n", w)
	}
	fmt.Printf("controller manager idle with %d pods, over %s (after %s settling): CPU %.2f s = %.2f%% of one core; VmRSS %.1f MB\n",
		total, *idle, *settle, (u1.CPU - u0.CPU).Seconds(), 100*(u1.CPU-u0.CPU).Seconds()/idle.Seconds(), float64(u1.RSS)/1e6)
	return nil
}

// row prints one phase: the median over the rounds and the spread, and
// the ratio of medians against the baseline when there is one.
func row(name string, ds []time.Duration, base time.Duration, cpu time.Duration) {
	ratio, c := "-", "-"
	d := median(ds)
	if base > 0 {
		ratio = fmt.Sprintf("%.2f", d.Seconds()/base.Seconds())
	}
	if cpu >= 0 {
		c = fmt.Sprintf("%.1f", cpu.Seconds())
	}
	lo, hi := slices.Min(ds), slices.Max(ds)
	fmt.Printf("%-58s %9.2f %13s %9s %11s\n", name, d.Seconds(), fmt.Sprintf("%.2f-%.2f", lo.Seconds(), hi.Seconds()), ratio, c)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// measure times f and the controller manager's CPU time during it.
func (b *bench) measure(ctx context.Context, f func() error) (timing, error) {
	u0, err := procstat.Read(b.cm.Process.Pid)
	if err != nil {
		return timing{}, err
	}
	start := time.Now()
	if err := f(); err != nil {
		return timing{}, err
	}
	d := time.Since(start)
	u1, err := procstat.Read(b.cm.Process.Pid)
	if err != nil {
		return timing{}, err
	}
	return timing{wall: d, cpu: u1.CPU - u0.CPU}, ctx.Err()
}

func (b *bench) namespace(ctx context.Context, name string) error {
	if _, err := b.cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return poll(ctx, time.Minute, func() (bool, error) {
		_, err := b.cs.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

func (b *bench) podsIn(ns string) []*v1.Pod {
	objs, _ := b.pods.ByIndex(cache.NamespaceIndex, ns)
	pods := make([]*v1.Pod, 0, len(objs))
	for _, o := range objs {
		pods = append(pods, o.(*v1.Pod))
	}
	return pods
}

// waitPods waits until the pods labelled app=app in ns are exactly n, all
// of version and Ready.
func (b *bench) waitPods(ctx context.Context, ns, app string, n int, version string) error {
	return poll(ctx, *timeout, func() (bool, error) { return settled(b.podsIn(ns), app, n, version), nil })
}

// waitDeployment waits until the Deployment's pods are settled at version
// and the controller's own status says the rollout is complete.
func (b *bench) waitDeployment(ctx context.Context, name string, n int, version string) error {
	return poll(ctx, *timeout, func() (bool, error) {
		if !settled(b.podsIn("deploy"), name, n, version) {
			return false, nil
		}
		d, err := b.cs.AppsV1().Deployments("deploy").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		s := d.Status
		return s.ObservedGeneration >= d.Generation && s.Replicas == int32(n) && s.UpdatedReplicas == int32(n) &&
			s.ReadyReplicas == int32(n) && s.AvailableReplicas == int32(n), nil
	})
}

// settled says whether exactly n pods carry app=app, every one of them
// labelled version, Ready and not terminating.
func settled(pods []*v1.Pod, app string, n int, version string) bool {
	count := 0
	for _, p := range pods {
		if p.Labels["app"] != app {
			continue
		}
		count++
		if p.DeletionTimestamp != nil || p.Labels["version"] != version || !ready(p) {
			return false
		}
	}
	return count == n
}

func ready(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// poll calls cond every 20 ms until it is true, fails, or limit passes.
func poll(ctx context.Context, limit time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not done within %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// podWrites counts the simulated kubelet's pod writes (statuses and
// finished deletions), not its node heartbeats.
func podWrites(c simnode.Counts) int64 { return c.PodStatuses + c.PodDeletions }

// quick makes a pod's simulated containers stop as soon as it is deleted
// rather than at the end of its grace period, as the benchmark's httpd
// would on SIGTERM, so that replacement phases do not wait 30 s.
var quick = map[string]string{simnode.StopDurationAnnotation: "0s"}

// podSpec is the same for bare pods and the Deployments' template, so the
// baseline writes the same objects the controllers do.
func podSpec() v1.PodSpec {
	return v1.PodSpec{Containers: []v1.Container{{
		Name: "web", Image: "localhost/orca/busybox:1.35", ImagePullPolicy: v1.PullIfNotPresent,
		Command: []string{"httpd", "-f", "-p", "8080"},
		Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi"),
		}},
	}}}
}

func barePod(round, i int, version string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bare-%d-%s-%04d", round, version, i), Labels: map[string]string{"app": "bare", "version": version},
			Annotations: quick},
		Spec: podSpec(),
	}
}

func deployment(name string, n int) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	r := int32(n)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &r,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name, "version": "v1"}, Annotations: quick},
				Spec:       podSpec(),
			},
		},
	}
}

// parallel runs f(0..n-1) on c goroutines and returns the first error.
func parallel(c, n int, f func(i int) error) error {
	var next atomic.Int64
	var mu sync.Mutex
	var errs []error
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
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
