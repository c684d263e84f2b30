package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilptr "k8s.io/utils/ptr"
)

// evictRaw posts body to the pod's eviction subresource and returns the
// HTTP status and the decoded Status answer.
func evictRaw(t *testing.T, ns, pod, body string, query ...string) (int, metav1.Status) {
	t.Helper()
	req := client.CoreV1().RESTClient().Post().AbsPath("/api/v1/namespaces", ns, "pods", pod, "eviction").
		SetHeader("Content-Type", "application/json").Body([]byte(body))
	for i := 0; i+1 < len(query); i += 2 {
		req = req.Param(query[i], query[i+1])
	}
	res := req.Do(context.Background())
	raw, _ := res.Raw()
	var code int
	res.StatusCode(&code)
	var st metav1.Status
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("eviction answer %d is not a Status: %s", code, raw)
	}
	return code, st
}

func evictionBody(apiVersion, pod, deleteOptions string) string {
	if deleteOptions == "" {
		return fmt.Sprintf(`{"apiVersion":%q,"kind":"Eviction","metadata":{"name":%q}}`, apiVersion, pod)
	}
	return fmt.Sprintf(`{"apiVersion":%q,"kind":"Eviction","metadata":{"name":%q},"deleteOptions":%s}`, apiVersion, pod, deleteOptions)
}

