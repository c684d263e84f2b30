package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/orca-project/orca/internal/scheduler"
	"github.com/orca-project/orca/internal/scheduler/schedconfig"
)

// packingConfig is what a user writes to pack pods: a profile whose
// NodeResourcesFit scores by MostAllocated, without BalancedAllocation
// (which favours the emptier node for cpu-only pods). Leader election is
// off, as this scheduler runs beside the shared server's own.
const packingConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: packing-scheduler
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
`

// startScheduler runs a scheduler with the configuration until the test
// ends.
func startScheduler(t *testing.T, file string) {
	t.Helper()
	cfg, err := schedconfig.Decode([]byte(file))
	if err != nil {
		t.Fatalf("decode configuration: %v", err)
	}
	s, err := scheduler.New(scheduler.Config{Client: client, Configuration: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("new scheduler: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("packing scheduler: %v", err)
		}
	})
}

// perNode counts the pods on each node, largest first, with zeros for
// nodes without any.
func perNode(placed map[string]string, nodes []string) []int {
	counts := map[string]int{}
	for _, n := range placed {
		counts[n]++
	}
	var out []int
	for _, n := range nodes {
		out = append(out, counts[n])
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

func TestSchedulerConfigPackingProfile(t *testing.T) {
	startScheduler(t, packingConfig)
	e := newSchedEnv(t)
	// Every pod needs the namespace's default service account.
	eventually(t, 30*time.Second, func() error {
		_, err := client.CoreV1().ServiceAccounts(e.ns).Get(context.Background(), "default", metav1.GetOptions{})
		return err
	})
	var packNodes, spreadNodes []string
	for i := range 3 {
		packNodes = append(packNodes, e.node(fmt.Sprintf("pack-%d", i), 4, map[string]string{"set": "pack"}))
		spreadNodes = append(spreadNodes, e.node(fmt.Sprintf("spread-%d", i), 4, map[string]string{"set": "spread"}))
	}
	on := func(set, schedulerName string) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.NodeSelector = map[string]string{"set": set}
			p.Spec.SchedulerName = schedulerName
		}
	}
	// A pod no profile serves is left alone by both schedulers.
	e.pod("stray", "1", on("pack", "no-such-scheduler"))

	// Six one-CPU pods on three four-CPU nodes: the packing profile fills
	// one node, then the next.
	var packed []string
	for i := range 6 {
		packed = append(packed, e.pod(fmt.Sprintf("packed-%d", i), "1", on("pack", "packing-scheduler")).Name)
	}
	if got := perNode(e.placements(packed...), packNodes); !slices.Equal(got, []int{4, 2, 0}) {
		t.Errorf("packing profile placed pods per node %v, want [4 2 0]", got)
	}
	// The default profile, given the same pods, spreads them.
	var spread []string
	for i := range 3 {
		spread = append(spread, e.pod(fmt.Sprintf("spread-%d", i), "1", on("spread", v1.DefaultSchedulerName)).Name)
	}
	if got := perNode(e.placements(spread...), spreadNodes); !slices.Equal(got, []int{1, 1, 1}) {
		t.Errorf("default profile placed pods per node %v, want [1 1 1]", got)
	}

	// Events name the profile that placed the pod.
	if src := eventSource(t, e.ns, "packed-0", "Scheduled"); src != "packing-scheduler" {
		t.Errorf("packed-0's Scheduled event comes from %q, want packing-scheduler", src)
	}
	if src := eventSource(t, e.ns, "spread-0", "Scheduled"); src != v1.DefaultSchedulerName {
		t.Errorf("spread-0's Scheduled event comes from %q, want %s", src, v1.DefaultSchedulerName)
	}

	// The stray pod, seen by both schedulers long ago, is untouched: no
	// node, no condition, no event.
	stray, err := client.CoreV1().Pods(e.ns).Get(context.Background(), "stray", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stray.Spec.NodeName != "" || len(stray.Status.Conditions) != 0 || stray.Status.Phase != v1.PodPending {
		t.Errorf("stray pod: node %q, phase %s, conditions %+v; want it untouched", stray.Spec.NodeName, stray.Status.Phase, stray.Status.Conditions)
	}
	evs, err := client.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{FieldSelector: fields.Set{"involvedObject.name": "stray"}.String()})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) != 0 {
		t.Errorf("stray pod has events: %+v", evs.Items)
	}
}

// eventSource waits for an event with reason on the pod and returns the
// component that recorded it.
func eventSource(t *testing.T, ns, pod, reason string) string {
	t.Helper()
	var src string
	eventually(t, 20*time.Second, func() error {
		evs, err := client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: fields.Set{"involvedObject.name": pod}.String()})
		if err != nil {
			return err
		}
		for _, ev := range evs.Items {
			if ev.Reason == reason {
				src = ev.Source.Component
				return nil
			}
		}
		return fmt.Errorf("no %s event for %s", reason, pod)
	})
	return src
}
