package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// events records what an Auditor writes.
type events struct {
	mu  sync.Mutex
	evs []auditv1.Event
}

func (e *events) WriteEvent(ev *auditv1.Event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evs = append(e.evs, *ev.DeepCopy())
	return nil
}

func (e *events) all() []auditv1.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.evs)
}

func stages(evs []auditv1.Event) []auditv1.Stage {
	var out []auditv1.Stage
	for _, ev := range evs {
		out = append(out, ev.Stage)
	}
	return out
}

var jsonEncoder = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, kjson.SerializerOptions{})

var alice = &authnv1.UserInfo{Username: "alice", Groups: []string{"devs", "system:authenticated"}}

// harness wraps h as an API server would: a record per request, then the
// auditor's filter with fixed attributes.
func harness(t *testing.T, policy string, attrs Attributes, longRunning bool, h http.HandlerFunc) (http.Handler, *events) {
	t.Helper()
	p, _, err := ParsePolicy([]byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	out := &events{}
	a, err := New(Config{Policy: p, Writer: out, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	describe := func(*http.Request) (Attributes, bool) { return attrs, longRunning }
	inner := a.Handler(h, describe)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r.WithContext(a.WithRequest(r.Context(), "id-1", time.Unix(100, 0))))
	}), out
}

func policyAt(level auditv1.Level) string {
	return "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: " + string(level) + "}]"
}

func createAttrs() Attributes {
	return Attributes{User: alice, Verb: "create", ResourceRequest: true, APIVersion: "v1", Resource: "configmaps", Namespace: "default"}
}

// createHandler acts as a create of a ConfigMap: it logs the decoded body
// and the stored object, as the API server's handlers do.
func createHandler(w http.ResponseWriter, r *http.Request) {
	in := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Data:       map[string]string{"k": "secret-ish"},
	}
	LogRequestObject(r.Context(), in, jsonEncoder)
	AddAnnotation(r.Context(), "example.com/decision", "allow")
	out := in.DeepCopy()
	out.Namespace, out.UID, out.ResourceVersion = "default", "uid-1", "7"
	LogResponseObject(r.Context(), out, jsonEncoder)
	w.WriteHeader(http.StatusCreated)
}

func serve(h http.Handler) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/default/configmaps?fieldManager=x", strings.NewReader("{}"))
	req.Header.Set("User-Agent", "kubectl/v1.37.2")
	req.Header.Set("X-Forwarded-For", "10.0.0.9")
	req.RemoteAddr = "192.0.2.1:4444"
	rw := httptest.NewRecorder()
	h.ServeHTTP(rw, req)
	return rw
}

func TestMetadataLevel(t *testing.T) {
	h, out := harness(t, policyAt(auditv1.LevelMetadata), createAttrs(), false, createHandler)
	serve(h)
	evs := out.all()
	if got := stages(evs); !slices.Equal(got, []auditv1.Stage{auditv1.StageRequestReceived, auditv1.StageResponseComplete}) {
		t.Fatalf("stages = %v", got)
	}
	rr, done := evs[0], evs[1]
	if rr.StageTimestamp != rr.RequestReceivedTimestamp || !rr.RequestReceivedTimestamp.Time.Equal(time.Unix(100, 0)) {
		t.Errorf("RequestReceived timestamps: %v %v", rr.StageTimestamp, rr.RequestReceivedTimestamp)
	}
	if rr.ResponseStatus != nil {
		t.Errorf("RequestReceived has a status: %+v", rr.ResponseStatus)
	}
	want := auditv1.ObjectReference{Resource: "configmaps", Namespace: "default", Name: "cm", APIVersion: "v1"}
	if done.ObjectRef == nil || *done.ObjectRef != want {
		t.Errorf("objectRef = %+v, want %+v", done.ObjectRef, want)
	}
	if done.AuditID != "id-1" || done.Level != auditv1.LevelMetadata || done.Verb != "create" ||
		done.RequestURI != "/api/v1/namespaces/default/configmaps?fieldManager=x" || done.UserAgent != "kubectl/v1.37.2" ||
		done.User.Username != "alice" || !slices.Equal(done.User.Groups, alice.Groups) ||
		!slices.Equal(done.SourceIPs, []string{"10.0.0.9", "192.0.2.1"}) {
		t.Errorf("metadata: %+v", done)
	}
	if done.ResponseStatus == nil || done.ResponseStatus.Code != http.StatusCreated {
		t.Errorf("responseStatus = %+v", done.ResponseStatus)
	}
	if done.RequestObject != nil || done.ResponseObject != nil {
		t.Error("bodies recorded at Metadata")
	}
	if done.Annotations["example.com/decision"] != "allow" {
		t.Errorf("annotations = %v", done.Annotations)
	}
	if done.Kind != "Event" || done.APIVersion != "audit.k8s.io/v1" {
		t.Errorf("type = %v", done.TypeMeta)
	}
}