func waitBudget(t *testing.T, ns, name string, check func(*policyv1.PodDisruptionBudget) error) *policyv1.PodDisruptionBudget {
	t.Helper()
	var pdb *policyv1.PodDisruptionBudget
	eventually(t, 30*time.Second, func() error {
		var err error
		if pdb, err = client.PolicyV1().PodDisruptionBudgets(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		return check(pdb)
	})
	return pdb
}

func budgetIs(gen int64, current, desired, expected, allowed int32) func(*policyv1.PodDisruptionBudget) error {
	return func(p *policyv1.PodDisruptionBudget) error {
		s := p.Status
		if s.ObservedGeneration != gen || s.CurrentHealthy != current || s.DesiredHealthy != desired || s.ExpectedPods != expected || s.DisruptionsAllowed != allowed {
			return fmt.Errorf("status %+v, want generation %d healthy %d/%d expected %d allowed %d", s, gen, current, desired, expected, allowed)
		}
		return nil
	}
}

// TestEvictionSubresource drives pods/eviction against a budget the
// disruption controller keeps: a dry run changes nothing, one eviction
// passes and is recorded, the next is refused with upstream's 429, a pod
// under two budgets gets the 500, and a finished pod goes regardless.
func TestEvictionSubresource(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "eviction")
	// Pods that appear once the budget is met stay Pending, so that the
	// budget cannot recover behind the test's back.
	var hold atomic.Bool
	deployReadyUnless(t, ns, func(p *v1.Pod) bool { return hold.Load() || p.Name == "finished" })

	sel := map[string]string{"app": "web"}
	_, err := client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: utilptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: v1.PodSpec{
				NodeName: fakeNodeName, TerminationGracePeriodSeconds: utilptr.To[int64](0),
				Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(intstr.FromInt32(2)), Selector: &metav1.LabelSelector{MatchLabels: sel}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdb := waitBudget(t, ns, "web", budgetIs(1, 3, 2, 3, 1))
	if c := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition); c == nil || c.Status != metav1.ConditionTrue || c.Reason != policyv1.SufficientPodsReason {
		t.Errorf("condition %+v, want DisruptionAllowed True SufficientPods", c)
	}
	hold.Store(true)
	out := mustKubectl(t, "", "get", "pdb", "-n", ns)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 ||
		strings.Join(strings.Fields(lines[0]), " ") != "NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "web 2 N/A 1 ") {
		t.Errorf("kubectl get pdb:\n%s", out)
	}

	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.FormatLabels(sel)})
	if err != nil || len(pods.Items) != 3 {
		t.Fatalf("pods %v %v", len(pods.Items), err)
	}
	first, second := pods.Items[0].Name, pods.Items[1].Name

	// A dry run, in the policy/v1beta1 form older clients send, answers
	// as the eviction would and changes nothing.
	if code, st := evictRaw(t, ns, first, evictionBody("policy/v1beta1", first, ""), "dryRun", "All"); code != http.StatusCreated || st.Status != metav1.StatusSuccess {
		t.Fatalf("dry run: %d %+v", code, st)
	}
	p, err := client.CoreV1().Pods(ns).Get(ctx, first, metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp != nil || hasCondition(p, v1.DisruptionTarget) {
		t.Fatalf("dry run touched the pod: %v %+v", err, p.Status.Conditions)
	}
	waitBudget(t, ns, "web", budgetIs(1, 3, 2, 3, 1))

	// A real eviction, with a grace period the fake node never finishes:
	// the pod is marked, carries DisruptionTarget, and the budget records it.
	code, st := evictRaw(t, ns, first, evictionBody("policy/v1", first, `{"gracePeriodSeconds":30}`))
	if code != http.StatusCreated || st.Status != metav1.StatusSuccess || st.Code != http.StatusCreated {
		t.Fatalf("eviction: %d %+v", code, st)
	}
	p, err = client.CoreV1().Pods(ns).Get(ctx, first, metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp == nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("evicted pod not terminating with 30s grace: %v %+v", err, p.ObjectMeta)
	}
	if c := condition(p, v1.DisruptionTarget); c == nil || c.Status != v1.ConditionTrue || c.Reason != "EvictionByEvictionAPI" || c.Message != "Eviction API: evicting" {
		t.Errorf("DisruptionTarget condition %+v", c)
	}
	// The controller has seen the pod go: two healthy, none to spare.
	waitBudget(t, ns, "web", budgetIs(1, 2, 2, 4, 0))

	code, st = evictRaw(t, ns, second, evictionBody("policy/v1", second, ""))
	want := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: http.StatusTooManyRequests,
		Reason:  metav1.StatusReasonTooManyRequests,
		Message: "Cannot evict pod as it would violate the pod's disruption budget.",
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: policyv1.DisruptionBudgetCause, Message: "The disruption budget web needs 2 healthy pods and has 2 currently"}}},
	}
	if code != http.StatusTooManyRequests || !statusEqual(st, want) {
		t.Errorf("second eviction: %d %+v, want 429 %+v", code, st, want)
	}
	if p, err := client.CoreV1().Pods(ns).Get(ctx, second, metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
		t.Errorf("refused eviction deleted the pod: %v", err)
	}

	// Two budgets over one pod: upstream refuses with a 500.
	_, err = client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web-too"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: utilptr.To(intstr.FromString("50%")), Selector: &metav1.LabelSelector{MatchLabels: sel}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	code, st = evictRaw(t, ns, second, evictionBody("policy/v1", second, ""))
	if code != http.StatusInternalServerError || st.Status != metav1.StatusFailure || st.Code != 500 ||
		st.Message != "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support." {
		t.Errorf("eviction under two budgets: %d %+v", code, st)
	}
	// client-go reports it as the error upstream's e2e test expects.
	err = client.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: second, Namespace: ns}})
	if err == nil || err.Error() != "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support." {
		t.Errorf("EvictV1 under two budgets: %v", err)
	}

	// A finished pod goes without asking its budgets, both of which would
	// refuse.
	_, err = client.CoreV1().Pods(ns).Create(ctx, &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "finished", Labels: sel},
		Spec:       v1.PodSpec{NodeName: fakeNodeName, Containers: []v1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fin, err := client.CoreV1().Pods(ns).Get(ctx, "finished", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fin.Status = fakeStatus(fin, v1.PodSucceeded)
	if _, err := client.CoreV1().Pods(ns).UpdateStatus(ctx, fin, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if code, st := evictRaw(t, ns, "finished", evictionBody("policy/v1", "finished", "")); code != http.StatusCreated || st.Status != metav1.StatusSuccess {
		t.Fatalf("evicting a finished pod: %d %+v", code, st)
	}
	if _, err := client.CoreV1().Pods(ns).Get(ctx, "finished", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("finished pod still there after eviction: %v", err)
	}

	// kubectl drain evicts only if discovery lists the subresource this
	// way; otherwise it silently deletes pods instead.
	list, err := client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range list.APIResources {
		if r.Name == "pods/eviction" {
			found = r.Kind == "Eviction" && r.Group == "policy" && r.Version == "v1" && strings.Join(r.Verbs, ",") == "create"
		}
	}
	if !found {
		t.Errorf("discovery of v1 lacks pods/eviction as policy/v1 Eviction, verb create: %+v", list.APIResources)
	}

	// Malformed requests.
	if code, st := evictRaw(t, ns, second, evictionBody("policy/v1", "other", "")); code != http.StatusBadRequest || st.Message != "name in URL does not match name in Eviction object" {
		t.Errorf("mismatched name: %d %+v", code, st)
	}
	if code, st := evictRaw(t, ns, second, evictionBody("policy/v1", second, `{"propagationPolicy":"Sometimes"}`)); code != http.StatusUnprocessableEntity || st.Reason != metav1.StatusReasonInvalid {
		t.Errorf("bad delete options: %d %+v", code, st)
	}
	if code, _ := evictRaw(t, ns, "missing", evictionBody("policy/v1", "missing", "")); code != http.StatusNotFound {
		t.Errorf("missing pod: %d, want 404", code)
	}
}

func condition(p *v1.Pod, typ v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func hasCondition(p *v1.Pod, typ v1.PodConditionType) bool { return condition(p, typ) != nil }

func statusEqual(a, b metav1.Status) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestSchedulerPreemptionSparesBudgetedPods: of two lower-priority pods on
// a full node, the scheduler evicts the one no budget protects, although
// the protected one has the lower priority and would go first otherwise.
func TestSchedulerPreemptionSparesBudgetedPods(t *testing.T) {
	e := newSchedEnv(t)
	node := e.node("only", 2, nil)
	prio := e.priority
	guard := func(p *v1.Pod) { prio(10)(p); p.Labels["app"] = "guarded" }
	e.pod("guarded", "1", guard)
	e.pod("free", "1", prio(20))
	e.placements("guarded", "free")
	_, err := client.PolicyV1().PodDisruptionBudgets(e.ns).Create(context.Background(), &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "guarded"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: utilptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The budget allows nothing (its pod is not even ready); wait until
	// the controller has said so, by which time the scheduler's informer
	// has the budget too.
	waitBudget(t, e.ns, "guarded", budgetIs(1, 0, 1, 1, 0))
	e.pod("high", "1", prio(100))
	e.waitPreempted("high", "free", node)
	if g, _ := client.CoreV1().Pods(e.ns).Get(context.Background(), "guarded", metav1.GetOptions{}); g.DeletionTimestamp != nil {
		t.Error("the budgeted pod was evicted")
	}
}
