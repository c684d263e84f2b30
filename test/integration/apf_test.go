package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/server"
)

// TestPriorityAndFairness runs a control plane with API Priority and
// Fairness on, as `orca server` does, at its default limits (600 seats).
func TestPriorityAndFairness(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second control plane")
	}
	cp := startControlPlane(t, server.Options{MaxRequestsInFlight: 400, MaxMutatingRequestsInFlight: 200, EnablePriorityAndFairness: true})
	ctx := context.Background()
	admin := cp.admin(t)
	ac := cp.clientset(t, admin)
	// Users in group "testers" may do anything, so only flow control can
	// refuse them.
	if _, err := ac.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "apf-test"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ac.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "apf-test"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "apf-test"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "testers"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("bootstrap configuration", func(t *testing.T) { testAPFDefaults(t, cp) })
	t.Run("dangling schema", func(t *testing.T) { testAPFDangling(t, cp, ac) })
	t.Run("refusal", func(t *testing.T) { testAPFRefusal(t, cp, ac) })
	t.Run("flood", func(t *testing.T) { testAPFFlood(t, cp, ac) })
}

// kubectlAt runs kubectl against another control plane than the shared
// one.
func kubectlAt(t *testing.T, cp *controlPlane, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), roleEnv+"=kubectl", "KUBECONFIG="+cp.inst.Kubeconfig, "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// testAPFDefaults: kubectl shows upstream's bootstrap configuration, the
// schemas in matching order and none of them dangling.
func testAPFDefaults(t *testing.T, cp *controlPlane) {
	wantSchemas := []string{
		"exempt exempt 1 <none> False",
		"probes exempt 2 <none> False",
		"system-leader-election leader-election 100 ByUser False",
		"system-node-high node-high 400 ByUser False",
		"system-nodes system 500 ByUser False",
		"kube-controller-manager workload-high 800 ByNamespace False",
		"kube-scheduler workload-high 800 ByNamespace False",
		"kube-system-service-accounts workload-high 900 ByNamespace False",
		"service-accounts workload-low 9000 ByUser False",
		"global-default global-default 9900 ByUser False",
		"catch-all catch-all 10000 ByUser False",
	}
	wantLevels := []string{
		"catch-all Limited 5 <none> <none> <none>",
		"exempt Exempt <none> <none> <none> <none>",
		"global-default Limited 20 128 6 50",
		"leader-election Limited 10 16 4 50",
		"node-high Limited 40 64 6 50",
		"system Limited 30 64 6 50",
		"workload-high Limited 40 128 6 50",
		"workload-low Limited 100 128 6 50",
	}
	var out string
	// The config controller writes the Dangling conditions shortly after
	// the server starts.
	eventually(t, 30*time.Second, func() error {
		out = kubectlAt(t, cp, "get", "flowschemas,prioritylevelconfigurations")
		if strings.Contains(out, "?") {
			return fmt.Errorf("conditions not written yet:\n%s", out)
		}
		return nil
	})
	var schemas, levels []string
	var header []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "NAME":
			header = append(header, strings.Join(f, " "))
		case strings.HasPrefix(f[0], "flowschema.flowcontrol.apiserver.k8s.io/"):
			// NAME PRIORITYLEVEL MATCHINGPRECEDENCE DISTINGUISHERMETHOD AGE MISSINGPL
			schemas = append(schemas, strings.Join(append([]string{strings.TrimPrefix(f[0], "flowschema.flowcontrol.apiserver.k8s.io/")}, append(f[1:4], f[5])...), " "))
		case strings.HasPrefix(f[0], "prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/"):
			// NAME TYPE NOMINALCONCURRENCYSHARES QUEUES HANDSIZE QUEUELENGTHLIMIT AGE
			levels = append(levels, strings.Join(append([]string{strings.TrimPrefix(f[0], "prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/")}, f[1:6]...), " "))
		}
	}
	wantHeader := []string{
		"NAME PRIORITYLEVEL MATCHINGPRECEDENCE DISTINGUISHERMETHOD AGE MISSINGPL",
		"NAME TYPE NOMINALCONCURRENCYSHARES QUEUES HANDSIZE QUEUELENGTHLIMIT AGE",
	}
	if !slices.Equal(header, wantHeader) || !slices.Equal(schemas, wantSchemas) || !slices.Equal(levels, wantLevels) {
		t.Fatalf("kubectl get flowschemas,prioritylevelconfigurations:\n%s\nwant schemas %q\nwant levels %q", out, wantSchemas, wantLevels)
	}
	// The bootstrap objects carry upstream's annotation.
	if !strings.Contains(kubectlAt(t, cp, "get", "flowschema", "global-default", "-o", "yaml"), "apf.kubernetes.io/autoupdate-spec: \"true\"") {
		t.Error("global-default lacks apf.kubernetes.io/autoupdate-spec")
	}
}

