package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMetricsOverhead is `make bench-metrics`: the test node's agent
// process with 100 sleeping pods, its CPU (utime+stime from
// /proc/PID/stat) and RSS over a fixed interval, in three settings of one
// run: the agent restarted with stats sampling off, then with sampling on
// (the 10 s housekeeping, and the API server's 15 s scrape of
// /metrics/resource) and nobody else asking, and the same while a client
// GETs /stats/summary every 15 s; the last two alternate. It runs only
// when ORCA_BENCH_METRICS is set.
func TestMetricsOverhead(t *testing.T) {
	if os.Getenv("ORCA_BENCH_METRICS") == "" {
		t.Skip("a benchmark: make bench-metrics runs it")
	}
	needCluster(t)
	const pods = 100
	const rounds = 2
	const interval = 60 * time.Second
	ns := namespace(t)
	ctx := context.Background()
	for i := range pods {
		p := simplePod(ns, fmt.Sprintf("sleep-%03d", i), "")
		p.Spec.Containers[0].Command = []string{"sleep", "3600"}
		createPod(t, p)
	}
	eventually(t, 5*time.Minute, func() error {
		list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		n := 0
		for _, p := range list.Items {
			if p.Status.Phase == v1.PodRunning {
				n++
			}
		}
		if n < pods {
			return fmt.Errorf("%d of %d pods running", n, pods)
		}
		return nil
	})
	token := serviceAccountToken(t, ns, "bench-reader")
	bindNodeReader(t, ns, "bench-reader")
	// restart runs the agent again with the stats interval given, and
	// waits for its kubelet to serve (every pod in its summary when
	// sampling), then for its start-up work to settle.
	restart := func(statsInterval string) {
		stopAgent(false)
		t.Setenv("ORCA_TEST_STATS_INTERVAL", statsInterval)
		if err := startAgent(); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, func() error {
			code, body, err := kubeletTry(token, "/stats/summary")
			switch {
			case err != nil:
				return err
			case statsInterval != "":
				return nil // serving, with nothing to say
			case code != http.StatusOK || strings.Count(body, `"podRef"`) < pods:
				return fmt.Errorf("/stats/summary: %d, %d pods", code, strings.Count(body, `"podRef"`))
			}
			return nil
		})
		time.Sleep(30 * time.Second)
	}

	restart("-1s")
	offCPU, offRSS := measureAgent(t, agentProc.Process.Pid, rounds*interval, nil)
	restart("")
	pid := agentProc.Process.Pid
	var idleCPU, scrapedCPU time.Duration
	var idleRSS, scrapedRSS int64
	for range rounds {
		cpu, rss := measureAgent(t, pid, interval, nil)
		idleCPU, idleRSS = idleCPU+cpu, max(idleRSS, rss)
		cpu, rss = measureAgent(t, pid, interval, func() {
			if code, body := kubeletGet(t, token, "/stats/summary"); code != http.StatusOK {
				t.Errorf("/stats/summary: %d %s", code, body)
			}
		})
		scrapedCPU, scrapedRSS = scrapedCPU+cpu, max(scrapedRSS, rss)
	}
	total := rounds * interval
	share := func(cpu time.Duration) float64 { return 100 * float64(cpu) / float64(total) }
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	t.Logf("| agent, %d pods, %d×%v | CPU (%% of a core) | RSS (MiB) |", pods, rounds, interval)
	t.Logf("| stats sampling off | %.2f | %.1f |", share(offCPU), mib(offRSS))
	t.Logf("| sampling every 10 s, nobody asking but the 15 s /metrics/resource scrape | %.2f | %.1f |", share(idleCPU), mib(idleRSS))
	t.Logf("| same, and /stats/summary every 15 s | %.2f | %.1f |", share(scrapedCPU), mib(scrapedRSS))
	ratio := func(a, b time.Duration) float64 { return float64(a) / float64(max(b, time.Millisecond)) }
	t.Logf("Metrics: /stats/summary every 15 s adds %.2f%% of a core (ratio %.2f); sampling and the resource scrape add %.2f%% (ratio %.2f), RSS %+.1f MiB",
		share(scrapedCPU)-share(idleCPU), ratio(scrapedCPU, idleCPU), share(idleCPU)-share(offCPU), ratio(idleCPU, offCPU), mib(idleRSS-offRSS))
}

// measureAgent is the CPU the process used over d and its RSS at the
// end, calling scrape at the start and every 15 s when set.
func measureAgent(t *testing.T, pid int, d time.Duration, scrape func()) (time.Duration, int64) {
	t.Helper()
	before := processCPU(t, pid)
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if scrape != nil {
			scrape()
		}
		time.Sleep(min(15*time.Second, time.Until(end)))
	}
	return processCPU(t, pid) - before, processRSS(t, pid)
}

// processCPU is utime+stime of /proc/PID/stat (clock ticks of 10 ms).
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command, which may hold spaces, in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func processRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
