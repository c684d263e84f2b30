package integration

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// serverProcess is a control plane running in a child process, so that the
// test can kill it the way a crash or an OOM kill would.
type serverProcess struct {
	cmd    *exec.Cmd
	cfg    *rest.Config
	client kubernetes.Interface
	log    string
}

// startServerProcess re-executes the test binary as a server on dir and
// waits for its READY line. The process is killed when the test ends, even
// if it fails half-way.
func startServerProcess(t *testing.T, ctx context.Context, dir string) *serverProcess {
	t.Helper()
	logPath := filepath.Join(dir, fmt.Sprintf("server-%d.log", time.Now().UnixNano()))
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=server", "ORCA_TEST_DATA_DIR="+filepath.Join(dir, "data"))
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serverProcess{cmd: cmd, log: logPath}
	t.Cleanup(p.kill)

	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if url, ok := strings.CutPrefix(sc.Text(), "READY "); ok {
				ready <- url
			}
		}
		close(ready)
	}()
	select {
	case url, ok := <-ready:
		if !ok {
			t.Fatalf("server exited before it was ready; log:\n%s", p.logText())
		}
		t.Logf("server pid %d ready at %s", cmd.Process.Pid, url)
	case <-ctx.Done():
		t.Fatalf("server not ready: %v; log:\n%s", ctx.Err(), p.logText())
	}
	// The server rewrites the kubeconfig with its new port before READY.
	p.cfg, err = clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "data", "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	p.cfg.QPS, p.cfg.Burst = 1000, 1000
	p.client = kubernetes.NewForConfigOrDie(p.cfg)
	return p
}

// kill is kill -9: no shutdown path runs, etcd gets no chance to flush.
func (p *serverProcess) kill() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

func (p *serverProcess) logText() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// cmState is what the test knows about one ConfigMap.
type cmState struct {
	value string
	rv    int64
}

func rvOf(t *testing.T, obj metav1.Object) int64 {
	t.Helper()
	rv, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion of %s: %v", obj.GetName(), err)
	}
	return rv
}

