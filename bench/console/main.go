// Command console times the web console in headless Chromium against an
// in-process control plane with no node: how long a pod's status change
// written to the API takes to show in the pods view, and how the pods view
// loads with 10,000 pods in its namespace (first paint, first rows, the
// JavaScript heap).
//
// No kubelet runs: pod statuses written through the API's status
// subresource stand in for one, as a kubelet writes them.
//
//	make bench-console ARGS='-changes 100 -pods 10000'
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"golang.org/x/sync/errgroup"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/server"
)

var (
	chromium = flag.String("chromium", "/usr/bin/chromium", "the Chromium to drive (Debian's; nothing is downloaded)")
	changes  = flag.Int("changes", 100, "pod status changes timed from the API write to the page")
	visible  = flag.Int("visible", 10, "pods in the latency namespace (all of them on screen)")
	pods     = flag.Int("pods", 10000, "pods in the namespace of the load measurement")
	loads    = flag.Int("loads", 3, "loads of the pods view over -pods pods; the figures are medians")
	workers  = flag.Int("workers", 32, "concurrent writers creating the pods")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-console:", err)
		os.Exit(1)
	}
}

func run() error {
	if _, err := os.Stat(*chromium); err != nil {
		return fmt.Errorf("%s: %w (hack/install-deps.sh installs Debian's chromium)", *chromium, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "orca-bench-console-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	inst, err := server.Start(ctx, server.Options{
		DataDir: dir, BindAddress: "127.0.0.1", Port: 0,
		// Nothing but the API and the console: no controller moves a pod,
		// no scheduler binds one, so every change is the benchmark's own.
		DisableControllerManager: true, DisableScheduler: true, ClusterDNSPort: -1,
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
	cfg.QPS, cfg.Burst = -1, 0
	cs := kubernetes.NewForConfigOrDie(cfg)
	token, err := adminToken(ctx, cs)
	if err != nil {
		return err
	}

	version, _ := exec.Command(*chromium, "--version").Output()
	fmt.Printf("bench-console: orca server in-process (API only: no controller manager, no scheduler, no node);\n")
	fmt.Printf("  pod statuses written through the API's status subresource stand in for a kubelet\n")
	fmt.Printf("  browser: %s, headless, 1366x768, one tab\n", strings.TrimSpace(string(version)))
	fmt.Printf("  command: go run ./bench/console -changes %d -visible %d -pods %d -loads %d\n\n", *changes, *visible, *pods, *loads)

	profile, err := os.MkdirTemp("", "orca-bench-console-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(*chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.Flag("no-proxy-server", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1366, 768),
	)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	if err := chromedp.Do(browser); err != nil {
		return fmt.Errorf("start %s: %w", *chromium, err)
	}
	base := inst.URL + "/ui/"

	if err := latency(browser, cs, base, token); err != nil {
		return err
	}
	return load(browser, cfg, cs, base, token)
}

// adminToken is a cluster-admin service account's token from a
// TokenRequest, as `orca console` signs the admin in.
func adminToken(ctx context.Context, cs kubernetes.Interface) (string, error) {
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bench-console"}}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-console"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "bench-console", Namespace: "default"}},
	}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, "bench-console", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}

// makePods creates n pods bound to simulated nodes in ns, and gives each
// the status a kubelet writes for a running container.
func makePods(ctx context.Context, cs kubernetes.Interface, ns string, n int) ([]*v1.Pod, error) {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	// With no controller manager, the namespace's default service account
	// (which admission looks pods' up in) is the benchmark's to make.
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	out := make([]*v1.Pod, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(*workers)
	for i := range n {
		g.Go(func() error {
			p := &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", i), Namespace: ns, Labels: map[string]string{"app": "bench", "shard": fmt.Sprint(i % 10)}},
				Spec: v1.PodSpec{
					NodeName:   fmt.Sprintf("sim-node-%d", i%50),
					Containers: []v1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "3600"}}},
				},
			}
			p, err := cs.CoreV1().Pods(ns).Create(gctx, p, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			now, started := metav1.Now(), true
			p.Status = v1.PodStatus{
				Phase: v1.PodRunning, HostIP: "10.0.0.1", PodIP: fmt.Sprintf("10.42.%d.%d", i/250, i%250+1), StartTime: &now,
				Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now}},
				ContainerStatuses: []v1.ContainerStatus{{
					Name: "main", Image: "busybox", ImageID: "sha256:0", Ready: true, Started: &started,
					State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}},
				}},
			}
			if p, err = cs.CoreV1().Pods(ns).UpdateStatus(gctx, p, metav1.UpdateOptions{}); err != nil {
				return err
			}
			out[i] = p
			return nil
		})
	}
	return out, g.Wait()
}