// testAPFDangling: a schema naming a missing level is marked Dangling
// until the level exists, as upstream's config controller marks it.
func testAPFDangling(t *testing.T, cp *controlPlane, ac kubernetes.Interface) {
	ctx := context.Background()
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan"},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "nowhere"},
			MatchingPrecedence:         5000,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "nobody"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		},
	}
	if _, err := ac.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dangling := func(status flowcontrolv1.ConditionStatus, reason, message string) {
		t.Helper()
		eventually(t, 30*time.Second, func() error {
			got, err := ac.FlowcontrolV1().FlowSchemas().Get(ctx, "orphan", metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == flowcontrolv1.FlowSchemaConditionDangling && c.Status == status && c.Reason == reason && c.Message == message {
					return nil
				}
			}
			return fmt.Errorf("conditions %+v", got.Status.Conditions)
		})
	}
	dangling(flowcontrolv1.ConditionTrue, "NotFound", `This FlowSchema references the PriorityLevelConfiguration object named "nowhere" but there is no such object`)
	if out := kubectlAt(t, cp, "get", "flowschema", "orphan"); !regexp.MustCompile(`orphan\s+nowhere\s+5000\s+<none>\s+\S+\s+True`).MatchString(out) {
		t.Errorf("kubectl get flowschema orphan:\n%s", out)
	}
	if _, err := ac.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "nowhere"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type:    flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dangling(flowcontrolv1.ConditionFalse, "Found", `This FlowSchema references the PriorityLevelConfiguration object named "nowhere" and it exists`)
	// Its shares would change every other level's seats.
	if err := ac.FlowcontrolV1().PriorityLevelConfigurations().Delete(ctx, "nowhere", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ac.FlowcontrolV1().FlowSchemas().Delete(ctx, "orphan", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The mandatory objects are fixed.
	catchAll, err := ac.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, "catch-all", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	catchAll.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](100)
	if _, err := ac.FlowcontrolV1().PriorityLevelConfigurations().Update(ctx, catchAll, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "spec of 'catch-all' must equal the fixed value") {
		t.Errorf("changing catch-all: %v", err)
	}
}