func TestRequestAndResponseBodies(t *testing.T) {
	for _, tc := range []struct {
		policy        string
		request, resp bool
		managedFields bool
	}{
		{policyAt(auditv1.LevelRequest), true, false, true},
		{policyAt(auditv1.LevelRequestResponse), true, true, true},
		{"apiVersion: audit.k8s.io/v1\nkind: Policy\nomitManagedFields: true\nrules: [{level: RequestResponse}]", true, true, false},
	} {
		h, out := harness(t, tc.policy, createAttrs(), false, createHandler)
		serve(h)
		done := out.all()[1]
		if (done.RequestObject != nil) != tc.request || (done.ResponseObject != nil) != tc.resp {
			t.Errorf("%s: request %v, response %v", tc.policy, done.RequestObject != nil, done.ResponseObject != nil)
			continue
		}
		var cm corev1.ConfigMap
		if err := json.Unmarshal(done.RequestObject.Raw, &cm); err != nil || cm.Data["k"] != "secret-ish" {
			t.Errorf("request object %s: %v", done.RequestObject.Raw, err)
		}
		if (len(cm.ManagedFields) > 0) != tc.managedFields {
			t.Errorf("%s: managedFields %v", tc.policy, cm.ManagedFields)
		}
		if done.ResponseObject != nil {
			var stored corev1.ConfigMap
			if err := json.Unmarshal(done.ResponseObject.Raw, &stored); err != nil || stored.UID != "uid-1" {
				t.Errorf("response object %s: %v", done.ResponseObject.Raw, err)
			}
		}
	}
}

func TestLevelNoneWritesNothing(t *testing.T) {
	h, out := harness(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None}]", createAttrs(), false, createHandler)
	if rw := serve(h); rw.Code != http.StatusCreated {
		t.Fatalf("code %d", rw.Code)
	}
	if evs := out.all(); len(evs) != 0 {
		t.Errorf("events: %v", evs)
	}
}

func TestOmitStages(t *testing.T) {
	h, out := harness(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules: [{level: Metadata}]", createAttrs(), false, createHandler)
	serve(h)
	if got := stages(out.all()); !slices.Equal(got, []auditv1.Stage{auditv1.StageResponseComplete}) {
		t.Errorf("stages = %v", got)
	}
}

func TestErrorStatus(t *testing.T) {
	h, out := harness(t, policyAt(auditv1.LevelMetadata), createAttrs(), false, func(w http.ResponseWriter, r *http.Request) {
		LogResponseObject(r.Context(), &metav1.Status{Status: metav1.StatusFailure, Code: 409, Reason: metav1.StatusReasonAlreadyExists, Message: `configmaps "cm" already exists`}, jsonEncoder)
		w.WriteHeader(http.StatusConflict)
	})
	serve(h)
	st := out.all()[1].ResponseStatus
	if st == nil || st.Code != 409 || st.Reason != metav1.StatusReasonAlreadyExists || st.Message != `configmaps "cm" already exists` {
		t.Errorf("status = %+v", st)
	}
}

func TestLongRunningHasResponseStarted(t *testing.T) {
	attrs := Attributes{User: alice, Verb: "watch", ResourceRequest: true, APIVersion: "v1", Resource: "pods"}
	var out *events
	h, recorded := harness(t, policyAt(auditv1.LevelMetadata), attrs, true, func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		if got := stages(out.all()); len(got) != 2 || got[1] != auditv1.StageResponseStarted {
			t.Errorf("stages once the answer started = %v", got)
		}
		_, _ = w.Write([]byte(`{"type":"ADDED"}`))
	})
	out = recorded
	serve(h)
	evs := out.all()
	if got := stages(evs); !slices.Equal(got, []auditv1.Stage{auditv1.StageRequestReceived, auditv1.StageResponseStarted, auditv1.StageResponseComplete}) {
		t.Fatalf("stages = %v", got)
	}
	if evs[1].ResponseStatus.Code != 200 {
		t.Errorf("started status %+v", evs[1].ResponseStatus)
	}
}

