// Command podstartup measures how fast one node starts pods: a whole
// single-node cluster (in-process control plane, `orca agent` as its own
// process with its own containerd, as test/e2e runs it), N busybox pods
// created at once, and the time from each create request to the pod being
// Running and Ready as a watcher sees it. The same work done straight
// through CRI against the same containerd is the baseline, so the
// kubelet's own cost shows as a ratio. It needs root and containerd.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

var (
	pods    = flag.Int("pods", 30, "pods created at once in each round")
	timeout = flag.Duration("timeout", 3*time.Minute, "how long a round may take to make every pod Ready")
	target  = flag.Duration("target", time.Second, "target for p99 create→Running")
	// replaceRounds is how many replicas are deleted one after another
	// (and how many single pods are started as the baseline).
	replaceRounds = flag.Int("replace-rounds", 10, "rounds of the replace-one-replica figure")
	// upstream's kubelet defaults to 50/s, burst 100 (kubeAPIQPS,
	// kubeAPIBurst); -agent-qps 50 shows what that would change.
	agentQPS = flag.Int("agent-qps", 0, "the agent's API client rate (burst twice that); 0 keeps `orca agent`'s own")
)

func main() {
	if os.Getenv(roleEnv) == "agent" {
		os.Exit(runAgentProcess())
	}
	flag.Parse()
	// Informers and the event recorder log through klog; their shutdown
	// complaints are noise in a table of figures.
	klog.SetLogger(logr.Discard())
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "bench: needs root to run containers")
		os.Exit(1)
	}
	if _, err := exec.LookPath("containerd"); err != nil {
		fmt.Fprintln(os.Stderr, "bench: containerd is not installed (hack/install-deps.sh installs it)")
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type rssReading struct{ agent, containerd, shims int64 }

type cpuReading struct{ agent, containerd, shims time.Duration }

func run(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "orca-bench-pods-")
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "bench: starting the control plane and the node")
	c, err := startCluster(ctx, dir)
	defer c.close()
	if err != nil {
		return fmt.Errorf("%w\nagent log:\n%s", err, c.tail(30))
	}
	if err := waitServiceAccount(ctx, c); err != nil {
		return err
	}
	cpid, err := c.containerdPid()
	if err != nil {
		return err
	}
	readRSS := func() rssReading {
		var r rssReading
		r.agent, _ = rssOf(c.agent.Process.Pid)
		r.containerd, _ = rssOf(cpid)
		for _, p := range shims(c.socket()) {
			n, _ := rssOf(p)
			r.shims += n
		}
		return r
	}
	readCPU := func() cpuReading {
		r := cpuReading{agent: cpuOf(c.agent.Process.Pid), containerd: cpuOf(cpid)}
		for _, p := range shims(c.socket()) {
			r.shims += cpuOf(p)
		}
		return r
	}
	// The node's first status reports and image lists settle before the
	// idle reading.
	time.Sleep(5 * time.Second)
	idle := readRSS()

	var rounds []roundResult
	for _, name := range []string{"cold", "warm"} {
		fmt.Fprintf(os.Stderr, "bench: %s round, %d pods\n", name, *pods)
		before := readCPU()
		times, err := runRound(ctx, c, name, *pods, *timeout)
		if err != nil {
			return fmt.Errorf("%s round: %w\nagent log:\n%s", name, err, c.tail(30))
		}
		after := readCPU()
		// Shims are born in the round: their whole CPU time is the round's.
		cpu := cpuReading{agent: after.agent - before.agent, containerd: after.containerd - before.containerd, shims: after.shims}
		rounds = append(rounds, roundResult{name: name, times: times, rss: readRSS(), cpu: cpu})
		if err := deleteRound(ctx, c, *timeout); err != nil {
			return fmt.Errorf("%s round: %w", name, err)
		}
	}
	fmt.Fprintf(os.Stderr, "bench: replace one replica, %d rounds\n", *replaceRounds)
	replaced, err := runReplace(ctx, c, *replaceRounds, *timeout)
	if err != nil {
		return fmt.Errorf("replace: %w\nagent log:\n%s", err, c.tail(30))
	}
	fmt.Fprintf(os.Stderr, "bench: CRI baseline, %d pods\n", *pods)
	base, err := criBaseline(ctx, c, *pods)
	if err != nil {
		return fmt.Errorf("CRI baseline: %w", err)
	}
	report(os.Stdout, *pods, idle, rounds, base, *target)
	reportReplace(os.Stdout, replaced)
	return nil
}

type roundResult struct {
	name  string
	times map[string]*podTimes
	rss   rssReading
	cpu   cpuReading
}

// span collects b-a over the pods where both moments are known.
func span(times map[string]*podTimes, a, b func(*podTimes) time.Time) []time.Duration {
	var out []time.Duration
	for _, t := range times {
		if a(t).IsZero() || b(t).IsZero() {
			continue
		}
		out = append(out, b(t).Sub(a(t)))
	}
	return out
}

