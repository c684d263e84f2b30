package e2e

// The browser side of the web console's tests: one headless Chromium for
// the run, a tab per test, and the few moves a user makes (sign in, pick a
// namespace, open a row, fill a dialog) written once. The page is found
// through the data-* hooks internal/console/web/README.md fixes, never by
// text or styling.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// chromiumPath is Debian's Chromium, which hack/install-deps.sh installs;
// nothing downloads a browser of its own.
const chromiumPath = "/usr/bin/chromium"

// consoleBrowser is the one Chromium a run's console tests share.
type consoleBrowser struct {
	ctx  context.Context
	base string // https://HOST:PORT/ui/
	// shots is _output/console at the repository's root.
	shots string
}

// startBrowser starts headless Chromium for the console tests, or skips
// them when Debian's Chromium is not installed.
func startBrowser(t *testing.T) *consoleBrowser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("%s is not installed (hack/install-deps.sh installs Debian's chromium)", chromiumPath)
	}
	profile, err := os.MkdirTemp("", "orca-console-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("ignore-certificate-errors", true),
		// The machine's network is closed and the console is same-origin:
		// no proxy from the environment may stand in between.
		chromedp.Flag("no-proxy-server", true),
		// /dev/shm is small in containers; Chromium crashes when it fills.
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1366, 768),
	)
	ctx, cancel := chromedp.NewContext(allocCtx)
	// The first run starts the browser and lives as long as ctx: no
	// timeout on it.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		_ = os.RemoveAll(profile)
		t.Fatalf("start %s: %v", chromiumPath, err)
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		_ = os.RemoveAll(profile)
	})
	shots := filepath.Join(repoRoot(t), "_output", "console")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	return &consoleBrowser{ctx: ctx, base: inst.URL + "/ui/", shots: shots}
}

// consoleNamespace is namespace(t) for a console test: when the test ends
// it also waits for the node to have taken down the pods' network
// interfaces. Chromium drops every request in flight with
// net::ERR_NETWORK_CHANGED when an interface of the machine comes or goes
// (a pod's veth on the test bridge), and the next test's page must not
// load while that happens.
func consoleNamespace(t *testing.T) string {
	t.Helper()
	before := bridgePorts()
	// Registered before namespace's own clean-up, so it runs after it.
	t.Cleanup(func() {
		deadline := time.Now().Add(time.Minute)
		for bridgePorts() > before && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
		}
	})
	return namespace(t)
}

// bridgePorts counts the test bridge's ports: one veth per pod sandbox.
func bridgePorts() int {
	entries, _ := os.ReadDir("/sys/class/net/orcae2e0/brif")
	return len(entries)
}

// consolePage is one tab: its own sessionStorage, so its own sign-in.
type consolePage struct {
	t   *testing.T
	b   *consoleBrowser
	ctx context.Context

	mu  sync.Mutex
	log []string // the page's console errors and exceptions
}

// newPage opens a tab for t, closed when t ends. When t fails, the tab's
// screenshot and the page's errors are kept for whoever reads the run.
func (b *consoleBrowser) newPage(t *testing.T) *consolePage {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	p := &consolePage{t: t, b: b, ctx: ctx}
	// Subscribing makes the tab; the page's errors are what explains a
	// view that never shows up.
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning {
				p.mu.Lock()
				p.log = append(p.log, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line+1))
				p.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		if t.Failed() {
			p.screenshot("failed-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()))
			p.mu.Lock()
			for _, l := range p.log {
				t.Logf("page: %s", l)
			}
			p.mu.Unlock()
		}
		cancel()
	})
	return p
}

// do runs browser actions with a timeout, failing the test on an error.
func (p *consolePage) do(what string, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v%s", what, err, p.state())
	}
}

// navigate opens url in the tab. A load that Chromium drops with
// net::ERR_NETWORK_CHANGED (an interface of the machine came or went: a
// pod of another test being torn down) is tried again, as a user would
// reload.
func (p *consolePage) navigate(what, url string) {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(p.ctx, time.Until(deadline))
		err := chromedp.Do(ctx, chromedp.Navigate(url))
		cancel()
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "ERR_NETWORK_CHANGED") || time.Now().After(deadline) {
			p.t.Fatalf("%s: %v%s", what, err, p.state())
		}
		p.t.Logf("%s: %v; loading again", what, err)
		time.Sleep(500 * time.Millisecond)
	}
}

