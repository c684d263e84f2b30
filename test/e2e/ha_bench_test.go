package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestWriteFailoverTimes is `make bench-ha-failover`: ten times, the etcd
// leader's server of a three-server control plane is killed while writes
// start every 10 ms through another server, and the time from the kill
// to the first write acknowledged is measured through the API and,
// as the baseline, straight to etcd through a surviving member.
func TestWriteFailoverTimes(t *testing.T) {
	if os.Getenv("ORCA_BENCH_HA_FAILOVER") == "" {
		t.Skip("a benchmark: make bench-ha-failover")
	}
	const rounds = 10
	servers, _, _, etcd := startHACluster(t)
	ns := "bench-ha"
	var api, raw []time.Duration
	for round := range rounds {
		leader := leaderOf(t, etcd, servers)
		var other *haServer
		for _, s := range servers {
			if s != leader {
				other = s
				break
			}
		}
		if round == 0 {
			if _, err := other.client.CoreV1().Namespaces().Create(context.Background(), &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// The baseline writes to the same surviving member, straight.
		direct := etcdClientAt(t, filepath.Join(servers[0].dir, "tls"), []string{"https://" + other.ip + ":2379"})
		time.Sleep(2 * time.Second)
		a, r := measureResume(t, other.client, ns, direct, leader.kill)
		direct.Close()
		api, raw = append(api, a), append(raw, r)
		t.Logf("round %d: killed %s; API writes resumed after %v, etcd writes after %v", round+1, leader.name, a.Round(time.Millisecond), r.Round(time.Millisecond))
		if err := leader.start("", ""); err != nil {
			t.Fatal(err)
		}
		if err := leader.waitReady(2 * time.Minute); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, func() error { return allVoting(etcd, 3) })
	}
	p := func(ds []time.Duration, q float64) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[int(q*float64(len(s)-1)+0.5)]
	}
	t.Logf("write failover over %d leader kills: API p50 %v p99 %v; etcd p50 %v p99 %v; ratio of p50 %.2f",
		rounds, p(api, 0.5).Round(time.Millisecond), p(api, 0.99).Round(time.Millisecond),
		p(raw, 0.5).Round(time.Millisecond), p(raw, 0.99).Round(time.Millisecond), float64(p(api, 0.5))/float64(p(raw, 0.5)))
}

// measureResume starts writes every 10 ms through the API server c and
// straight to the etcd member etcd, calls kill, and returns how long
// after it the first write of each kind that started after it was
// acknowledged.
func measureResume(t *testing.T, c kubernetes.Interface, ns string, etcd *clientv3.Client, kill func()) (api, raw time.Duration) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var mu sync.Mutex
	var killedAt time.Time
	first := map[string]time.Time{}
	record := func(kind string, call time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if !killedAt.IsZero() && call.After(killedAt) {
			if _, ok := first[kind]; !ok {
				first[kind] = time.Now()
			}
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	seq := 0
	go func() {
		time.Sleep(500 * time.Millisecond)
		mu.Lock()
		killedAt = time.Now()
		mu.Unlock()
		kill()
	}()
	deadline := time.After(60 * time.Second)
	for {
		mu.Lock()
		done := len(first) == 2
		mu.Unlock()
		if done {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("writes did not resume within a minute: %v", first)
		case <-tick.C:
		}
		seq++
		name := fmt.Sprintf("w-%d-%d", time.Now().UnixNano(), seq)
		wg.Add(2)
		go func() {
			defer wg.Done()
			call := time.Now()
			octx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if _, err := c.CoreV1().ConfigMaps(ns).Create(octx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err == nil {
				record("api", call)
			}
		}()
		go func() {
			defer wg.Done()
			call := time.Now()
			octx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if _, err := etcd.Put(clientv3.WithRequireLeader(octx), "/bench-ha/"+name, "x"); err == nil {
				record("raw", call)
			}
		}()
	}
	return first["api"].Sub(killedAt), first["raw"].Sub(killedAt)
}

// allVoting checks that n members have started and vote.
func allVoting(c *clientv3.Client, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.MemberList(ctx)
	if err != nil {
		return err
	}
	voters := 0
	for _, m := range resp.Members {
		if m.Name != "" && !m.IsLearner {
			voters++
		}
	}
	if voters != n {
		return fmt.Errorf("%d voting members of %d", voters, len(resp.Members))
	}
	return nil
}