// TestRestartAfterKillKeepsWritesAndResumesWatch kills the control plane
// with SIGKILL while clients write, restarts it on the same data and checks
// what clients were promised: every acknowledged write survives with its
// data and resourceVersion, nothing appears twice, and a watch resumes from
// the last resourceVersion a client saw before the crash, delivering
// exactly the writes after it, without the client having to relist.
func TestRestartAfterKillKeepsWritesAndResumesWatch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
	defer cancel()
	// A short directory: etcd listens on unix sockets inside it.
	dir, err := os.MkdirTemp("", "orca-restart-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })

	srv1 := startServerProcess(t, ctx, dir)
	const ns = "restart"
	if _, err := srv1.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The namespace's kube-root-ca.crt is part of the state from the start,
	// before the informer lists.
	waitRootCA(t, srv1.client, ns)

	// seen mirrors what the informer's handlers were told, in order, and
	// lastRV is the resourceVersion of the last event among them: exactly
	// what a controller would resume from.
	var (
		seenMu sync.Mutex
		seen   = map[string]cmState{}
		lastRV int64
		dups   []string
	)
	// The handler stalls, as a busy controller does, after a few phase-2
	// events, so that a good part of the writes before the crash come
	// after the version it resumes from.
	var phase2, seen2 atomic.Int64
	stall := make(chan struct{})
	var unstall sync.Once
	release := func() { unstall.Do(func() { close(stall) }) }
	defer release()
	record := func(obj any, added bool) {
		cm := obj.(*corev1.ConfigMap)
		rv, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64)
		seenMu.Lock()
		if _, ok := seen[cm.Name]; ok && added {
			dups = append(dups, cm.Name)
		}
		seen[cm.Name] = cmState{value: cm.Data["v"], rv: rv}
		lastRV = rv
		seenMu.Unlock()
		if phase2.Load() == 1 && seen2.Add(1) == 20 {
			<-stall
		}
	}
	infCtx, stopInformer := context.WithCancel(ctx)
	defer stopInformer()
	factory := informers.NewSharedInformerFactoryWithOptions(srv1.client, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { record(obj, true) },
		UpdateFunc: func(_, obj any) { record(obj, false) },
		DeleteFunc: func(any) { t.Error("no ConfigMap is ever deleted") },
	})
	factory.Start(infCtx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}

	// acked holds every write the server acknowledged; attempted every
	// value a write tried to set, acknowledged or not, because a write in
	// flight when the server dies may or may not have been committed.
	var (
		ackMu     sync.Mutex
		acked     = map[string]cmState{}
		attempted = map[string][]string{}
	)
	attempt := func(name, value string) {
		ackMu.Lock()
		attempted[name] = append(attempted[name], value)
		ackMu.Unlock()
	}
	// ack runs on the writers' goroutines, where t.Fatal is not allowed.
	ack := func(cm *corev1.ConfigMap) {
		rv, err := strconv.ParseInt(cm.ResourceVersion, 10, 64)
		if err != nil {
			t.Errorf("%s acknowledged with resourceVersion %q", cm.Name, cm.ResourceVersion)
		}
		ackMu.Lock()
		acked[cm.Name] = cmState{value: cm.Data["v"], rv: rv}
		ackMu.Unlock()
	}
	cms := srv1.client.CoreV1().ConfigMaps(ns)

	// Phase 1: N concurrent creates while the server is healthy.
	const n, workers = 300, 16
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				name, value := fmt.Sprintf("cm-%03d", i), fmt.Sprintf("v1-%d", i)
				attempt(name, value)
				out, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": value}}, metav1.CreateOptions{})
				if err != nil {
					t.Errorf("create %s on a healthy server: %v", name, err)
					return
				}
				ack(out)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// Let the informer catch up so that the crash lands in the middle of
	// phase 2, not in a backlog of phase 1.
	eventually(t, 20*time.Second, func() error {
		seenMu.Lock()
		defer seenMu.Unlock()
		if len(seen) != n+1 {
			return fmt.Errorf("informer saw %d of %d and %s", len(seen), n+1, rootCAName)
		}
		return nil
	})

	// Phase 2: every write touches its own key (an update of a phase-1
	// object or a new object), so the outcome of each is unambiguous. The
	// server is killed once some of them are acknowledged, while the
	// others are in flight.
	var acked2 atomic.Int64
	phase2.Store(1)
	killAfter := int64(60)
	killed := make(chan struct{})
	var next2 atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next2.Add(1)) - 1
				if i >= 2*n {
					return
				}
				var out *corev1.ConfigMap
				var err error
				if i%2 == 0 {
					name := fmt.Sprintf("cm-%03d", i/2)
					value := fmt.Sprintf("v2-%d", i/2)
					ackMu.Lock()
					rv := acked[name].rv
					ackMu.Unlock()
					attempt(name, value)
					out, err = cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: strconv.FormatInt(rv, 10)}, Data: map[string]string{"v": value}}, metav1.UpdateOptions{})
				} else {
					name, value := fmt.Sprintf("late-%03d", i), fmt.Sprintf("v1-late-%d", i)
					attempt(name, value)
					out, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": value}}, metav1.CreateOptions{})
				}
				if err != nil {
					select {
					case <-killed:
						return // the server is gone: the write's fate is unknown
					default:
						t.Errorf("write before the kill failed: %v", err)
						return
					}
				}
				ack(out)
				if acked2.Add(1) == killAfter {
					// Announce first: every error from here on is the kill's.
					close(killed)
					srv1.kill()
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-killed:
	default:
		t.Fatalf("all phase-2 writes finished before the kill")
	}
	stopInformer()
	seenMu.Lock()
	resumeRV := lastRV
	state := make(map[string]cmState, len(seen))
	for k, v := range seen {
		state[k] = v
	}
	if len(dups) > 0 {
		t.Errorf("informer saw ADDED twice for %v", dups)
	}
	seenMu.Unlock()
	release()
	after := 0
	for _, a := range acked {
		if a.rv > resumeRV {
			after++
		}
	}
	t.Logf("%d writes acknowledged before the kill, %d of them after the informer's last resourceVersion %d", acked2.Load(), after, resumeRV)

	srv2 := startServerProcess(t, ctx, dir)
	cms2 := srv2.client.CoreV1().ConfigMaps(ns)

	// Resume the watch from the last version the informer saw. A sentinel
	// written after it opens marks the end of the writes from before the
	// crash.
	w, err := cms2.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatInt(resumeRV, 10)})
	if err != nil {
		t.Fatalf("resume watch from %d: %v", resumeRV, err)
	}
	sentinel, err := cms2.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "sentinel"}, Data: map[string]string{"v": "end"}}, metav1.CreateOptions{})
	if err != nil {
		w.Stop()
		t.Fatal(err)
	}
	var events []watch.Event
	func() {
		defer w.Stop()
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatalf("resumed watch closed after %d events", len(events))
				}
				if ev.Type == watch.Error {
					t.Fatalf("resumed watch from %d failed: %+v", resumeRV, ev.Object)
				}
				if ev.Type == watch.Bookmark {
					continue
				}
				if ev.Object.(*corev1.ConfigMap).Name == "sentinel" {
					return
				}
				events = append(events, ev)
			case <-ctx.Done():
				t.Fatalf("resumed watch: sentinel not seen after %d events", len(events))
			}
		}
	}()

	prevRV := resumeRV
	for _, ev := range events {
		cm := ev.Object.(*corev1.ConfigMap)
		rv := rvOf(t, cm)
		if rv <= prevRV {
			t.Errorf("event %s %s at %d does not follow %d: replayed or out of order", ev.Type, cm.Name, rv, prevRV)
		}
		prevRV = rv
		_, existed := state[cm.Name]
		switch {
		case ev.Type == watch.Added && existed, ev.Type == watch.Modified && !existed, ev.Type == watch.Deleted:
			t.Errorf("event %s %s at %d contradicts the state before it (existed %v)", ev.Type, cm.Name, rv, existed)
		}
		if a, ok := acked[cm.Name]; ok && a.rv == rv && a.value != cm.Data["v"] {
			t.Errorf("%s at %d: watch has %q, write acknowledged %q", cm.Name, rv, cm.Data["v"], a.value)
		}
		state[cm.Name] = cmState{value: cm.Data["v"], rv: rv}
	}
	if sr := rvOf(t, sentinel); prevRV >= sr {
		t.Errorf("events after the sentinel's version %d", sr)
	}
	for name, a := range acked {
		if a.rv > resumeRV {
			found := false
			for _, ev := range events {
				if cm := ev.Object.(*corev1.ConfigMap); cm.Name == name && rvOf(t, cm) == a.rv {
					found = true
				}
			}
			if !found {
				t.Errorf("acknowledged write %s at %d missing from the resumed watch", name, a.rv)
			}
		}
	}
	t.Logf("resumed watch delivered %d events after %d", len(events), resumeRV)
	if after == 0 {
		t.Errorf("no acknowledged write came after the resume point: the resume was not tested")
	}

	// The resume must not have cost a list: a client that relists after a
	// restart turns every API server restart into a thundering herd.
	if lists := requestCount(t, ctx, srv2.client, "LIST", "configmaps"); lists != 0 {
		t.Errorf("the new server served %d LISTs of configmaps; resuming should need none", lists)
	}
	if creates := requestCount(t, ctx, srv2.client, "POST", "configmaps"); creates != 1 {
		t.Errorf("the new server counted %d CREATEs of configmaps, want 1 (the sentinel): metrics misread?", creates)
	}

	// Now the state: the list on the new server must equal the state
	// before the crash plus the resumed events, hold every acknowledged
	// write as acknowledged, and nothing no client tried to write.
	list, err := cms2.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for i := range list.Items {
		cm := &list.Items[i]
		if names[cm.Name] {
			t.Errorf("%s listed twice", cm.Name)
		}
		names[cm.Name] = true
		if cm.Name == "sentinel" {
			continue
		}
		got := cmState{value: cm.Data["v"], rv: rvOf(t, cm)}
		if want, ok := state[cm.Name]; !ok || want != got {
			t.Errorf("%s after restart is %+v; state before the crash plus the resumed events says %+v (known %v)", cm.Name, got, want, ok)
		}
		if cm.Name != rootCAName && !contains(attempted[cm.Name], got.value) {
			t.Errorf("%s holds %q, which no client wrote", cm.Name, got.value)
		}
	}
	if len(names) != len(state)+1 {
		t.Errorf("list after restart holds %d objects; expected %d and the sentinel", len(names), len(state))
	}
	for name, a := range acked {
		if s := state[name]; s != a && s.rv <= a.rv {
			t.Errorf("acknowledged write %s = %+v lost; after restart %+v", name, a, s)
		}
	}

	// A fresh informer on the new server starts from the same state.
	factory2 := informers.NewSharedInformerFactoryWithOptions(srv2.client, 0, informers.WithNamespace(ns))
	inf2 := factory2.Core().V1().ConfigMaps().Informer()
	factory2.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf2.HasSynced) {
		t.Fatal("informer on the restarted server did not sync")
	}
	for name, a := range acked {
		obj, ok, _ := inf2.GetStore().GetByKey(ns + "/" + name)
		if !ok {
			t.Errorf("acknowledged %s missing from the new informer", name)
			continue
		}
		cm := obj.(*corev1.ConfigMap)
		if got := (cmState{value: cm.Data["v"], rv: rvOf(t, cm)}); got != a && got.rv <= a.rv {
			t.Errorf("new informer has %s = %+v, acknowledged %+v", name, got, a)
		}
	}
	if got := len(inf2.GetStore().List()); got != len(names) {
		t.Errorf("new informer holds %d objects, list %d", got, len(names))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// requestCount sums apiserver_request_total over the series of one verb
// and resource, as /metrics exposes it.
func requestCount(t *testing.T, ctx context.Context, c kubernetes.Interface, verb, resource string) int {
	t.Helper()
	body, err := c.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	total := 0
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") ||
			!strings.Contains(line, `verb="`+verb+`"`) || !strings.Contains(line, `resource="`+resource+`"`) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		total += int(v)
	}
	return total
}