// testAPFRefusal: a level that rejects rather than queues answers 429 with
// Retry-After and the classification headers once its seats are taken; a
// watch gives its seat back once it is initialized; exec is not limited.
func testAPFRefusal(t *testing.T, cp *controlPlane, ac kubernetes.Interface) {
	ctx := context.Background()
	// No shares: no seats, so one request at a time runs, alone.
	pl, err := ac.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "one-at-a-time"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := ac.FlowcontrolV1().FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "one-at-a-time"},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "one-at-a-time"},
			MatchingPrecedence:         500,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:      []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "patient"}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, Namespaces: []string{"*"}, ClusterScope: true}},
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := cp.httpClient(cp.user(t, "patient", "testers"))
	cmURL := cp.inst.URL + "/api/v1/namespaces/default/configmaps"
	get := func() *http.Response {
		t.Helper()
		resp, err := c.Get(cmURL + "?limit=1")
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// The dispatcher learns of the new objects through its informers.
	eventually(t, 30*time.Second, func() error {
		resp := get()
		resp.Body.Close()
		if got := resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID"); got != string(fs.UID) {
			return fmt.Errorf("flow schema %q, want %q", got, fs.UID)
		}
		if got := resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID"); got != string(pl.UID) {
			return fmt.Errorf("priority level %q, want %q", got, pl.UID)
		}
		return nil
	})

	// A watch runs alone while it starts, then leaves the level free.
	w, err := cp.clientset(t, cp.user(t, "patient", "testers")).CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if resp := get(); resp.StatusCode != http.StatusOK {
		t.Errorf("list while a watch is open: %d", resp.StatusCode)
	} else {
		resp.Body.Close()
	}

	// A create whose body trickles in holds the only seat.
	body, feed := io.Pipe()
	held := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, cmURL, body)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			held <- 0
			return
		}
		resp.Body.Close()
		held <- resp.StatusCode
	}()
	if _, err := feed.Write([]byte(strings.Repeat(" ", 64<<10) + `{"apiVersion":"v1","kind":"ConfigMap",`)); err != nil {
		t.Fatal(err)
	}
	var refused *http.Response
	eventually(t, 10*time.Second, func() error {
		resp := get()
		if resp.StatusCode != http.StatusTooManyRequests {
			resp.Body.Close()
			return fmt.Errorf("list answered %d while the seat should be taken", resp.StatusCode)
		}
		refused = resp
		return nil
	})
	defer refused.Body.Close()
	if ra, err := strconv.Atoi(refused.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After = %q", refused.Header.Get("Retry-After"))
	}
	if refused.Header.Get("X-Kubernetes-PF-FlowSchema-UID") != string(fs.UID) || refused.Header.Get("X-Kubernetes-PF-PriorityLevel-UID") != string(pl.UID) {
		t.Errorf("refusal headers %v", refused.Header)
	}
	var st metav1.Status
	if err := json.NewDecoder(refused.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Code != 429 || st.Reason != metav1.StatusReasonTooManyRequests || st.Message != "Too many requests, please try again later." {
		t.Errorf("status = %+v", st)
	}
	// Long-running requests other than watches take no seat: this exec
	// fails for the missing pod, not for the level.
	resp, err := c.Post(cp.inst.URL+"/api/v1/namespaces/default/pods/nothing/exec?command=true&stdout=true", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("exec of a missing pod: %d, want 404", resp.StatusCode)
	}
	// The administrator is exempt.
	if _, err := ac.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		t.Errorf("administrator refused: %v", err)
	}
	metrics := scrape(t, cp)
	for _, want := range []string{
		`apiserver_flowcontrol_rejected_requests_total{flow_schema="one-at-a-time",priority_level="one-at-a-time",reason="concurrency-limit"}`,
		`apiserver_flowcontrol_current_executing_requests{flow_schema="one-at-a-time",priority_level="one-at-a-time"} 1`,
		`apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt",priority_level="exempt"}`,
		`apiserver_flowcontrol_nominal_limit_seats{priority_level="global-default"} 49`,
		`apiserver_request_total{code="429",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"}`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if _, err := feed.Write([]byte(`"metadata":{"name":"held"}}`)); err != nil {
		t.Fatal(err)
	}
	feed.Close()
	if code := <-held; code != http.StatusCreated {
		t.Fatalf("held create: %d", code)
	}
	// The seat is given back just after the answer is written.
	eventually(t, 5*time.Second, func() error {
		resp := get()
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("list after the seat was freed: %d", resp.StatusCode)
		}
		return nil
	})
}