func TestNothingWritten(t *testing.T) {
	attrs := Attributes{User: alice, Verb: "watch", ResourceRequest: true, APIVersion: "v1", Resource: "pods"}
	h, out := harness(t, policyAt(auditv1.LevelMetadata), attrs, true, func(http.ResponseWriter, *http.Request) {})
	serve(h)
	evs := out.all()
	if got := stages(evs); !slices.Equal(got, []auditv1.Stage{auditv1.StageRequestReceived, auditv1.StageResponseStarted, auditv1.StageResponseComplete}) {
		t.Fatalf("stages = %v", got)
	}
	if st := evs[2].ResponseStatus; st.Code != 200 || st.Message != "Connection closed early" {
		t.Errorf("status %+v", st)
	}
}

func TestPanic(t *testing.T) {
	h, out := harness(t, policyAt(auditv1.LevelMetadata), createAttrs(), false, func(http.ResponseWriter, *http.Request) {
		panic("boom")
	})
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the handler's panic passed on", p)
			}
		}()
		serve(h)
	}()
	evs := out.all()
	if got := stages(evs); !slices.Equal(got, []auditv1.Stage{auditv1.StageRequestReceived, auditv1.StagePanic}) {
		t.Fatalf("stages = %v", got)
	}
	if st := evs[1].ResponseStatus; st.Code != 500 || st.Message != "APIServer panic'd: boom" || st.Reason != metav1.StatusReasonInternalError {
		t.Errorf("status %+v", st)
	}
}

func TestAnnotationsKeepTheirFirstValue(t *testing.T) {
	h, out := harness(t, policyAt(auditv1.LevelMetadata), createAttrs(), false, func(w http.ResponseWriter, r *http.Request) {
		AddAnnotation(r.Context(), "k", "first")
		AddAnnotation(r.Context(), "k", "second")
		AddAnnotation(r.Context(), "k2", "v")
		LogImpersonatedUser(r.Context(), authnv1.UserInfo{Username: "bob", Groups: []string{"ops"}})
	})
	serve(h)
	done := out.all()[1]
	if done.Annotations["k"] != "first" || done.Annotations["k2"] != "v" {
		t.Errorf("annotations %v", done.Annotations)
	}
	if done.ImpersonatedUser == nil || done.ImpersonatedUser.Username != "bob" || done.User.Username != "alice" {
		t.Errorf("users: %+v %+v", done.User, done.ImpersonatedUser)
	}
	// Without a record (auditing off) the calls are no-ops.
	AddAnnotation(context.Background(), "k", "v")
	LogRequestObject(context.Background(), &corev1.Pod{}, jsonEncoder)
	if ID(context.Background()) != "" {
		t.Error("ID without a record")
	}
}