// tab is a signed-in tab showing the pods view of ns.
func tab(browser context.Context, base, token, ns string) (context.Context, context.CancelFunc, error) {
	ctx, cancel := chromedp.NewContext(browser)
	fail := func(what string, err error) (context.Context, context.CancelFunc, error) {
		cancel()
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := chromedp.Do(ctx); err != nil {
		return fail("open a tab", err)
	}
	steps := []struct {
		what string
		a    chromedp.Action[chromedp.Void]
	}{
		{"sign in", chromedp.Navigate(base + "#token=" + token)},
		{"signed in", void(chromedp.Poll[bool](`document.body.hasAttribute('data-signed-in')`, chromedp.WithPollingTimeout(30*time.Second)))},
		{"namespace " + ns + " in the switcher", void(chromedp.Poll[bool](`[...(document.querySelector('select[data-namespace]') || {options: []}).options].some(o => o.value === `+quote(ns)+`)`, chromedp.WithPollingTimeout(30*time.Second)))},
		{"pick the namespace", void(chromedp.Evaluate[chromedp.Void](`(() => {
			const s = document.querySelector('select[data-namespace]');
			s.value = ` + quote(ns) + `;
			s.dispatchEvent(new Event('input', {bubbles: true}));
			s.dispatchEvent(new Event('change', {bubbles: true}));
			location.hash = '#/pods';
		})()`))},
		{"the pods view", void(chromedp.Poll[bool](`!!document.querySelector('[data-view=pods] [data-key^=`+quote(ns+"/")+`]')`, chromedp.WithPollingTimeout(60*time.Second)))},
	}
	for _, s := range steps {
		tctx, tcancel := context.WithTimeout(ctx, 90*time.Second)
		err := chromedp.Do(tctx, s.a)
		tcancel()
		if err != nil {
			return fail(s.what, err)
		}
	}
	return ctx, cancel, nil
}

func void[T any](a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, t)
		return chromedp.Void{}, err
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The page's side of the latency measurement: a MutationObserver notes the
// moment the wanted pod's STATUS cell reads the wanted text (the DOM has
// changed; the frame that shows it follows) and the start of the next
// animation frame (the change on screen). Both are
// performance.timeOrigin + performance.now(): milliseconds since the epoch
// on the machine's clock, the clock Go's time.Now reads.
const observer = `(() => {
	window.__benchSeen = {};
	window.__benchWant = null;
	const check = () => {
		const w = window.__benchWant;
		if (!w || window.__benchSeen[w.id]) return;
		const c = document.querySelector('[data-view=pods] [data-key="' + w.key + '"] [data-col=status]');
		if (c && c.textContent.trim() === w.text) {
			const s = {dom: performance.timeOrigin + performance.now()};
			window.__benchSeen[w.id] = s;
			requestAnimationFrame(() => { s.frame = performance.timeOrigin + performance.now(); });
		}
	};
	new MutationObserver(check).observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
})()`

func latency(browser context.Context, cs kubernetes.Interface, base, token string) error {
	ctx := context.Background()
	const ns = "latency"
	list, err := makePods(ctx, cs, ns, *visible)
	if err != nil {
		return fmt.Errorf("create pods: %w", err)
	}
	tabCtx, cancel, err := tab(browser, base, token, ns)
	if err != nil {
		return err
	}
	defer cancel()
	// Every pod's row is on screen, so none waits to be scrolled into view.
	if err := chromedp.Do(tabCtx, void(chromedp.Poll[bool](fmt.Sprintf(`document.querySelectorAll('[data-view=pods] [data-key^="%s/"]').length === %d`, ns, *visible), chromedp.WithPollingTimeout(30*time.Second))),
		void(chromedp.Evaluate[chromedp.Void](observer))); err != nil {
		return fmt.Errorf("rows of the latency pods: %w", err)
	}
	// The two clocks: the page's reading between two of Go's.
	var skew, skewErr float64
	for range 5 {
		before := time.Now()
		v, err := chromedp.Run(tabCtx, chromedp.Evaluate[float64](`performance.timeOrigin + performance.now()`))
		after := time.Now()
		if err != nil {
			return err
		}
		mid := float64(before.UnixNano()+after.UnixNano()) / 2 / 1e6
		if e := float64(after.Sub(before).Microseconds()) / 2000; skewErr == 0 || e < skewErr {
			skew, skewErr = v-mid, e
		}
	}

	var dom, frame, write []float64
	for i := range *changes {
		p := list[i%len(list)]
		want := fmt.Sprintf("Step%03d", i)
		if err := chromedp.Do(tabCtx, void(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`window.__benchWant = {id: %d, key: %s, text: %s}`, i, quote(ns+"/"+p.Name), quote(want))))); err != nil {
			return err
		}
		next := p.DeepCopy()
		next.Status.ContainerStatuses[0].Ready = false
		next.Status.ContainerStatuses[0].State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: want, Message: "set by bench-console"}}
		t0 := time.Now()
		got, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, next, metav1.UpdateOptions{})
		t1 := time.Now()
		if err != nil {
			return fmt.Errorf("write status %s: %w", want, err)
		}
		list[i%len(list)] = got
		pctx, pcancel := context.WithTimeout(tabCtx, 20*time.Second)
		seen, err := chromedp.Run(pctx, chromedp.Poll[struct {
			Dom   float64 `json:"dom"`
			Frame float64 `json:"frame"`
		}](fmt.Sprintf(`window.__benchSeen[%d] && window.__benchSeen[%d].frame && window.__benchSeen[%d]`, i, i, i),
			chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(15*time.Second)))
		pcancel()
		if err != nil {
			return fmt.Errorf("change %s of pod %s not seen in the pods view: %w", want, p.Name, err)
		}
		start := float64(t0.UnixNano()) / 1e6
		dom = append(dom, seen.Dom-start)
		frame = append(frame, seen.Frame-start)
		write = append(write, float64(t1.Sub(t0).Microseconds())/1000)
	}
	fmt.Printf("Pod status change to the pods view (%d changes over %d pods on screen, one at a time)\n", *changes, *visible)
	fmt.Printf("  from the start of the status write (Go's time.Now) to the page's clock (performance.timeOrigin + performance.now())\n")
	fmt.Printf("  clocks: the page read %.2f ms from Go's reading (±%.2f ms), not corrected for\n", skew, skewErr)
	fmt.Printf("  %-34s %s\n", "the STATUS cell changed (DOM):", stats(dom))
	fmt.Printf("  %-34s %s\n", "the next frame after it:", stats(frame))
	fmt.Printf("  %-34s %s\n\n", "the write's own API round trip:", stats(write))
	return nil
}