// eval evaluates a JavaScript expression (promises awaited) into out.
func (p *consolePage) eval(expr string, out any) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v%s", expr, err, p.state())
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			p.t.Fatalf("evaluate %s: %s: %v", expr, raw, err)
		}
	}
}

// wait polls a JavaScript expression every 50 ms until it is truthy and
// returns its value as JSON.
func (p *consolePage) wait(what, expr string, timeout time.Duration) []byte {
	p.t.Helper()
	raw, err := p.tryWait(expr, timeout)
	if err != nil {
		p.t.Fatalf("%s: not seen after %v: %v%s", what, timeout, err, p.state())
	}
	return raw
}

func (p *consolePage) tryWait(expr string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(p.ctx, timeout+5*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Poll[[]byte](expr,
		chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(50*time.Millisecond)))
}

// state is what the page showed when a step failed: where it was, the
// error it displayed, the start of the view's text.
func (p *consolePage) state() string {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const err = [...document.querySelectorAll('[data-error], [data-toast]')].map(e => e.textContent.trim()).filter(Boolean).join(' | ');
		const view = document.querySelector('[data-view]');
		return 'at ' + location.pathname + location.hash.replace(/token=[^&]*/, 'token=…') +
			(document.body.hasAttribute('data-signed-in') ? ' (signed in)' : ' (signed out)') +
			(err ? '; error shown: ' + err : '') +
			(view ? '; view ' + view.dataset.view + ': ' + view.innerText.slice(0, 600).replace(/\s+/g, ' ') : '; no [data-view]');
	})()`))
	if err != nil {
		return ""
	}
	return "\n  page " + s
}

// js quotes a Go string as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// signIn opens the console through the sign-in link and waits until the
// page says it is signed in.
func (p *consolePage) signIn(token string) {
	p.t.Helper()
	p.navigate("open the sign-in link", p.b.base+"#token="+token)
	p.wait("the signed-in page", `document.body.hasAttribute('data-signed-in')`, 20*time.Second)
}

// show routes the page to hash (same document, no reload) and waits for the
// view's root.
func (p *consolePage) show(hash, view string) {
	p.t.Helper()
	p.eval(`location.hash = `+js(hash), nil)
	p.wait("view "+view, `!!document.querySelector('[data-view=`+view+`]')`, 20*time.Second)
}

// selectNamespace picks ns in the namespace switcher, as a user does,
// once the switcher's watch has brought it.
func (p *consolePage) selectNamespace(ns string) {
	p.t.Helper()
	p.wait("namespace "+ns+" in the switcher", `(() => {
		const s = document.querySelector('select[data-namespace]');
		return !!s && [...s.options].some(o => o.value === `+js(ns)+`);
	})()`, 20*time.Second)
	p.eval(`(() => {
		const s = document.querySelector('select[data-namespace]');
		s.value = `+js(ns)+`;
		s.dispatchEvent(new Event('input', {bubbles: true}));
		s.dispatchEvent(new Event('change', {bubbles: true}));
	})()`, nil)
}

// rowSel is the CSS selector of a table row in view.
func rowSel(view, key string) string {
	return fmt.Sprintf(`[data-view=%s] [data-key=%s]`, view, js(key))
}

// cellText waits until the row's column cell reads want.
func (p *consolePage) waitCell(view, key, col, want string, timeout time.Duration) {
	p.t.Helper()
	p.wait(fmt.Sprintf("%s row %s with %s %q", view, key, col, want), `(() => {
		const c = document.querySelector(`+js(rowSel(view, key)+` [data-col=`+col+`]`)+`);
		return !!c && c.textContent.trim() === `+js(want)+`;
	})()`, timeout)
}

// click waits for a visible element and clicks it with the mouse.
func (p *consolePage) click(what, sel string) {
	p.t.Helper()
	p.do("click "+what, 20*time.Second, chromedp.Click(chromedp.CSS(sel)))
}

// fillDialog sets a field of the open dialog: an input gets the value, a
// select the option whose value (or, failing that, text) is the value.
func (p *consolePage) fillDialog(dialog, field, value string) {
	p.t.Helper()
	sel := fmt.Sprintf(`dialog[data-dialog=%s][open] [name=%s]`, dialog, field)
	p.wait("field "+field+" of the "+dialog+" dialog", `!!document.querySelector(`+js(sel)+`)`, 20*time.Second)
	var found bool
	p.eval(`(() => {
		const el = document.querySelector(`+js(sel)+`);
		const v = `+js(value)+`;
		if (el.tagName === 'SELECT') {
			const o = [...el.options].find(o => o.value === v) || [...el.options].find(o => o.textContent.trim().split(/\s+/)[0] === v);
			if (!o) return false;
			el.value = o.value;
		} else {
			el.value = v;
		}
		el.dispatchEvent(new Event('input', {bubbles: true}));
		el.dispatchEvent(new Event('change', {bubbles: true}));
		return true;
	})()`, &found)
	if !found {
		var opts string
		p.eval(`[...document.querySelector(`+js(sel)+`).options].map(o => o.value + '=' + o.textContent.trim()).join(', ')`, &opts)
		p.t.Fatalf("the %s dialog's %s has no option %q (options: %s)", dialog, field, value, opts)
	}
}

// clickFor clicks sel until done (a JavaScript expression) holds: a view
// still drawing can move a button between the moment its place is read
// and the click, and a click that lands elsewhere is tried again, as a
// user clicks again.
func (p *consolePage) clickFor(what, sel, done string) {
	p.t.Helper()
	for try := 1; ; try++ {
		p.click(what, sel)
		if _, err := p.tryWait(done, 3*time.Second); err == nil {
			return
		} else if try == 3 {
			p.t.Fatalf("click %s: nothing happened after %d clicks: %v%s", what, try, err, p.state())
		}
	}
}

// typeKeys types text into the focused element as a keyboard does: a
// keydown carrying the character's text, then a keyup, so the browser
// makes the keypress and input events itself. (chromedp's KeyEvent sends
// a separate char event, which xterm.js reads as a second keystroke.)
func typeKeys(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, r := range text {
			k, ok := kb.Keys[r]
			if !ok {
				return fmt.Errorf("no key types %q", r)
			}
			down := input.DispatchKeyEventParams{
				Type: input.DispatchKeyEventTypeKeyDown, Key: k.Key, Code: k.Code, Text: k.Text, UnmodifiedText: k.Unmodified,
				WindowsVirtualKeyCode: k.Windows, NativeVirtualKeyCode: k.Native,
			}
			if k.Shift {
				down.Modifiers = int64(chromedp.ModifierShift)
			}
			up := down
			up.Type, up.Text, up.UnmodifiedText = input.DispatchKeyEventTypeKeyUp, "", ""
			for _, ev := range []input.DispatchKeyEventParams{down, up} {
				if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, ev); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// confirm clicks the open dialog's confirm button.
func (p *consolePage) confirm(dialog string) {
	p.t.Helper()
	p.click("the "+dialog+" dialog's confirm button", fmt.Sprintf(`dialog[data-dialog=%s][open] button[data-confirm]`, dialog))
}

// screenshot writes the tab's viewport to _output/console/NAME.png.
func (p *consolePage) screenshot(name string) {
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Logf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(p.b.shots, name+".png"), png, 0o644); err != nil {
		p.t.Logf("screenshot %s: %v", name, err)
	}
}

// settle waits until the view has drawn its data ([data-updated]); a view
// without the hook gets 10 s and a note in the log.
func (p *consolePage) settle(view string) {
	p.t.Helper()
	if _, err := p.tryWait(`!!document.querySelector('[data-view=`+view+`][data-updated]')`, 10*time.Second); err != nil {
		p.t.Logf("view %s: no [data-updated] after 10 s%s", view, p.state())
	}
}

// cutBrowserConnections resets Chromium's TCP connections to the API
// server, as a network drop would, and leaves every other client's
// alone. It needs ss with socket destruction (iproute2, root).
func cutBrowserConnections(t *testing.T) {
	t.Helper()
	u, err := url.Parse(inst.URL)
	if err != nil {
		t.Fatal(err)
	}
	host, port := u.Hostname(), u.Port()
	out, err := exec.Command("ss", "-tnpH", "state", "established", "dst", host, "dport", "= :"+port).CombinedOutput()
	if err != nil {
		t.Fatalf("ss: %v: %s", err, out)
	}
	cut := 0
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.Contains(line, "chrom") {
			continue
		}
		_, sport, err := net.SplitHostPort(f[2])
		if err != nil {
			continue
		}
		if out, err := exec.Command("ss", "-K", "dst", host, "dport", "= :"+port, "sport", "= :"+sport).CombinedOutput(); err != nil {
			t.Fatalf("ss -K: %v: %s", err, out)
		}
		cut++
	}
	if cut == 0 {
		t.Fatalf("no connection of the browser to %s:%s:\n%s", host, port, out)
	}
}
