package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// TestVolumeStartupTimes is `make bench-storage`: the time from creating
// a claim and its pod to the pod Running with the volume mounted, for
// 100 local-path claims at once, next to the same pods with an emptyDir
// in the same run. It runs only when ORCA_BENCH_STORAGE is set.
func TestVolumeStartupTimes(t *testing.T) {
	if os.Getenv("ORCA_BENCH_STORAGE") == "" {
		t.Skip("a benchmark: make bench-storage runs it")
	}
	needCluster(t)
	const n = 100
	const rounds = 2
	var local, empty []time.Duration
	var localWall, emptyWall time.Duration
	for r := range rounds {
		d, wall := startBatch(t, fmt.Sprintf("bench-empty-%d", r), n, false)
		empty, emptyWall = append(empty, d...), emptyWall+wall
		d, wall = startBatch(t, fmt.Sprintf("bench-local-%d", r), n, true)
		local, localWall = append(local, d...), localWall+wall
	}
	slices.Sort(local)
	slices.Sort(empty)
	pct := func(d []time.Duration, p float64) time.Duration { return d[int(float64(len(d)-1)*p)] }
	t.Logf("| volume | pods | p50 | p99 | all Running |")
	t.Logf("| emptyDir | %d×%d | %v | %v | %v |", rounds, n, pct(empty, 0.5).Round(time.Millisecond), pct(empty, 0.99).Round(time.Millisecond), (emptyWall / rounds).Round(time.Millisecond))
	t.Logf("| local-path claim | %d×%d | %v | %v | %v |", rounds, n, pct(local, 0.5).Round(time.Millisecond), pct(local, 0.99).Round(time.Millisecond), (localWall / rounds).Round(time.Millisecond))
	t.Logf("Storage: local-path over emptyDir: p50 %.2f, p99 %.2f, all Running %.2f",
		float64(pct(local, 0.5))/float64(pct(empty, 0.5)), float64(pct(local, 0.99))/float64(pct(empty, 0.99)), float64(localWall)/float64(emptyWall))
}

// startBatch creates n pods (with a local-path claim each, or an
// emptyDir) at once in a namespace of their own and returns each pod's
// time from its first create to Running, and the time until all ran.
// The namespace and its volumes are removed before it returns.
func startBatch(t *testing.T, ns string, n int, claims bool) ([]time.Duration, time.Duration) {
	t.Helper()
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer removeNamespace(t, ns)
	eventually(t, 30*time.Second, func() error {
		_, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	started := make([]time.Time, n)
	var mu sync.Mutex
	begin := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("p%03d", i)
			p := simplePod(ns, name, "exec sleep 3600")
			p.Spec.NodeName = ""
			p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
			p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}}
			mu.Lock()
			started[i] = time.Now()
			mu.Unlock()
			if claims {
				p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}}
				if _, err := client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, newClaim(name, "16Mi"), metav1.CreateOptions{}); err != nil {
					t.Error(err)
					return
				}
			} else {
				p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
			}
			if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	out := make([]time.Duration, 0, n)
	seen := map[string]bool{}
	timeout := time.After(10 * time.Minute)
	for len(seen) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("pod watch ended")
			}
			p, isPod := ev.Object.(*v1.Pod)
			if !isPod || ev.Type == watch.Deleted || seen[p.Name] || p.Status.Phase != v1.PodRunning {
				continue
			}
			var i int
			if _, err := fmt.Sscanf(p.Name, "p%03d", &i); err != nil {
				continue
			}
			seen[p.Name] = true
			mu.Lock()
			out = append(out, time.Since(started[i]))
			mu.Unlock()
		case <-timeout:
			t.Fatalf("%d of %d pods Running after 10 minutes", len(seen), n)
		}
	}
	return out, time.Since(begin)
}

// removeNamespace deletes a namespace and waits until it, its claims and
// their volumes are gone, so the next batch starts on an idle node.
func removeNamespace(t *testing.T, ns string) {
	ctx := context.Background()
	_ = client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	eventually(t, 5*time.Minute, func() error {
		if _, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s still there: %v", ns, err)
		}
		pvs, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, pv := range pvs.Items {
			if pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Namespace == ns {
				return fmt.Errorf("volume %s of %s still there", pv.Name, ns)
			}
		}
		return nil
	})
}
