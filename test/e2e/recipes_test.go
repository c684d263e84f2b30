package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The recipes in docs/recipes are tested as written: their YAML blocks
// are applied unchanged and their commands' arguments are taken from the
// text, so a recipe that stops working fails here.

// recipe is one document of docs/recipes.
type recipe struct{ text string }

func readRecipe(t *testing.T, name string) recipe {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "recipes", name))
	if err != nil {
		t.Fatalf("read recipe: %v", err)
	}
	return recipe{text: string(b)}
}

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// manifest is the recipe's YAML block defining kind/name.
func (r recipe) manifest(t *testing.T, kind, name string) string {
	t.Helper()
	for _, m := range yamlBlock.FindAllStringSubmatch(r.text, -1) {
		if strings.Contains(m[1], "\nkind: "+kind+"\n") && strings.Contains(m[1], "\n  name: "+name+"\n") {
			return m[1]
		}
	}
	t.Fatalf("the recipe has no YAML block for %s %s", kind, name)
	return ""
}

// command is the first line of the recipe that starts with prefix once
// indentation is trimmed.
func (r recipe) command(t *testing.T, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(r.text, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("the recipe has no command starting %q", prefix)
	return ""
}

// applyRecipe applies the named manifests of r in ns and waits for each
// Deployment among them to finish rolling out.
func applyRecipe(t *testing.T, r recipe, ns string, objs ...string) {
	t.Helper()
	for _, o := range objs {
		kind, name, _ := strings.Cut(o, "/")
		kubectlOK(t, r.manifest(t, kind, name), "-n", ns, "apply", "-f", "-")
	}
	for _, o := range objs {
		if kind, name, _ := strings.Cut(o, "/"); kind == "Deployment" {
			kubectlOK(t, "", "-n", ns, "rollout", "status", "deployment/"+name, "--timeout=180s")
		}
	}
}

// recipeDump logs the namespace's workloads when the test has failed.
func recipeDump(t *testing.T, ns string) {
	t.Cleanup(func() {
		if t.Failed() {
			res := runKubectl(t, nil, "", "-n", ns, "get", "deployments,pods,endpointslices,endpoints", "-o", "wide")
			t.Logf("state at failure:\n%s%s", res.Stdout, res.Stderr)
		}
	})
}

// endpointsByLabel counts the service's endpoints by the value of label on
// the pod behind each, separately for EndpointSlices and the Endpoints
// object; a not-ready endpoint of a pod that is not terminating counts as
// "not-ready".
func endpointsByLabel(ns, svc, label string) (slices, endpoints map[string]int, err error) {
	ctx := context.Background()
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	value := map[string]string{}
	for _, p := range pods.Items {
		value[p.Name] = p.Labels[label]
	}
	of := func(ref *v1.ObjectReference) string {
		if ref == nil {
			return "no-pod"
		}
		return value[ref.Name]
	}
	slices, endpoints = map[string]int{}, map[string]int{}
	l, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return nil, nil, err
	}
	for _, sl := range l.Items {
		for _, e := range sl.Endpoints {
			// A terminating pod stays in its slices, marked so, and gets no
			// new connections; the Endpoints object leaves it out.
			if e.Conditions.Terminating != nil && *e.Conditions.Terminating {
				continue
			}
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				slices[of(e.TargetRef)]++
			} else {
				slices["not-ready"]++
			}
		}
	}
	ep, err := client.CoreV1().Endpoints(ns).Get(ctx, svc, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range ep.Subsets {
		for _, a := range s.Addresses {
			endpoints[of(a.TargetRef)]++
		}
		endpoints["not-ready"] += len(s.NotReadyAddresses)
	}
	if endpoints["not-ready"] == 0 {
		delete(endpoints, "not-ready")
	}
	return slices, endpoints, nil
}

// waitEndpointsByLabel waits until both the slices and the Endpoints of
// svc count exactly want by the pods' label.
func waitEndpointsByLabel(t *testing.T, ns, svc, label string, want map[string]int) {
	t.Helper()
	eventually(t, time.Minute, func() error {
		slices, endpoints, err := endpointsByLabel(ns, svc, label)
		if err != nil {
			return err
		}
		if fmt.Sprint(slices) != fmt.Sprint(want) || fmt.Sprint(endpoints) != fmt.Sprint(want) {
			return fmt.Errorf("by %s: EndpointSlices %v, Endpoints %v; want %v", label, slices, endpoints, want)
		}
		return nil
	})
}

// versionsFrom asks url n times from the client pod and counts the
// answers by their first word, the version the recipes' pages name.
func versionsFrom(t *testing.T, ns, pod, url string, n int) map[string]int {
	t.Helper()
	// Not wget -T: busybox's wget crashes with it on a refused connection.
	script := fmt.Sprintf("for i in $(seq %d); do timeout 5 wget -qO- %s || echo ERR; done", n, url)
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(kubectlOK(t, "", "exec", pod, "-n", ns, "--", "sh", "-c", script)), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			got[f[0]]++
		}
	}
	return got
}

