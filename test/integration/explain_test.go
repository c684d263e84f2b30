package integration

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/scheduler/explain"
)

// colourPod is the seed example's pod: it tolerates its colour's taint
// and requires its colour's label (none for gray). The node selector on
// the isolation label keeps it on this test's nodes; on those nodes the
// taint and affinity verdicts are the example's.
func (e *schedEnv) colourPod(name, colour, cpu string, annotate bool) *v1.Pod {
	return e.pod(name, cpu, func(p *v1.Pod) {
		p.Spec.NodeSelector = map[string]string{isolationTaint: e.ns}
		if annotate {
			p.Annotations = map[string]string{explain.RequestAnnotation: "true"}
		}
		if colour == "" {
			return
		}
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: "color", Operator: v1.TolerationOpEqual, Value: colour, Effect: v1.TaintEffectNoSchedule})
		p.Spec.Affinity = nodeSelectorTerm("color", colour)
	})
}

// verdicts are the explanation's rejections of the named nodes.
func verdicts(ex *explain.Explanation, nodes ...string) map[string]string {
	want := map[string]bool{}
	for _, n := range nodes {
		want[n] = true
	}
	out := map[string]string{}
	for _, v := range ex.Rejected {
		if want[v.Node] {
			out[v.Node] = v.Plugin + ": " + v.Reason
		}
	}
	return out
}

