package e2e

// The web console (/ui/) in a real browser: Debian's Chromium, headless,
// driven through the DevTools protocol, against the run's control plane and
// its node. Each test signs in with a service account's token and asserts
// what a user sees through the hooks internal/console/web/README.md fixes;
// what it changes is checked through the API. Screenshots of every view go
// to _output/console/ for review.

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestConsole runs the console's browser tests as subtests, so that one
// Chromium serves them all and the last one can photograph every view.
func TestConsole(t *testing.T) {
	needCluster(t)
	settleNetwork(t)
	b := startBrowser(t)
	t.Run("SignIn", func(t *testing.T) { consoleSignIn(t, b) })
	t.Run("ScaleLive", func(t *testing.T) { consoleScaleLive(t, b) })
	t.Run("Rollback", func(t *testing.T) { consoleRollback(t, b) })
	t.Run("Logs", func(t *testing.T) { consoleLogs(t, b) })
	t.Run("Shell", func(t *testing.T) { consoleShell(t, b) })
	t.Run("EditConfigMap", func(t *testing.T) { consoleEditConfigMap(t, b) })
	t.Run("ViewOnly", func(t *testing.T) { consoleViewOnly(t, b) })
	t.Run("Screenshots", func(t *testing.T) { consoleScreenshots(t, b) })
}

// settleNetwork waits, up to two minutes, until the pods earlier tests
// left behind are gone and the node's bridge has had the same ports for
// two seconds: Chromium drops its requests whenever an interface of the
// machine comes or goes.
func settleNetwork(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	ports, steadySince := bridgePorts(), time.Now()
	for time.Now().Before(deadline) {
		if n := bridgePorts(); n != ports {
			ports, steadySince = n, time.Now()
		}
		terminating := 0
		if pods, err := client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{}); err == nil {
			for _, p := range pods.Items {
				if p.DeletionTimestamp != nil {
					terminating++
				}
			}
		}
		if terminating == 0 && time.Since(steadySince) >= 2*time.Second {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("the node's network did not settle in two minutes (%d bridge ports); going on", ports)
}

// consoleUser makes a service account in ns bound cluster-wide to the
// ClusterRole role and returns a token for it from a TokenRequest, as
// `kubectl create token` makes one.
func consoleUser(t *testing.T, ns, name, role string) string {
	t.Helper()
	ctx := context.Background()
	tok := serviceAccountToken(t, ns, name)
	binding := ns + "-" + name
	_, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: binding},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.RbacV1().ClusterRoleBindings().Delete(ctx, binding, metav1.DeleteOptions{}) })
	return tok
}

// sleeper is a Deployment of busybox pods that sleep, with env VERSION.
func sleeper(ns, name string, replicas int32, version string) *appsv1.Deployment {
	grace := int64(1)
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					TerminationGracePeriodSeconds: &grace,
					Containers: []v1.Container{{
						Name: "main", Image: busybox, ImagePullPolicy: v1.PullNever,
						Command: []string{"sh", "-c", "exec sleep 3600"},
						Env:     []v1.EnvVar{{Name: "VERSION", Value: version}},
					}},
				},
			},
		},
	}
}

func createDeployment(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	if _, err := client.AppsV1().Deployments(d.Namespace).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment %s: %v", d.Name, err)
	}
}

// waitRolledOut waits until the Deployment's latest template runs ready in
// every replica, as `kubectl rollout status` waits.
func waitRolledOut(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	eventually(t, time.Minute, func() error {
		var err error
		d, err = client.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		st, want := d.Status, *d.Spec.Replicas
		if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != want || st.Replicas != want || st.AvailableReplicas != want {
			return fmt.Errorf("deployment %s: generation %d observed %d, %d replicas, %d updated, %d available of %d",
				name, d.Generation, st.ObservedGeneration, st.Replicas, st.UpdatedReplicas, st.AvailableReplicas, want)
		}
		return nil
	})
	return d
}