// The page's side of the load measurement, installed before the page's
// own scripts: when the first row of the namespace's pods is drawn, and
// when the table holds every pod.
const loadObserver = `(() => {
	window.__bench = {};
	const start = () => new MutationObserver(() => {
		const b = window.__bench;
		if (!b.firstRow && document.querySelector('[data-view=pods] [data-key^="load/"]')) b.firstRow = performance.now();
		if (!b.allRows && document.querySelector('[data-view=pods] [data-table][data-count="` + "%d" + `"]')) b.allRows = performance.now();
	}).observe(document.documentElement, {subtree: true, childList: true, attributes: true});
	if (document.documentElement) start(); else document.addEventListener('readystatechange', start, {once: true});
})()`

type loadResult struct {
	FP, FCP, DOMContentLoaded, FirstRow, AllRows float64
	Heap, HeapAfterGC                            float64
}

func load(browser context.Context, cfg *rest.Config, cs kubernetes.Interface, base, token string) error {
	ctx := context.Background()
	const ns = "load"
	start := time.Now()
	if _, err := makePods(ctx, cs, ns, *pods); err != nil {
		return fmt.Errorf("create pods: %w", err)
	}
	fmt.Printf("Pods view over %d pods in the namespace (created with their status in %v)\n", *pods, time.Since(start).Round(time.Second))
	// What the page cannot beat: the API's own list, as JSON, the browser's
	// encoding.
	jcfg := rest.CopyConfig(cfg)
	jcfg.ContentType, jcfg.AcceptContentTypes = "application/json", "application/json"
	jcs := kubernetes.NewForConfigOrDie(jcfg)
	var lists []float64
	for range 3 {
		t0 := time.Now()
		l, err := jcs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(l.Items) != *pods {
			return fmt.Errorf("listed %d pods, want %d", len(l.Items), *pods)
		}
		lists = append(lists, float64(time.Since(t0).Microseconds())/1000)
	}

	var results []loadResult
	for range *loads {
		r, err := loadOnce(browser, base, token, ns)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	col := func(f func(loadResult) float64) []float64 {
		var v []float64
		for _, r := range results {
			v = append(v, f(r))
		}
		return v
	}
	fmt.Printf("  a reload of #/pods, signed in, the namespace chosen; times from the navigation's start, median of %d loads (each load's figure)\n", *loads)
	row := func(name string, v []float64, unit string) {
		fmt.Printf("  %-44s %8.0f %s  %s\n", name, median(v), unit, each(v))
	}
	row("first paint:", col(func(r loadResult) float64 { return r.FP }), "ms")
	row("first contentful paint:", col(func(r loadResult) float64 { return r.FCP }), "ms")
	row("DOMContentLoaded:", col(func(r loadResult) float64 { return r.DOMContentLoaded }), "ms")
	row("first rows of the pods table:", col(func(r loadResult) float64 { return r.FirstRow }), "ms")
	row(fmt.Sprintf("all %d pods in the table:", *pods), col(func(r loadResult) float64 { return r.AllRows }), "ms")
	row("JS heap used after the table filled:", col(func(r loadResult) float64 { return r.Heap / 1e6 }), "MB")
	row("JS heap used after a garbage collection:", col(func(r loadResult) float64 { return r.HeapAfterGC / 1e6 }), "MB")
	row("(the API's own JSON list of them, from Go:", lists, "ms)")
	return nil
}

// loadOnce opens a tab on the pods view of ns and reloads it, so the
// figures are a page load with the session already there.
func loadOnce(browser context.Context, base, token, ns string) (loadResult, error) {
	var r loadResult
	tabCtx, cancel, err := tab(browser, base, token, ns)
	if err != nil {
		return r, err
	}
	defer cancel()
	script := fmt.Sprintf(loadObserver, *pods)
	install := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
		return err
	})
	tctx, tcancel := context.WithTimeout(tabCtx, 3*time.Minute)
	defer tcancel()
	if err := chromedp.Do(tctx, install, chromedp.Reload()); err != nil {
		return r, fmt.Errorf("reload: %w", err)
	}
	timing, err := chromedp.Run(tctx, chromedp.Poll[struct {
		FirstRow, AllRows, FP, FCP, DOMContentLoaded float64
	}](`(() => {
		const b = window.__bench;
		if (!b || !b.allRows) return false;
		const paint = (n) => (performance.getEntriesByName(n)[0] || {startTime: 0}).startTime;
		const nav = performance.getEntriesByType('navigation')[0] || {};
		return {firstRow: b.firstRow, allRows: b.allRows, fp: paint('first-paint'), fcp: paint('first-contentful-paint'), domContentLoaded: nav.domContentLoadedEventEnd || 0};
	})()`, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(2*time.Minute)))
	if err != nil {
		return r, fmt.Errorf("the pods table filling after the reload: %w", err)
	}
	r.FP, r.FCP, r.DOMContentLoaded, r.FirstRow, r.AllRows = timing.FP, timing.FCP, timing.DOMContentLoaded, timing.FirstRow, timing.AllRows
	heap := func() (float64, error) {
		u, err := chromedp.Run(tctx, func(ctx context.Context, t *chromedp.Target) (cdpruntime.GetHeapUsageResult, error) {
			return cdp.Call(ctx, t, cdpruntime.GetHeapUsage, cdp.Empty{})
		})
		return u.UsedSize, err
	}
	if r.Heap, err = heap(); err != nil {
		return r, err
	}
	if err := chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, heapprofiler.CollectGarbage, cdp.Empty{})
		return err
	})); err != nil {
		return r, err
	}
	if r.HeapAfterGC, err = heap(); err != nil {
		return r, err
	}
	return r, nil
}

func stats(ms []float64) string {
	s := append([]float64(nil), ms...)
	sort.Float64s(s)
	return fmt.Sprintf("p50 %6.1f ms   p99 %6.1f ms   (min %.1f, max %.1f)", pct(s, 50), pct(s, 99), s[0], s[len(s)-1])
}

// pct is the nearest-rank percentile of sorted values.
func pct(sorted []float64, p int) float64 {
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func each(v []float64) string {
	var parts []string
	for _, x := range v {
		parts = append(parts, fmt.Sprintf("%.0f", x))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