func TestSchedulerExplainsTheColourExample(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	colourNode := func(c string) string {
		return e.node(c, 4, map[string]string{"color": c}, v1.Taint{Key: "color", Value: c, Effect: v1.TaintEffectNoSchedule})
	}
	blue, green, gray := colourNode("blue"), colourNode("green"), e.node("gray", 4, nil)
	// Pods are admitted once the namespace's service account exists.
	eventually(t, 20*time.Second, func() error {
		_, err := client.CoreV1().ServiceAccounts(e.ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	pods := client.CoreV1().Pods(e.ns)
	// The verdicts name every node, so the scheduler must know the last
	// one made before the first pod: a pod only gray can take is bound
	// once its informer has gray, and with it the nodes made before.
	e.pod("gray-seen", "1m", func(p *v1.Pod) {
		p.Spec.NodeSelector = map[string]string{v1.LabelHostname: gray}
	})
	if got := e.placements("gray-seen")["gray-seen"]; got != gray {
		t.Fatalf("a pod for gray bound to %s", got)
	}
	zero := int64(0)
	if err := pods.Delete(ctx, "gray-seen", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}

	t.Run("blue pod, explanation asked for", func(t *testing.T) {
		e.colourPod("blue-pod", "blue", "100m", true)
		if got := e.placements("blue-pod")["blue-pod"]; got != blue {
			t.Fatalf("blue pod on %s, want %s", got, blue)
		}
		// Written before the bind: a bound pod has it.
		p, err := pods.Get(ctx, "blue-pod", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := explain.Decode(p.Annotations[explain.Annotation])
		if err != nil {
			t.Fatalf("annotation %q: %v", p.Annotations[explain.Annotation], err)
		}
		if ex.Result != explain.Scheduled || ex.Node != blue || ex.UID != string(p.UID) || ex.Evaluated != ex.Nodes {
			t.Errorf("explanation: %s to %s (uid %s), %d of %d nodes evaluated; want Scheduled to %s, every node", ex.Result, ex.Node, ex.UID, ex.Evaluated, ex.Nodes, blue)
		}
		want := map[string]string{
			green: "TaintToleration: node(s) had untolerated taint {color: green}",
			gray:  "NodeAffinity: node(s) didn't match Pod's node affinity/selector",
		}
		if got := verdicts(ex, blue, green, gray); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("verdicts on this test's nodes\n got %v\nwant %v", got, want)
		}
		if len(ex.Scored) != 1 || ex.Scored[0].Node != blue || ex.Scored[0].Rank != 1 {
			t.Errorf("scored %+v, want %s alone, ranked first", ex.Scored, blue)
		}
		// orca explain fetches the same and prints it.
		fetched, err := explain.Fetch(ctx, client.CoreV1(), e.ns, "blue-pod", false, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := explain.Print(&out, fetched, 10); err != nil {
			t.Fatal(err)
		}
		for _, re := range []string{
			`(?m)^Result: +Scheduled to ` + blue + `$`,
			`(?m)^` + green + ` +TaintToleration +node\(s\) had untolerated taint \{color: green\}$`,
			`(?m)^` + gray + ` +NodeAffinity +node\(s\) didn't match Pod's node affinity/selector$`,
			`(?m)^1 +` + blue + ` +\d+ \(\d+\)`,
		} {
			if !regexp.MustCompile(re).MatchString(out.String()) {
				t.Errorf("orca explain output does not match %s:\n%s", re, out.String())
			}
		}
		// Upstream's message first, then the ranking.
		if ev := e.event("blue-pod", "Scheduled"); !regexp.MustCompile(`^Successfully assigned ` + e.ns + `/blue-pod to ` + blue + ` \(top: ` + blue + ` \d+\)$`).MatchString(ev) {
			t.Errorf("Scheduled event %q", ev)
		}
	})

	t.Run("gray pod, no explanation asked for", func(t *testing.T) {
		e.colourPod("gray-pod", "", "100m", false)
		if got := e.placements("gray-pod")["gray-pod"]; got != gray {
			t.Fatalf("gray pod on %s, want %s", got, gray)
		}
		if ev, want := e.event("gray-pod", "Scheduled"), "Successfully assigned "+e.ns+"/gray-pod to "+gray+" (the only feasible node)"; ev != want {
			t.Errorf("Scheduled event %q, want %q", ev, want)
		}
		// Not asked for: the scheduler's recent explanations have it,
		// through pods/explanation, over the nodes it evaluated.
		ex, err := explain.Fetch(ctx, client.CoreV1(), e.ns, "gray-pod", false, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			blue:  "TaintToleration: node(s) had untolerated taint {color: blue}",
			green: "TaintToleration: node(s) had untolerated taint {color: green}",
		}
		if got := verdicts(ex, blue, green, gray); ex.Node != gray || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("stored explanation: to %s, verdicts %v; want %s, %v", ex.Node, got, gray, want)
		}
		body, err := client.CoreV1().RESTClient().Get().Namespace(e.ns).Resource("pods").Name("blue-pod").SubResource("explanation").DoRaw(ctx)
		if err != nil || !strings.Contains(string(body), `"node":"`+blue+`"`) {
			t.Errorf("GET pods/blue-pod/explanation: %v %s", err, body)
		}
		if _, err := explain.Fetch(ctx, client.CoreV1(), e.ns, "no-such-pod", false, time.Second); err == nil || !strings.Contains(err.Error(), `pod "no-such-pod" not found`) {
			t.Errorf("explaining a missing pod: %v", err)
		}
		_, err = client.CoreV1().RESTClient().Get().Namespace(e.ns).Resource("pods").Name("no-such-pod").SubResource("explanation").DoRaw(ctx)
		if !apierrors.IsNotFound(err) {
			t.Errorf("GET pods/no-such-pod/explanation: %v, want 404", err)
		}
	})

	t.Run("who may read the pod may read its explanation", func(t *testing.T) {
		if _, err := client.RbacV1().RoleBindings(e.ns).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "viewer"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "explain-viewer"}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		get := func(user string) error {
			_, err := clientAs(t, user, "system:authenticated").CoreV1().RESTClient().Get().Namespace(e.ns).Resource("pods").Name("gray-pod").SubResource("explanation").DoRaw(ctx)
			return err
		}
		// RBAC bindings reach the authorizer through its cache.
		eventually(t, 10*time.Second, func() error { return get("explain-viewer") })
		if err := get("explain-stranger"); !apierrors.IsForbidden(err) {
			t.Errorf("a user who may not read the pod: %v, want 403", err)
		}
	})

	t.Run("pending green pod, explained on request", func(t *testing.T) {
		e.colourPod("green-big", "green", "16", false)
		msg := e.unschedulable("green-big")
		// What `orca explain pod/green-big` does: ask, wait for the next
		// attempt.
		ex, err := explain.Fetch(ctx, client.CoreV1(), e.ns, "green-big", false, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if ex.Result != explain.Unschedulable || ex.Node != "" {
			t.Fatalf("explanation %s %q, want Unschedulable", ex.Result, ex.Node)
		}
		want := map[string]string{
			blue:  "TaintToleration: node(s) had untolerated taint {color: blue}",
			gray:  "NodeAffinity: node(s) didn't match Pod's node affinity/selector",
			green: "NodeResourcesFit: Insufficient cpu",
		}
		if got := verdicts(ex, blue, green, gray); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("verdicts\n got %v\nwant %v", got, want)
		}
		// The same words and counts as the condition and FailedScheduling.
		counts := fmt.Sprintf("0/%d nodes are available: %s.", ex.Nodes, ex.ReasonsText())
		if !strings.HasPrefix(ex.Message, counts) {
			t.Errorf("message %q does not start with its counts %q", ex.Message, counts)
		}
		if ex.Message != msg {
			// Another test's nodes may have come or gone between attempts.
			msg = e.unschedulable("green-big")
		}
		if ex.Message != msg {
			t.Errorf("explanation message %q, PodScheduled condition %q", ex.Message, msg)
		}
		if ev := e.event("green-big", "FailedScheduling"); !strings.HasPrefix(ev, "0/") || !strings.Contains(ev, "Insufficient cpu") {
			t.Errorf("FailedScheduling %q: want upstream's message", ev)
		}
		// green failed only on resources, after every other filter.
		if len(ex.Closest) == 0 || ex.Closest[0] != green {
			t.Errorf("closest %v, want %s first", ex.Closest, green)
		}
	})
}