func TestFailedAuthentication(t *testing.T) {
	p, _, _ := ParsePolicy([]byte(policyAt(auditv1.LevelMetadata)))
	out := &events{}
	a, _ := New(Config{Policy: p, Writer: out})
	unauthorized := a.FailedAuthentication(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}), func(*http.Request) (Attributes, bool) { return createAttrs(), false })
	req := httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil)
	req.Header.Set("Authorization", "Bearer nope")
	unauthorized.ServeHTTP(httptest.NewRecorder(), req.WithContext(a.WithRequest(req.Context(), "id-2", time.Now())))
	evs := out.all()
	if got := stages(evs); !slices.Equal(got, []auditv1.Stage{auditv1.StageResponseStarted}) {
		t.Fatalf("stages = %v", got)
	}
	if st := evs[0].ResponseStatus; st.Code != 401 || st.Message != "Authentication failed, attempted: bearer" {
		t.Errorf("status %+v", st)
	}
	if evs[0].User.Username != "" {
		t.Errorf("user %+v", evs[0].User)
	}
}

// Upgraded connections (exec, attach, port-forward) take the connection
// through the auditor's writer; the switch counts as the response.
func TestHijackPassesThrough(t *testing.T) {
	attrs := Attributes{User: alice, Verb: "create", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Subresource: "exec"}
	h, out := harness(t, policyAt(auditv1.LevelMetadata), attrs, true, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
		_ = buf.Flush()
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/namespaces/default/pods/p/exec", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var evs []auditv1.Event
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if evs = out.all(); len(evs) == 3 {
			break
		}
	}
	if got := stages(evs); !slices.Equal(got, []auditv1.Stage{auditv1.StageRequestReceived, auditv1.StageResponseStarted, auditv1.StageResponseComplete}) {
		t.Fatalf("stages = %v", got)
	}
	if evs[1].ResponseStatus.Code != http.StatusSwitchingProtocols {
		t.Errorf("status %+v", evs[1].ResponseStatus)
	}
}

func TestJSONLines(t *testing.T) {
	var buf strings.Builder
	w := NewJSONLines(&buf)
	p, _, _ := ParsePolicy([]byte(policyAt(auditv1.LevelRequest)))
	a, _ := New(Config{Policy: p, Writer: w})
	inner := a.Handler(http.HandlerFunc(createHandler), func(*http.Request) (Attributes, bool) { return createAttrs(), false })
	serve(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(rw, r.WithContext(a.WithRequest(r.Context(), "id-3", time.Now())))
	}))
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	var n int
	for sc.Scan() {
		n++
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", n, err, sc.Text())
		}
		if m["kind"] != "Event" || m["apiVersion"] != "audit.k8s.io/v1" || m["auditID"] != "id-3" || m["level"] != "Request" {
			t.Errorf("line %d: %v", n, m)
		}
		if n == 2 {
			ro, _ := m["requestObject"].(map[string]any)
			if ro["kind"] != "ConfigMap" {
				t.Errorf("requestObject is not embedded JSON: %v", m["requestObject"])
			}
			if st, _ := m["responseStatus"].(map[string]any); st["code"] != float64(201) {
				t.Errorf("responseStatus %v", m["responseStatus"])
			}
		}
	}
	if n != 2 {
		t.Errorf("%d lines:\n%s", n, buf.String())
	}
}

func TestApplyPatchIsRecordedAsJSON(t *testing.T) {
	attrs := Attributes{User: alice, Verb: "patch", ResourceRequest: true, APIVersion: "v1", Resource: "configmaps", Namespace: "default", Name: "cm"}
	h, out := harness(t, policyAt(auditv1.LevelRequest), attrs, false, func(w http.ResponseWriter, r *http.Request) {
		LogRequestPatch(r.Context(), []byte("apiVersion: v1\nkind: ConfigMap\ndata:\n  k: v\n"), "application/apply-patch+yaml")
	})
	serve(h)
	var m map[string]any
	if err := json.Unmarshal(out.all()[1].RequestObject.Raw, &m); err != nil || m["kind"] != "ConfigMap" {
		t.Errorf("patch %s: %v", out.all()[1].RequestObject.Raw, err)
	}
}