func scrape(t *testing.T, cp *controlPlane) string {
	t.Helper()
	resp, err := cp.httpClient(cp.admin(t)).Get(cp.inst.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return string(data)
}

// metricValue reads one series from a scrape.
func metricValue(metrics, series string) float64 {
	sc := bufio.NewScanner(strings.NewReader(metrics))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// testAPFFlood: one user lists a thousand objects as fast as 24
// connections allow while another creates objects one after the other,
// both in one FlowSchema that tells them apart by user. The level's three
// seats fit three lists at a time, so most of the noisy user's requests
// wait; the quiet user's creates must not wait behind that backlog. The
// measure is a count, not a speed: how many of the noisy user's lists
// finish while one create is in flight. Behind the backlog that would be
// about the whole of it (21); fair queuing lets the create in at one of
// the next free seats. The same flood with both users in one flow (a
// schema without distinguisher) shows the measure tells the two apart.
func testAPFFlood(t *testing.T, cp *controlPlane, ac kubernetes.Interface) {
	ctx := context.Background()
	// 1 share of 246 gets 3 of the 600 seats, lent to nobody and
	// borrowing nothing, so the level keeps exactly that; its requests
	// are one seat wide (15% of 3, rounded up).
	if _, err := ac.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "flood"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](1), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 6, QueueLengthLimit: 50}},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	schema := func(name, group string, byUser bool) *flowcontrolv1.FlowSchema {
		fs := &flowcontrolv1.FlowSchema{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: flowcontrolv1.FlowSchemaSpec{
				PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "flood"},
				MatchingPrecedence:         600,
				Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
					Subjects:      []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: group}}},
					ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, Namespaces: []string{"*"}, ClusterScope: true}},
				}},
			},
		}
		if byUser {
			fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}
		}
		fs, err := ac.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	fair, oneFlow := schema("flood", "flooders", true), schema("flood-one-flow", "flooders-together", false)
	for _, ns := range []string{"flood", "quiet"} {
		if _, err := ac.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// 1000 objects of 4 KiB: each list is 4 MB of JSON, many times the
	// work of a create.
	filler := strings.Repeat("x", 4096)
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i := range 1000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ac.CoreV1().ConfigMaps("flood").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"filler": filler},
			}, metav1.CreateOptions{})
			errs <- err
		}()
		if i%16 == 15 {
			wg.Wait()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	const quietCreates = 50
	r := runFlood(t, cp, fair, "noisy", "quiet", "flooders", quietCreates)
	r.log(t, "one schema, a flow per user")
	// Enough creates for a median: each waits behind the backlog.
	control := runFlood(t, cp, oneFlow, "noisy-too", "quiet-too", "flooders-together", 15)
	control.log(t, "one schema, one flow")

	if len(r.quietFailures) > 0 || len(r.latencies) != quietCreates {
		t.Fatalf("quiet user starved: %d of %d creates done, failures %v", len(r.latencies), quietCreates, r.quietFailures)
	}
	if !r.stillFlooding {
		t.Fatal("the flood ended before the quiet user was done; nothing was measured under load")
	}
	// Flow control held the noisy user back: it queued, and the level
	// never ran more than its seats.
	if r.maxQueued == 0 || r.maxSeats > 3 {
		t.Errorf("noisy user not held to the level: up to %v queued, %v seats", r.maxQueued, r.maxSeats)
	}
	if r.failed > 0 {
		t.Errorf("%d of the noisy user's lists failed", r.failed)
	}
	// The fairness property: the quiet user's creates went in ahead of
	// the noisy backlog, unlike a quiet request in the noisy flow.
	if p90 := r.quantile(0.9); p90 > (floodNoisyStreams-3)/2 {
		t.Errorf("p90 of noisy lists finished during a quiet create is %d: the quiet user waited behind the backlog (%v)", p90, r.during)
	}
	if len(control.during) > 0 && control.quantile(0.5) <= r.quantile(0.5) {
		t.Errorf("in one flow the quiet user waited no longer (median %d lists) than in a flow of its own (%d)", control.quantile(0.5), r.quantile(0.5))
	}
	if p99 := r.latencies[len(r.latencies)*99/100]; p99 >= time.Second {
		t.Errorf("quiet user's p99 latency %v", p99)
	}
}

const (
	floodNoisyStreams = 24
	floodMaxLists     = 400 // per stream
	floodTimeLimit    = 60 * time.Second
)

type floodResult struct {
	lists, refused, failed int64
	maxQueued, maxSeats    float64
	// during holds, for each quiet create, how many noisy lists finished
	// while it was in flight; sorted.
	during        []int
	latencies     []time.Duration
	quietFailures []string
	stillFlooding bool
}

func (r floodResult) quantile(q float64) int { return r.during[int(float64(len(r.during))*q)] }