func envValue(d *appsv1.Deployment, name string) string {
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// consoleSignIn: a bad token gets the sign-in form back with the API's
// "Unauthorized"; a good one pasted into the form signs in, sign-out forgets
// it, and the link `/ui/#token=...` signs in and leaves the address bar.
func consoleSignIn(t *testing.T, b *consoleBrowser) {
	ns := consoleNamespace(t)
	tok := consoleUser(t, ns, "admin", "cluster-admin")

	p := b.newPage(t)
	p.navigate("open a sign-in link with a bad token", b.base+"#token=not-a-token")
	p.wait("the sign-in form saying Unauthorized", `(() => {
		if (document.body.hasAttribute('data-signed-in')) return false;
		const f = document.querySelector('form[data-login]');
		if (!f || !f.querySelector('input[name=token]')) return false;
		const shown = [f, ...document.querySelectorAll('[data-error], [data-toast]')].map(e => e.textContent).join(' ');
		return shown.includes('Unauthorized');
	})()`, 20*time.Second)
	var stored *string
	p.eval(`sessionStorage.getItem('orca.token')`, &stored)
	if stored != nil {
		t.Errorf("a refused token stays in sessionStorage: %q", *stored)
	}
	p.screenshot("sign-in-refused")

	// A token pasted into the form, submitted with Enter.
	p.eval(`(() => {
		const i = document.querySelector('form[data-login] input[name=token]');
		i.value = `+js(tok)+`;
		i.dispatchEvent(new Event('input', {bubbles: true}));
	})()`, nil)
	p.do("submit the sign-in form", 20*time.Second,
		chromedp.Focus(chromedp.CSS(`form[data-login] input[name=token]`)), chromedp.KeyEvent("\r"))
	p.wait("signed in from the form", `document.body.hasAttribute('data-signed-in')`, 20*time.Second)
	p.eval(`sessionStorage.getItem('orca.token')`, &stored)
	if stored == nil || *stored != tok {
		t.Errorf("sessionStorage orca.token after sign-in: %v, want the token", stored)
	}

	p.click("sign out", `button[data-action=sign-out]`)
	p.wait("the sign-in form after sign-out", `!document.body.hasAttribute('data-signed-in') && !!document.querySelector('form[data-login]') && sessionStorage.getItem('orca.token') === null`, 20*time.Second)

	// The link, in a fresh tab as a browser opens it.
	q := b.newPage(t)
	q.signIn(tok)
	var href string
	q.eval(`location.href`, &href)
	if strings.Contains(href, tok) {
		t.Errorf("the token stays in the address bar: %s", href)
	}
	q.screenshot("signed-in")
}

// consoleScaleLive: kubectl scales a Deployment 1 → 3 and the workloads
// view shows READY 3/3 without a reload; the page's own scale dialog
// changes spec.replicas in the API.
func consoleScaleLive(t *testing.T, b *consoleBrowser) {
	ns := consoleNamespace(t)
	tok := consoleUser(t, ns, "admin", "cluster-admin")
	createDeployment(t, sleeper(ns, "web", 1, "one"))

	p := b.newPage(t)
	p.signIn(tok)
	p.show("#/workloads", "workloads")
	p.selectNamespace(ns)
	p.waitCell("workloads", ns+"/web", "ready", "1/1", 60*time.Second)
	// A reload would lose this.
	p.eval(`window.__orcaNoReload = true`, nil)

	start := time.Now()
	kubectlOK(t, "", "-n", ns, "scale", "deployment/web", "--replicas=3")
	p.waitCell("workloads", ns+"/web", "ready", "3/3", 60*time.Second)
	t.Logf("READY 3/3 shown %v after kubectl scale", time.Since(start).Round(time.Millisecond))
	var same bool
	p.eval(`window.__orcaNoReload === true`, &same)
	if !same {
		t.Fatal("the page reloaded to show the change")
	}

	// Scale from the page: the row opens the Deployment's own view.
	p.clickFor("the Deployment's row", rowSel("workloads", ns+"/web")+` [data-col=name] a`, `!!document.querySelector('[data-view=workload]')`)
	p.clickFor("scale", `button[data-action=scale]`, `!!document.querySelector('dialog[data-dialog=scale][open]')`)
	p.fillDialog("scale", "replicas", "2")
	p.confirm("scale")
	eventually(t, 20*time.Second, func() error {
		d, err := client.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if *d.Spec.Replicas != 2 {
			return fmt.Errorf("spec.replicas %d, want 2", *d.Spec.Replicas)
		}
		return nil
	})
}

// consoleRollback: a Deployment's env changes to make revision 2; rolling
// back to revision 1 in the page brings revision 1's template back.
func consoleRollback(t *testing.T, b *consoleBrowser) {
	ns := consoleNamespace(t)
	tok := consoleUser(t, ns, "admin", "cluster-admin")
	createDeployment(t, sleeper(ns, "app", 1, "one"))
	waitRolledOut(t, ns, "app")
	kubectlOK(t, "", "-n", ns, "set", "env", "deployment/app", "VERSION=two")
	d := waitRolledOut(t, ns, "app")
	if got := d.Annotations["deployment.kubernetes.io/revision"]; got != "2" {
		t.Fatalf("revision after kubectl set env: %q, want 2", got)
	}

	p := b.newPage(t)
	p.signIn(tok)
	p.show("#/workloads/deployments/"+ns+"/app", "workload")
	p.settle("workload")
	p.screenshot("workload")
	p.clickFor("roll back", `button[data-action=rollback]`, `!!document.querySelector('dialog[data-dialog=rollback][open]')`)
	p.fillDialog("rollback", "revision", "1")
	p.confirm("rollback")
	eventually(t, 20*time.Second, func() error {
		d, err := client.AppsV1().Deployments(ns).Get(context.Background(), "app", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if v := envValue(d, "VERSION"); v != "one" {
			return fmt.Errorf("template VERSION=%q, want revision 1's %q", v, "one")
		}
		return nil
	})
	// Upstream's rollback makes revision 1's template the newest: revision 3.
	eventually(t, 20*time.Second, func() error {
		d, err := client.AppsV1().Deployments(ns).Get(context.Background(), "app", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := d.Annotations["deployment.kubernetes.io/revision"]; got != "3" {
			return fmt.Errorf("revision %q, want 3", got)
		}
		return nil
	})
}

var logLine = regexp.MustCompile(`(?m)^line (\d+)$`)

// consoleLogs: a pod prints a numbered line every 200 ms and the pod view's
// log, following, shows new lines arrive.
func consoleLogs(t *testing.T, b *consoleBrowser) {
	ns := consoleNamespace(t)
	tok := consoleUser(t, ns, "admin", "cluster-admin")
	createPod(t, simplePod(ns, "counter", `i=0; while true; do i=$((i+1)); echo "line $i"; sleep 0.2; done`))
	waitPod(t, ns, "counter", time.Minute, "running", running)

	p := b.newPage(t)
	p.signIn(tok)
	p.show("#/pods/"+ns+"/counter", "pod")
	p.clickFor("logs", `button[data-action=logs]`, `(() => { const l = document.querySelector('pre[data-logs]'); return !!l && l.offsetParent !== null; })()`)
	last := func() int {
		var text string
		p.eval(`(document.querySelector('pre[data-logs]') || {}).textContent || ''`, &text)
		n := 0
		for _, m := range logLine.FindAllStringSubmatch(text, -1) {
			if v, _ := strconv.Atoi(m[1]); v > n {
				n = v
			}
		}
		return n
	}
	p.wait("log lines in pre[data-logs]", `/^line \d+$/m.test((document.querySelector('pre[data-logs]') || {}).textContent || '')`, 30*time.Second)
	first := last()
	// Five more lines is a second of the pod's output, arriving while the
	// page only watches.
	reached := func(n int) string {
		return `(() => {
		const t = (document.querySelector('pre[data-logs]') || {}).textContent || '';
		return [...t.matchAll(/^line (\d+)$/gm)].some(m => Number(m[1]) >= ` + strconv.Itoa(n) + `);
	})()`
	}
	want := first + 5
	p.wait(fmt.Sprintf("line %d following line %d", want, first), reached(want), 20*time.Second)
	p.screenshot("pod-logs")

	// The network cuts the stream (as a browser does to every open
	// request when the machine's interfaces change): the view opens it
	// again and goes on following.
	cutBrowserConnections(t)
	want = last() + 10
	p.wait(fmt.Sprintf("line %d after the stream was cut", want), reached(want), 30*time.Second)
}

// consoleShell: `echo hello` typed into the pod view's terminal answers
// hello on a line of its own.
func consoleShell(t *testing.T, b *consoleBrowser) {
	ns := consoleNamespace(t)
	tok := consoleUser(t, ns, "admin", "cluster-admin")
	createPod(t, simplePod(ns, "box", "exec sleep 3600"))
	waitPod(t, ns, "box", time.Minute, "running", running)

	p := b.newPage(t)
	p.signIn(tok)
	p.show("#/pods/"+ns+"/box", "pod")
	p.clickFor("shell", `button[data-action=shell]`, `(() => { const t = document.querySelector('[data-terminal]'); return !!t && t.offsetParent !== null; })()`)
	// The shell's prompt says the exec stream is open; keys typed before
	// would be lost.
	p.wait("the shell's prompt in the terminal", `(() => {
		const rows = [...document.querySelectorAll('[data-terminal] .xterm-rows > div')].map(r => r.textContent.trim());
		return rows.some(r => /[#$]$/.test(r));
	})()`, 30*time.Second)
	p.do("type echo hello", 20*time.Second,
		chromedp.Focus(chromedp.CSS(`[data-terminal] textarea`)), typeKeys("echo hello\r"))
	p.wait("hello on its own line in the terminal", `[...document.querySelectorAll('[data-terminal] .xterm-rows > div')].some(r => r.textContent.trim() === 'hello')`, 20*time.Second)
	p.screenshot("pod-shell")
}

// consoleEditConfigMap: a ConfigMap's value changed in the YAML editor
// shows as a diff (the old line deleted, the new inserted) before it is
// applied, and the API has the new value after.
func consoleEditConfigMap(t *testing.T, b *consoleBrowser) {
	ns := consoleNamespace(t)
	tok := consoleUser(t, ns, "admin", "cluster-admin")
	ctx := context.Background()
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings"},
		Data:       map[string]string{"colour": "blue", "size": "large"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	p := b.newPage(t)
	p.signIn(tok)
	p.show("#/resources/core/v1/configmaps/"+ns+"/settings", "resource")
	p.clickFor("edit", `button[data-action=edit]`, `!!document.querySelector('textarea[data-yaml]')`)
	p.wait("the ConfigMap's YAML in the editor", `/^\s*colour: blue$/m.test((document.querySelector('textarea[data-yaml]') || {}).value || '')`, 20*time.Second)
	p.eval(`(() => {
		const ta = document.querySelector('textarea[data-yaml]');
		ta.value = ta.value.replace(/^(\s*)colour: blue$/m, '$1colour: green');
		ta.dispatchEvent(new Event('input', {bubbles: true}));
	})()`, nil)

	// The diff may follow the typing or come with the first press of
	// apply; either way it is on screen before anything is written.
	diff := `(() => {
		const d = document.querySelector('[data-diff]');
		if (!d || d.offsetParent === null) return false;
		const lines = (sel) => [...d.querySelectorAll(sel)].map(e => e.textContent);
		const del = lines('.del, del'), ins = lines('.ins, ins');
		return del.some(l => /colour: blue/.test(l)) && ins.some(l => /colour: green/.test(l));
	})()`
	if _, err := p.tryWait(diff, 3*time.Second); err != nil {
		p.click("apply (to see the diff)", `button[data-action=apply]`)
	}
	p.wait("the diff deleting colour: blue and inserting colour: green", diff, 20*time.Second)
	cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["colour"] != "blue" {
		t.Fatalf("the ConfigMap changed before the diff was applied: colour=%q", cm.Data["colour"])
	}
	p.screenshot("resource-edit-diff")

	// The ConfigMap's fields belong to the client that created it, so
	// server-side apply reports a conflict, as `kubectl apply
	// --server-side` does, and the page offers a forced apply in place of
	// apply, with the API's message.
	var which string
	p.eval(`(() => {
		const vis = (a) => { const b = document.querySelector('button[data-action=' + a + ']'); return !!b && !b.hidden && b.offsetParent !== null; };
		return vis('force-apply') ? 'force-apply' : vis('apply') ? 'apply' : '';
	})()`, &which)
	switch which {
	case "force-apply":
		wantConflict := `Apply failed with 1 conflict: conflict with "e2e.test" using v1: .data.colour`
		p.wait("the conflict's message", `[...document.querySelectorAll('[data-error]')].some(e => e.textContent.includes(`+js(wantConflict)+`))`, 10*time.Second)
		p.click("force apply", `button[data-action=force-apply]`)
	case "apply":
		p.click("apply", `button[data-action=apply]`)
	default:
		t.Fatalf("neither apply nor force-apply is offered with the diff%s", p.state())
	}
	eventually(t, 20*time.Second, func() error {
		cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data["colour"] != "green" || cm.Data["size"] != "large" {
			return fmt.Errorf("data %v, want colour=green size=large", cm.Data)
		}
		return nil
	})
}

// consoleViewOnly: a user bound only to the `view` ClusterRole sees the
// objects but no button to change them, and a write through the API with
// the same token is refused with upstream's forbidden message.
func consoleViewOnly(t *testing.T, b *consoleBrowser) {
	ns := consoleNamespace(t)
	tok := consoleUser(t, ns, "viewer", "view")
	ctx := context.Background()
	createDeployment(t, sleeper(ns, "web", 1, "one"))
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"colour": "blue"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	writes := `button[data-action=scale], button[data-action=restart], button[data-action=pause], button[data-action=resume],
		button[data-action=rollback], button[data-action=trigger], button[data-action=delete], button[data-action=edit],
		button[data-action=apply], button[data-action=force-apply], button[data-action=create], button[data-action=shell]`
	// Access reviews answer after the view draws: a button that is not
	// there must stay away for a while, not just at the first look.
	noWrites := func(p *consolePage, where string) {
		t.Helper()
		expr := `[...document.querySelectorAll(` + js(writes) + `)].map(b => b.dataset.action).join(',')`
		deadline := time.Now().Add(2 * time.Second)
		for {
			var shown string
			p.eval(expr, &shown)
			if shown != "" {
				t.Fatalf("%s: a view-only user is offered %s", where, shown)
			}
			if time.Now().After(deadline) {
				return
			}
			_, _ = p.tryWait(`false`, 200*time.Millisecond)
		}
	}

	p := b.newPage(t)
	p.signIn(tok)
	p.show("#/workloads", "workloads")
	p.selectNamespace(ns)
	p.waitCell("workloads", ns+"/web", "name", "web", 30*time.Second)
	noWrites(p, "workloads")
	p.show("#/workloads/deployments/"+ns+"/web", "workload")
	p.settle("workload")
	noWrites(p, "the Deployment's view")
	p.show("#/resources/core/v1/configmaps/"+ns+"/settings", "resource")
	p.settle("resource")
	noWrites(p, "the ConfigMap's view")
	p.screenshot("view-only-resource")

	// The same token's write, from the page through lib/api.js.
	want := fmt.Sprintf(`configmaps "settings" is forbidden: User "system:serviceaccount:%s:viewer" cannot delete resource "configmaps" in API group "" in the namespace "%s"`, ns, ns)
	var got struct {
		Status  int    `json:"status"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}
	p.eval(`(async () => {
		const api = await import(new URL('lib/api.js', `+js(b.base)+`).href);
		try {
			await api.del(api.resourcePath({version: 'v1', resource: 'configmaps', namespace: `+js(ns)+`, name: 'settings'}));
			return {status: 200, reason: '', message: 'deleted'};
		} catch (e) {
			return {status: e.status, reason: e.reason || '', message: e.message};
		}
	})()`, &got)
	if got.Status != 403 || got.Reason != "Forbidden" || got.Message != want {
		t.Errorf("delete from the page as the viewer: %d %s %q, want 403 Forbidden %q", got.Status, got.Reason, got.Message, want)
	}
	// And with a client of its own, as kubectl would send it.
	cfg := &rest.Config{Host: inst.URL, BearerToken: tok, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	viewer := kubernetes.NewForConfigOrDie(cfg)
	_, err := viewer.AppsV1().Deployments(ns).UpdateScale(ctx, "web", &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 5},
	}, metav1.UpdateOptions{})
	wantScale := fmt.Sprintf(`deployments.apps "web" is forbidden: User "system:serviceaccount:%s:viewer" cannot update resource "deployments/scale" in API group "apps" in the namespace "%s"`, ns, ns)
	if !apierrors.IsForbidden(err) || err.Error() != wantScale {
		t.Errorf("scale as the viewer: %v, want 403 %q", err, wantScale)
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap after the viewer's delete: %v", err)
	}
}

// consoleScreenshots photographs the list views over a namespace with a
// Deployment, its pods and a Service, for review; the views of one object
// were photographed by the tests above.
func consoleScreenshots(t *testing.T, b *consoleBrowser) {
	ns := consoleNamespace(t)
	tok := consoleUser(t, ns, "admin", "cluster-admin")
	createDeployment(t, sleeper(ns, "web", 2, "one"))
	if _, err := client.CoreV1().Services(ns).Create(context.Background(), &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       v1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []v1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRolledOut(t, ns, "web")

	p := b.newPage(t)
	p.signIn(tok)
	p.show("#/cluster", "cluster")
	p.selectNamespace(ns)
	for _, v := range []string{"cluster", "workloads", "pods", "networking", "resources"} {
		p.show("#/"+v, v)
		p.settle(v)
		p.screenshot(v)
	}
	// The same page in dark mode, as a browser set to prefer it shows it.
	p.do("prefer a dark colour scheme", 10*time.Second, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
		})
		return err
	}))
	for _, v := range []string{"cluster", "workloads"} {
		p.show("#/"+v, v)
		p.settle(v)
		p.screenshot(v + "-dark")
	}
}
