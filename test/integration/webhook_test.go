package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// webhookServer answers AdmissionReviews for the tests: /deny refuses
// ConfigMaps holding the key "forbidden" and warns about the others,
// /label adds the label mutated=yes, /slow answers after three seconds.
// It records the reviews it got.
type webhookServer struct {
	mu      sync.Mutex
	reviews map[string][]*admissionv1.AdmissionRequest
}

func (ws *webhookServer) got(path string) []*admissionv1.AdmissionRequest {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return append([]*admissionv1.AdmissionRequest(nil), ws.reviews[path]...)
}

func (ws *webhookServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	ws.mu.Lock()
	ws.reviews[r.URL.Path] = append(ws.reviews[r.URL.Path], review.Request)
	ws.mu.Unlock()
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	var cm corev1.ConfigMap
	_ = json.Unmarshal(review.Request.Object.Raw, &cm)
	switch r.URL.Path {
	case "/deny":
		if _, ok := cm.Data["forbidden"]; ok {
			resp.Allowed = false
			resp.Result = &metav1.Status{Code: http.StatusForbidden, Message: "the key forbidden is forbidden"}
		} else {
			resp.Warnings = []string{"deny.webhook.example.com looked at " + cm.Name}
		}
	case "/label":
		patch := `[{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}]`
		if cm.Labels != nil {
			patch = `[{"op":"add","path":"/metadata/labels/mutated","value":"yes"}]`
		}
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patch, resp.PatchType = []byte(patch), &pt
		resp.AuditAnnotations = map[string]string{"labelled": "yes"}
	case "/slow":
		time.Sleep(3 * time.Second)
	case "/connect":
		resp.Allowed = false
		resp.Result = &metav1.Status{Code: http.StatusForbidden, Message: fmt.Sprintf("%s to pod %q is not allowed", review.Request.SubResource, review.Request.Name)}
	}
	review.Request, review.Response = nil, resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// TestAdmissionWebhooks registers mutating and validating webhooks served
// over TLS by the test and checks what a client sees: refusals with the
// webhook's message, warnings, patches, namespace selectors and match
// conditions, dry run, failure policies, timeouts, and a webhook reached
// through a Service.
func TestAdmissionWebhooks(t *testing.T) {
	ctx := context.Background()
	ws := &webhookServer{reviews: map[string][]*admissionv1.AdmissionRequest{}}
	srv, caPEM := tlsServer(t, ws)
	ns := newNamespace(t, client, "webhook")
	if _, err := client.CoreV1().Namespaces().Patch(ctx, ns, "application/merge-patch+json", []byte(`{"metadata":{"labels":{"webhooks":"on"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	other := newNamespace(t, client, "nowebhook")

	cmRules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}}
	on := &metav1.LabelSelector{MatchLabels: map[string]string{"webhooks": "on"}}
	none := admissionregistrationv1.SideEffectClassNone
	hook := func(name, path string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name:                    name,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + path), CABundle: caPEM},
			Rules:                   cmRules,
			NamespaceSelector:       on,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name: "not-skipped", Expression: `!has(object.metadata.annotations) || !('skip' in object.metadata.annotations)`,
			}},
		}
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-forbidden"},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{hook("deny.webhook.example.com", "/deny")},
	}
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, vwc.Name, metav1.DeleteOptions{})
	lh := hook("label.webhook.example.com", "/label")
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "label-configmaps"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: lh.Name, ClientConfig: lh.ClientConfig, Rules: lh.Rules, NamespaceSelector: lh.NamespaceSelector,
			SideEffects: lh.SideEffects, AdmissionReviewVersions: lh.AdmissionReviewVersions, MatchConditions: lh.MatchConditions,
		}},
	}
	if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, mwc.Name, metav1.DeleteOptions{})

	// The configurations take effect once the server's informers have
	// them.
	eventually(t, 10*time.Second, func() error {
		res := runKubectl(t, "", "-n", ns, "create", "configmap", "probe-"+fmt.Sprint(time.Now().UnixNano()), "--from-literal=forbidden=1")
		if res.Code == 0 {
			return fmt.Errorf("not refused yet")
		}
		return nil
	})

	t.Run("refusal with the webhook's message", func(t *testing.T) {
		res := runKubectl(t, "", "-n", ns, "create", "configmap", "bad", "--from-literal=forbidden=1")
		want := `admission webhook "deny.webhook.example.com" denied the request: the key forbidden is forbidden`
		if res.Code == 0 || !strings.Contains(res.Stderr, want) {
			t.Errorf("exit %d, stderr %q, want %q", res.Code, res.Stderr, want)
		}
		if _, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("refused configmap stored: %v", err)
		}
	})

	t.Run("patch and warning", func(t *testing.T) {
		res := runKubectl(t, "", "-n", ns, "create", "configmap", "good", "--from-literal=a=b")
		if res.Code != 0 {
			t.Fatalf("create: %s", res.Stderr)
		}
		if !strings.Contains(res.Stderr, "Warning: deny.webhook.example.com looked at good") {
			t.Errorf("stderr %q lacks the webhook's warning", res.Stderr)
		}
		cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "good", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Labels["mutated"] != "yes" {
			t.Errorf("labels %v, want mutated=yes from the mutating webhook", cm.Labels)
		}
		// The validating webhook saw the mutated object.
		var sawLabel bool
		for _, req := range ws.got("/deny") {
			var seen corev1.ConfigMap
			_ = json.Unmarshal(req.Object.Raw, &seen)
			if seen.Name == "good" && seen.Labels["mutated"] == "yes" {
				sawLabel = true
				if req.UserInfo.Username == "" || req.Kind.Kind != "ConfigMap" || req.Operation != admissionv1.Create || req.Namespace != ns {
					t.Errorf("review request %+v", req)
				}
			}
		}
		if !sawLabel {
			t.Error("the validating webhook did not see the mutating webhook's patch")
		}
	})

	t.Run("selectors and match conditions", func(t *testing.T) {
		if _, err := client.CoreV1().ConfigMaps(other).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}, Data: map[string]string{"forbidden": "1"}}, metav1.CreateOptions{}); err != nil {
			t.Errorf("namespace outside the selector: %v", err)
		}
		skipped := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "skipped", Annotations: map[string]string{"skip": "1"}}, Data: map[string]string{"forbidden": "1"}}
		out, err := client.CoreV1().ConfigMaps(ns).Create(ctx, skipped, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("object excluded by a match condition: %v", err)
		}
		if _, ok := out.Labels["mutated"]; ok {
			t.Error("the mutating webhook was called despite its match condition")
		}
	})

	t.Run("dry run", func(t *testing.T) {
		if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatal(err)
		}
		var dry bool
		for _, req := range ws.got("/label") {
			if req.Name == "dry" && req.DryRun != nil && *req.DryRun {
				dry = true
			}
		}
		if !dry {
			t.Error("the webhook was not told the request was a dry run")
		}
	})

	t.Run("failure policies and timeouts", func(t *testing.T) {
		closed, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		deadURL := "https://" + closed.Addr().String() + "/deny"
		closed.Close()
		ignore, fail := admissionregistrationv1.Ignore, admissionregistrationv1.Fail
		cases := []struct {
			name    string
			url     string
			policy  *admissionregistrationv1.FailurePolicyType
			timeout int32
			want    string // "" when the write goes through
		}{
			{"ignore.dead.example.com", deadURL, &ignore, 10, ""},
			{"fail.dead.example.com", deadURL, &fail, 10, `failed calling webhook "fail.dead.example.com": failed to call webhook: Post "` + deadURL + `?timeout=10s"`},
			{"fail.slow.example.com", srv.URL + "/slow", &fail, 1, `failed calling webhook "fail.slow.example.com": failed to call webhook: Post "` + srv.URL + `/slow?timeout=1s": context deadline exceeded`},
			{"ignore.slow.example.com", srv.URL + "/slow", &ignore, 1, ""},
		}
		for i, c := range cases {
			h := hook(c.name, "")
			h.ClientConfig.URL = ptr.To(c.url)
			h.FailurePolicy, h.TimeoutSeconds = c.policy, ptr.To(c.timeout)
			cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("policy-%d", i)},
				Webhooks:   []admissionregistrationv1.ValidatingWebhook{h},
			}
			if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 10*time.Second, func() error {
				_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "policy-"}}, metav1.CreateOptions{})
				switch {
				case c.want == "" && err != nil:
					return fmt.Errorf("%s: %v", c.name, err)
				case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
					return fmt.Errorf("%s: %v, want %q", c.name, err, c.want)
				}
				return nil
			})
			if err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, cfg.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("connect", func(t *testing.T) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "attached"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h := hook("connect.webhook.example.com", "/connect")
		h.Rules = []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Connect},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/attach", "pods/exec"}},
		}}
		h.MatchConditions = nil
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "deny-connect"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{h}}
		if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		defer client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, cfg.Name, metav1.DeleteOptions{})
		eventually(t, 10*time.Second, func() error {
			res := runKubectl(t, "", "-n", ns, "attach", "attached")
			want := `admission webhook "connect.webhook.example.com" denied the request: attach to pod "attached" is not allowed`
			if res.Code == 0 || !strings.Contains(res.Stderr, want) {
				return fmt.Errorf("kubectl attach: exit %d, %s", res.Code, res.Stderr)
			}
			return nil
		})
		var sawOptions bool
		for _, req := range ws.got("/connect") {
			if req.Operation == admissionv1.Connect && req.Kind.Kind == "PodAttachOptions" && req.SubResource == "attach" {
				sawOptions = true
			}
		}
		if !sawOptions {
			t.Error("the webhook was not sent the attach's options")
		}
	})

	t.Run("through a service", func(t *testing.T) {
		ip := hostIPv4(t)
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Fatal(err)
		}
		svcSrv, svcCA := tlsServerOn(t, ln, ws, "svc-hook."+ns+".svc")
		port := int32(ln.Addr().(*net.TCPAddr).Port)
		if _, err := client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "svc-hook"},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(port)}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: "svc-hook-1", Labels: map[string]string{discoveryv1.LabelServiceName: "svc-hook"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(port)}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h := hook("svc.webhook.example.com", "")
		h.ClientConfig = admissionregistrationv1.WebhookClientConfig{
			Service:  &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "svc-hook", Path: ptr.To("/deny"), Port: ptr.To(int32(443))},
			CABundle: svcCA,
		}
		h.NamespaceSelector = &metav1.LabelSelector{}
		h.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"via": "service"}}
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "via-service"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{h}}
		if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		defer client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, cfg.Name, metav1.DeleteOptions{})
		_ = svcSrv
		// The namespace is outside the other webhooks' selector: only the
		// one behind the service can refuse.
		eventually(t, 10*time.Second, func() error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "svc-", Labels: map[string]string{"via": "service"}}, Data: map[string]string{"forbidden": "1"}}
			_, err := client.CoreV1().ConfigMaps(other).Create(ctx, cm, metav1.CreateOptions{})
			if err == nil || !strings.Contains(err.Error(), `admission webhook "svc.webhook.example.com" denied the request`) {
				return fmt.Errorf("not refused through the service yet: %v", err)
			}
			return nil
		})
	})
}

// hostIPv4 is an address of this machine other than loopback, which an
// EndpointSlice may name.
func hostIPv4(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("no address but loopback; a webhook's service needs one")
	return ""
}