func (r floodResult) log(t *testing.T, what string) {
	t.Logf("%s: noisy user %d lists, %d refused, %d failed; level held up to %v queued, %v seats in use",
		what, r.lists, r.refused, r.failed, r.maxQueued, r.maxSeats)
	if len(r.latencies) > 0 {
		t.Logf("%s: quiet user %d creates, noisy lists finished during each: median %d, p90 %d, max %d; latency median %v, p99 %v",
			what, len(r.latencies), r.quantile(0.5), r.quantile(0.9), r.during[len(r.during)-1],
			r.latencies[len(r.latencies)/2], r.latencies[len(r.latencies)*99/100])
	}
}

// runFlood floods the level as noisyName while quietName creates so many
// ConfigMaps one at a time, both in group and so classified by fs. It is
// bounded in time and in count.
func runFlood(t *testing.T, cp *controlPlane, fs *flowcontrolv1.FlowSchema, noisyName, quietName, group string, quietCreates int) floodResult {
	noisy := cp.httpClient(cp.user(t, noisyName, group, "testers"))
	quiet := cp.httpClient(cp.user(t, quietName, group, "testers"))
	listURL := cp.inst.URL + "/api/v1/namespaces/flood/configmaps"
	eventually(t, 30*time.Second, func() error {
		resp, err := quiet.Get(listURL + "?limit=1")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID"); got != string(fs.UID) {
			return fmt.Errorf("%s classified by %q, not %s", quietName, got, fs.Name)
		}
		return nil
	})

	ctx, stop := context.WithTimeout(context.Background(), floodTimeLimit)
	defer stop()
	var r floodResult
	var listed, refused, failed atomic.Int64
	var noisyWG sync.WaitGroup
	for range floodNoisyStreams {
		noisyWG.Add(1)
		go func() {
			defer noisyWG.Done()
			for range floodMaxLists {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, listURL, nil)
				resp, err := noisy.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						failed.Add(1)
					}
					return
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch {
				case err != nil:
					return
				case resp.StatusCode == http.StatusTooManyRequests:
					refused.Add(1)
				case resp.StatusCode != http.StatusOK:
					failed.Add(1)
				default:
					listed.Add(1)
				}
			}
		}()
	}
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		queued := fmt.Sprintf(`apiserver_flowcontrol_current_inqueue_requests{flow_schema=%q,priority_level="flood"}`, fs.Name)
		seats := fmt.Sprintf(`apiserver_flowcontrol_current_executing_seats{flow_schema=%q,priority_level="flood"}`, fs.Name)
		for ctx.Err() == nil {
			m := scrape(t, cp)
			r.maxQueued = max(r.maxQueued, metricValue(m, queued))
			r.maxSeats = max(r.maxSeats, metricValue(m, seats))
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	// Let the backlog build before the quiet user starts.
	eventually(t, 30*time.Second, func() error {
		if n := listed.Load(); n < floodNoisyStreams {
			return fmt.Errorf("%d lists so far", n)
		}
		return nil
	})
	for i := range quietCreates {
		if ctx.Err() != nil {
			break
		}
		before := listed.Load()
		start := time.Now()
		resp, err := quiet.Post(cp.inst.URL+"/api/v1/namespaces/quiet/configmaps", "application/json",
			bytes.NewReader([]byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s-%d"}}`, quietName, i))))
		if err != nil {
			r.quietFailures = append(r.quietFailures, err.Error())
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		r.latencies = append(r.latencies, time.Since(start))
		r.during = append(r.during, int(listed.Load()-before))
		if resp.StatusCode != http.StatusCreated {
			r.quietFailures = append(r.quietFailures, resp.Status)
		}
	}
	r.stillFlooding = ctx.Err() == nil && listed.Load() < floodNoisyStreams*floodMaxLists
	stop()
	noisyWG.Wait()
	<-sampled
	r.lists, r.refused, r.failed = listed.Load(), refused.Load(), failed.Load()
	slices.Sort(r.during)
	slices.Sort(r.latencies)
	return r
}