func report(w *os.File, n int, idle rssReading, rounds []roundResult, base []criTimes, target time.Duration) {
	sec := func(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
	row := func(label string, ds ...dist) {
		fmt.Fprintf(w, "%-52s", label)
		for _, d := range ds {
			if d.n == 0 {
				fmt.Fprintf(w, " %7s %7s %7s", "-", "-", "-")
				continue
			}
			fmt.Fprintf(w, " %7s %7s %7s", sec(d.p50), sec(d.p99), sec(d.max))
		}
		fmt.Fprintln(w)
	}
	sent := func(t *podTimes) time.Time { return t.sent }
	moments := []struct {
		label string
		a, b  func(*podTimes) time.Time
	}{
		{"create → Running (watch)", sent, func(t *podTimes) time.Time { return t.running }},
		{"create → Ready, probe passed (watch)", sent, (*podTimes).probed},
		{"  create → RunPodSandbox began (sandbox CreatedAt)", sent, func(t *podTimes) time.Time { return t.sandbox }},
		{"  → container created (rest of sandbox + create)", func(t *podTimes) time.Time { return t.sandbox }, func(t *podTimes) time.Time { return t.created }},
		{"  container created → started (StartedAt)", func(t *podTimes) time.Time { return t.created }, func(t *podTimes) time.Time { return t.started }},
		{"  started → kubelet decides Running (agent log)", func(t *podTimes) time.Time { return t.started }, func(t *podTimes) time.Time { return t.decided }},
		{"  kubelet decides Running → watch sees it", func(t *podTimes) time.Time { return t.decided }, func(t *podTimes) time.Time { return t.running }},
		{"  Running → Ready, probe passed (watch)", func(t *podTimes) time.Time { return t.running }, (*podTimes).probed},
		{"  create → Ready first reported (watch)", sent, func(t *podTimes) time.Time { return t.ready }},
		{"  create → PodReadyToStartContainers (watch)", sent, func(t *podTimes) time.Time { return t.sandboxSeen }},
	}
	fmt.Fprintf(w, "\npod start-up, %d pods created at once on one node; seconds\n", n)
	fmt.Fprintf(w, "%-52s", "")
	for _, r := range rounds {
		fmt.Fprintf(w, " %-23s", r.name+": p50 p99 max")
	}
	fmt.Fprintln(w)
	dists := map[string][]dist{}
	for _, m := range moments {
		var ds []dist
		for _, r := range rounds {
			ds = append(ds, distOf(span(r.times, m.a, m.b)))
		}
		dists[m.label] = ds
		row(m.label, ds...)
	}
	pick := func(f func(criTimes) time.Duration) dist {
		var ds []time.Duration
		for _, b := range base {
			ds = append(ds, f(b))
		}
		return distOf(ds)
	}
	criTotal := pick(criTimes.total)
	criReady := pick(func(b criTimes) time.Duration { return b.total() + b.exec })
	for _, r := range rounds {
		dropped := 0
		for _, t := range r.times {
			if t.dropped {
				dropped++
			}
		}
		fmt.Fprintf(w, "%s: %d of %d pods were reported Ready before their first readiness probe, then not Ready until it passed\n", r.name, dropped, n)
		var updates []int
		for _, t := range r.times {
			updates = append(updates, t.updates)
		}
		slices.Sort(updates)
		if len(updates) > 0 {
			fmt.Fprintf(w, "%s: updates a watch saw per pod until settled (the kubelet's status writes): min %d, median %d, max %d\n", r.name, updates[0], updates[len(updates)/2], updates[len(updates)-1])
		}
	}
	fmt.Fprintf(w, "\nbaseline: the same %d pods straight through CRI, at once (warm)\n", n)
	row("RunPodSandbox", pick(func(b criTimes) time.Duration { return b.sandbox }))
	row("CreateContainer", pick(func(b criTimes) time.Duration { return b.create }))
	row("StartContainer", pick(func(b criTimes) time.Duration { return b.start }))
	row("sandbox + create + start (≈ Running)", criTotal)
	row("  + ExecSync true (≈ Ready)", criReady)

	fmt.Fprintln(w, "\nkubelet / CRI alone (ratio of the same percentile)")
	for i, r := range rounds {
		run, ready := dists[moments[0].label][i], dists[moments[1].label][i]
		fmt.Fprintf(w, "%-52s p50 %5.1f×  p99 %5.1f×\n", r.name+" create → Running / CRI start", ratio(run.p50, criTotal.p50), ratio(run.p99, criTotal.p99))
		fmt.Fprintf(w, "%-52s p50 %5.1f×  p99 %5.1f×\n", r.name+" create → Ready / CRI start + exec", ratio(ready.p50, criReady.p50), ratio(ready.p99, criReady.p99))
	}

	mb := func(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
	fmt.Fprintln(w, "\nmemory (VmRSS) and CPU time")
	fmt.Fprintf(w, "%-52s agent %s, containerd %s\n", "idle node, before any pod", mb(idle.agent), mb(idle.containerd))
	for _, r := range rounds {
		fmt.Fprintf(w, "%-52s agent %s, containerd %s, %d shims %s\n", fmt.Sprintf("%s round, %d pods running", r.name, n),
			mb(r.rss.agent), mb(r.rss.containerd), n, mb(r.rss.shims))
		fmt.Fprintf(w, "%-52s agent %.2f s, containerd %.2f s, shims %.2f s\n", r.name+" round CPU (create → all Ready)",
			r.cpu.agent.Seconds(), r.cpu.containerd.Seconds(), r.cpu.shims.Seconds())
	}

	var parts []string
	for i, r := range rounds {
		p99 := dists[moments[0].label][i].p99
		verdict := "met"
		if p99 > target {
			verdict = "NOT met"
		}
		parts = append(parts, fmt.Sprintf("%s p99 create→Running %s s (target ≤ %s: %s, %.1f× CRI alone)", r.name, sec(p99), target, verdict, ratio(p99, criTotal.p99)))
	}
	last := rounds[len(rounds)-1]
	fmt.Fprintf(w, "\nsummary: %d pods: %s; CRI alone p99 %s s; agent RSS %s idle, %s with %d pods; containerd %s; shims %s\n",
		n, strings.Join(parts, "; "), sec(criTotal.p99), mb(idle.agent), mb(last.rss.agent), n, mb(last.rss.containerd), mb(last.rss.shims))
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