// clientPod starts a pod to send requests from and returns the service's
// URL by cluster IP.
func clientPod(t *testing.T, ns, svc string) string {
	t.Helper()
	createPod(t, simplePod(ns, "client", "exec sleep 3600"))
	waitPod(t, ns, "client", time.Minute, "Running", running)
	s, err := client.CoreV1().Services(ns).Get(context.Background(), svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + s.Spec.ClusterIP + "/"
}

// runRecipeCommand runs a kubectl command line of a recipe, one without
// shell quoting, in ns; a trailing "# comment" is dropped.
func runRecipeCommand(t *testing.T, ns, line string) string {
	t.Helper()
	line, _, _ = strings.Cut(line, "#")
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "kubectl" || strings.ContainsAny(line, `'"`) {
		t.Fatalf("recipe command %q is not a plain kubectl command", line)
	}
	return kubectlOK(t, "", append([]string{"-n", ns}, f[1:]...)...)
}

var patchArg = regexp.MustCompile(`-p '([^']*)'`)

// The blue-green recipe: with blue serving, the Service's endpoints and
// answers are all blue; green starts beside it without traffic; the
// recipe's one patch of the selector moves endpoints and every answer to
// green at once.
func TestRecipeBlueGreen(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	recipeDump(t, ns)
	r := readRecipe(t, "blue-green.md")

	applyRecipe(t, r, ns, "Deployment/web-blue", "Service/web")
	url := clientPod(t, ns, "web")
	waitEndpointsByLabel(t, ns, "web", "version", map[string]int{"blue": 3})
	eventually(t, 30*time.Second, func() error {
		if got := versionsFrom(t, ns, "client", url, 20); got["blue"] != 20 {
			return fmt.Errorf("answers before green exists: %v, want 20 blue", got)
		}
		return nil
	})

	applyRecipe(t, r, ns, "Deployment/web-green")
	// Green is ready but not selected: still only blue.
	waitEndpointsByLabel(t, ns, "web", "version", map[string]int{"blue": 3})
	if got := versionsFrom(t, ns, "client", url, 20); got["blue"] != 20 {
		t.Errorf("answers with green running but not selected: %v, want 20 blue", got)
	}

	patch := r.command(t, "kubectl patch service web")
	m := patchArg.FindStringSubmatch(patch)
	if m == nil || !strings.Contains(m[1], `"version":"green"`) {
		t.Fatalf("the recipe's switch %q has no -p '...' selecting green", patch)
	}
	kubectlOK(t, "", "-n", ns, "patch", "service", "web", "-p", m[1])
	waitEndpointsByLabel(t, ns, "web", "version", map[string]int{"green": 3})
	// Once the proxy has the new endpoints, every answer is green.
	eventually(t, 30*time.Second, func() error {
		if got := versionsFrom(t, ns, "client", url, 30); got["green"] != 30 {
			return fmt.Errorf("answers after the switch: %v, want 30 green", got)
		}
		return nil
	})
}

// The canary recipe: nine stable and one canary replica behind a Service
// selecting both; the endpoints hold both tracks in those numbers, and
// over 200 requests the canary's share of answers is near its tenth. The
// recipe's scale-up and promotion then leave only v2 answering.
func TestRecipeCanary(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	recipeDump(t, ns)
	r := readRecipe(t, "canary.md")

	applyRecipe(t, r, ns, "Deployment/web-stable", "Service/web", "Deployment/web-canary")
	waitEndpointsByLabel(t, ns, "web", "track", map[string]int{"canary": 1, "stable": 9})
	url := clientPod(t, ns, "web")
	// Wait for the proxy to route to the canary at all before counting.
	eventually(t, 30*time.Second, func() error {
		if got := versionsFrom(t, ns, "client", url, 30); got["v2"] == 0 {
			return fmt.Errorf("no canary answer among %v", got)
		}
		return nil
	})

	const n = 200
	got := versionsFrom(t, ns, "client", url, n)
	if got["v1"]+got["v2"] != n {
		t.Fatalf("answers %v: want %d from v1 or v2", got, n)
	}
	share := float64(got["v2"]) / n
	t.Logf("canary answered %d of %d (%.1f%%) with 1 of 10 replicas", got["v2"], n, 100*share)
	if share < 0.02 || share > 0.25 {
		t.Errorf("canary share %.1f%% (%v); want about 10%%, between 2%% and 25%%", 100*share, got)
	}

	// The recipe's next steps: a larger canary, then promotion.
	runRecipeCommand(t, ns, r.command(t, "kubectl scale deployment web-canary"))
	waitEndpointsByLabel(t, ns, "web", "track", map[string]int{"canary": 3, "stable": 9})
	runRecipeCommand(t, ns, r.command(t, "kubectl set env deployment/web-stable"))
	runRecipeCommand(t, ns, r.command(t, "kubectl rollout status deployment/web-stable"))
	runRecipeCommand(t, ns, r.command(t, "kubectl delete deployment web-canary"))
	waitEndpointsByLabel(t, ns, "web", "track", map[string]int{"stable": 9})
	eventually(t, 30*time.Second, func() error {
		if got := versionsFrom(t, ns, "client", url, 30); got["v2"] != 30 {
			return fmt.Errorf("answers after promotion: %v, want 30 v2", got)
		}
		return nil
	})
}
