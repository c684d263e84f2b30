package integration

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	corev1 "k8s.io/api/core/v1"
)

// rawRequest sends a request with the admin credentials and returns the
// status code, the decoded Status (if the body is one) and the headers.
func rawRequest(t *testing.T, method, path, contentType string, body []byte) (int, *metav1.Status, http.Header) {
	t.Helper()
	rt, err := rest.TransportFor(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, inst.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var st metav1.Status
	if json.Unmarshal(data, &st) == nil && st.Kind == "Status" {
		return resp.StatusCode, &st, resp.Header
	}
	return resp.StatusCode, nil, resp.Header
}

func TestBadInputIsRefusedAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bad"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := "/api/v1/namespaces/bad/configmaps"
	big := strings.Repeat("x", 3*1024*1024+10)
	cases := []struct {
		name, method, path, ctype, body string
		code                            int
		reason                          metav1.StatusReason
		contains                        string
	}{
		{"malformed json", "POST", cms, "application/json", `{"metadata": {"name": "x"`, 400, metav1.StatusReasonBadRequest, ""},
		{"malformed yaml", "POST", cms, "application/yaml", "metadata:\n  name: [x\n", 400, metav1.StatusReasonBadRequest, ""},
		{"unknown resource", "GET", "/api/v1/namespaces/bad/frobs", "", "", 404, metav1.StatusReasonNotFound, "the server could not find the requested resource"},
		{"unknown group", "GET", "/apis/nope.example.com/v1/things", "", "", 404, metav1.StatusReasonNotFound, ""},
		{"unknown field strict", "POST", cms + "?fieldValidation=Strict", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u"},"dta":{}}`, 400, metav1.StatusReasonBadRequest, `unknown field "dta"`},
		{"invalid name", "POST", cms, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Not_Valid"}}`, 422, metav1.StatusReasonInvalid, "metadata.name: Invalid value"},
		{"missing name", "POST", cms, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`, 422, metav1.StatusReasonInvalid, "name or generateName is required"},
		{"invalid label", "POST", cms, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l","labels":{"a b":"c"}}}`, 422, metav1.StatusReasonInvalid, "metadata.labels"},
		{"missing required field", "POST", "/api/v1/namespaces/bad/pods", "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}]}}`, 422, metav1.StatusReasonInvalid, "spec.containers[0].image: Required value"},
		{"namespace mismatch", "POST", cms, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m","namespace":"other"}}`, 400, metav1.StatusReasonBadRequest, "does not match the namespace"},
		{"missing namespace", "POST", "/api/v1/namespaces/nope/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m"}}`, 404, metav1.StatusReasonNotFound, `namespaces "nope" not found`},
		{"too large", "POST", cms, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"a":"` + big + `"}}`, 413, metav1.StatusReasonRequestEntityTooLarge, ""},
		{"wrong kind", "POST", cms, "application/json", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"k"}}`, 400, metav1.StatusReasonBadRequest, ""},
		{"cbor refused", "POST", cms, "application/cbor", "\xa0", 415, metav1.StatusReasonUnsupportedMediaType, ""},
		{"bad label selector", "GET", cms + "?labelSelector=a%20in%20(", "", "", 400, metav1.StatusReasonBadRequest, ""},
		{"unsupported field selector", "GET", cms + "?fieldSelector=spec.foo%3Dbar", "", "", 400, metav1.StatusReasonBadRequest, "field label not supported: spec.foo"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, st, _ := rawRequest(t, c.method, c.path, c.ctype, []byte(c.body))
			if code != c.code {
				t.Fatalf("code %d, want %d (status %+v)", code, c.code, st)
			}
			if st == nil {
				t.Fatalf("response is not a Status")
			}
			if st.Reason != c.reason {
				t.Errorf("reason %q, want %q (message %q)", st.Reason, c.reason, st.Message)
			}
			if !strings.Contains(st.Message, c.contains) {
				t.Errorf("message %q lacks %q", st.Message, c.contains)
			}
		})
	}
	// None of the refused writes left anything behind.
	// kube-root-ca.crt is the publisher's, not a refused write's.
	list, err := client.CoreV1().ConfigMaps("bad").List(ctx, metav1.ListOptions{FieldSelector: notRootCA})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("refused writes created %d configmaps", len(list.Items))
	}
}

func TestInvalidCausesCarryFieldPaths(t *testing.T) {
	_, err := client.CoreV1().Pods("default").Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "nopath"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}},
	}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want 422 Invalid, got %v", err)
	}
	st := err.(apierrors.APIStatus).Status()
	found := false
	for _, c := range st.Details.Causes {
		if c.Field == "spec.containers[0].image" && c.Type == metav1.CauseTypeFieldValueRequired {
			found = true
		}
	}
	if !found {
		t.Errorf("causes lack spec.containers[0].image Required: %+v", st.Details.Causes)
	}
}

func TestUnknownFieldWarnings(t *testing.T) {
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"warned"},"dta":{"x":"y"}}`
	code, _, hdr := rawRequest(t, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Warn", "application/json", []byte(body))
	if code != 201 {
		t.Fatalf("Warn create: code %d", code)
	}
	if w := strings.Join(hdr.Values("Warning"), "|"); !strings.Contains(w, `unknown field \"dta\"`) {
		t.Errorf("Warning header: %q", w)
	}
	body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ignored"},"dta":{"x":"y"}}`
	code, _, hdr = rawRequest(t, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Ignore", "application/json", []byte(body))
	if code != 201 || len(hdr.Values("Warning")) != 0 {
		t.Errorf("Ignore create: code %d warnings %v", code, hdr.Values("Warning"))
	}
}

func TestConflictOnStaleUpdate(t *testing.T) {
	ctx := context.Background()
	cm, err := client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stale"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := cm.DeepCopy()
	cm.Data["v"] = "2"
	if _, err := client.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	first.Data["v"] = "3"
	_, err = client.CoreV1().ConfigMaps("default").Update(ctx, first, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale update: want 409 Conflict, got %v", err)
	}
	if !strings.Contains(err.Error(), "the object has been modified") {
		t.Errorf("conflict message: %v", err)
	}
	got, _ := client.CoreV1().ConfigMaps("default").Get(ctx, "stale", metav1.GetOptions{})
	if got.Data["v"] != "2" {
		t.Errorf("stale update changed the object: %v", got.Data)
	}
}

// TestReadyzVerbose: health needs no credentials (see also
// TestAnonymousRequests).
func TestReadyzVerbose(t *testing.T) {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get(inst.URL + "/readyz?verbose")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "[+]etcd ok") || !strings.Contains(string(body), "readyz check passed") {
		t.Errorf("readyz?verbose: %d %s", resp.StatusCode, body)
	}
}
