package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/server"
)

// TestMaxMutatingRequestsInFlight fills a control plane's only mutating
// slot with a create whose body never ends, and checks upstream's
// behaviour: other users' writes get 429 with Retry-After, while reads,
// watches, long-running writes and system:masters still get through.
func TestMaxMutatingRequestsInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second control plane")
	}
	cp := startControlPlane(t, server.Options{MaxRequestsInFlight: 10, MaxMutatingRequestsInFlight: 1})
	ctx := context.Background()
	admin := cp.admin(t)
	ac := cp.clientset(t, admin)
	// A user outside system:masters, allowed everything, so that only
	// the limit can refuse it.
	if _, err := ac.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "inflight-test"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ac.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "inflight-test"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "inflight-test"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "testers"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tester := cp.user(t, "tester", "testers")
	th, adminHTTP := cp.httpClient(tester), cp.httpClient(admin)
	cmURL := cp.inst.URL + "/api/v1/namespaces/default/configmaps"
	create := func(c *http.Client, name string) *http.Response {
		t.Helper()
		resp, err := c.Post(cmURL, "application/json", strings.NewReader(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q}}`, name)))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// The tester may write while the slot is free. The control plane's
	// own controllers write too, and with one slot they may hold it for a
	// moment, so a 429 here is retried until a create gets through.
	eventually(t, 10*time.Second, func() error {
		resp := create(th, fmt.Sprintf("before-%d", time.Now().UnixNano()))
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("tester's create while the slot is free: %d", resp.StatusCode)
		}
		return nil
	})

	// The administrator takes the slot like anyone while it is free, and
	// holds it while its body trickles in.
	body, feed := io.Pipe()
	held := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, cmURL, body)
		req.Header.Set("Content-Type", "application/json")
		resp, err := adminHTTP.Do(req)
		if err != nil {
			held <- 0
			return
		}
		resp.Body.Close()
		held <- resp.StatusCode
	}()
	// Leading white space (valid JSON) fills the client's buffers, so the
	// request reaches the server at once whatever the protocol.
	if _, err := feed.Write([]byte(strings.Repeat(" ", 64<<10) + `{"apiVersion":"v1","kind":"ConfigMap",`)); err != nil {
		t.Fatal(err)
	}

	var refused *http.Response
	eventually(t, 10*time.Second, func() error {
		resp := create(th, fmt.Sprintf("t-%d", time.Now().UnixNano()))
		if resp.StatusCode != http.StatusTooManyRequests {
			resp.Body.Close()
			return fmt.Errorf("create answered %d while the slot should be taken", resp.StatusCode)
		}
		refused = resp
		return nil
	})
	defer refused.Body.Close()
	if got := refused.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1", got)
	}
	var st metav1.Status
	if err := json.NewDecoder(refused.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Kind != "Status" || st.Code != 429 || st.Reason != metav1.StatusReasonTooManyRequests ||
		st.Message != "Too many requests, please try again later." || st.Details == nil || st.Details.RetryAfterSeconds != 1 {
		t.Errorf("status = %+v", st)
	}

	// Reads have slots of their own.
	if resp, err := th.Get(cmURL); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("list while writes are full: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// Watches are long-running and take no slot.
	tc := cp.clientset(t, tester)
	w, err := tc.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch while writes are full: %v", err)
	}
	defer w.Stop()
	// So are exec, attach and port-forward, though they are writes: this
	// one fails for the missing pod, not for the limit.
	resp, err := th.Post(cp.inst.URL+"/api/v1/namespaces/default/pods/nothing/exec?command=true&stdout=true", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("exec of a missing pod: %d, want 404", resp.StatusCode)
	}
	// system:masters is never refused.
	if resp := create(adminHTTP, "by-admin"); resp.StatusCode != http.StatusCreated {
		t.Errorf("admin's create while the slot is taken: %d", resp.StatusCode)
	} else {
		resp.Body.Close()
	}
	// The metric shows the slot in use.
	eventually(t, 5*time.Second, func() error {
		resp, err := adminHTTP.Get(cp.inst.URL + "/metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		for _, want := range []string{`apiserver_current_inflight_requests{request_kind="mutating"} 1`, `apiserver_current_inflight_requests{request_kind="readOnly"}`} {
			if !strings.Contains(string(data), want) {
				return fmt.Errorf("metrics lack %s", want)
			}
		}
		return nil
	})

	// Once the held create ends, the slot is free again.
	if _, err := feed.Write([]byte(`"metadata":{"name":"held"}}`)); err != nil {
		t.Fatal(err)
	}
	feed.Close()
	if code := <-held; code != http.StatusCreated {
		t.Fatalf("held create: %d", code)
	}
	// The handler gives the slot back as it returns, which may be a moment
	// after the client has read the answer.
	eventually(t, 5*time.Second, func() error {
		resp := create(th, fmt.Sprintf("after-%d", time.Now().UnixNano()))
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("tester's create after the slot was freed: %d", resp.StatusCode)
		}
		return nil
	})
	if _, err := ac.CoreV1().ConfigMaps("default").Get(ctx, "held", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
}
