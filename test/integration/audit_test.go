package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/audit"
	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/server"
)

// controlPlane is a control plane of a test's own: the API server alone,
// started with the options the test needs.
type controlPlane struct {
	inst   *server.Instance
	tlsDir string
	ca     *pki.Pair
}

func startControlPlane(t *testing.T, opts server.Options) *controlPlane {
	t.Helper()
	dir := t.TempDir()
	opts.DataDir, opts.BindAddress, opts.Port = filepath.Join(dir, "server"), "127.0.0.1", 0
	opts.DisableControllerManager, opts.DisableScheduler, opts.ClusterDNSPort = true, true, -1
	opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	in, err := server.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop() })
	cp := &controlPlane{inst: in, tlsDir: filepath.Join(opts.DataDir, "tls")}
	if cp.ca, err = pki.LoadOrCreateCA(cp.tlsDir, "ca", "orca-ca"); err != nil {
		t.Fatal(err)
	}
	return cp
}

// user issues a client certificate for name in groups from the control
// plane's CA.
func (cp *controlPlane) user(t *testing.T, name string, groups ...string) *pki.Pair {
	t.Helper()
	p, err := pki.LoadOrIssue(cp.tlsDir, "test-"+strings.ReplaceAll(name, ":", "-"), cp.ca, pki.LeafSpec{CommonName: name, Organizations: groups})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (cp *controlPlane) admin(t *testing.T) *pki.Pair {
	return cp.user(t, "system:admin", "system:masters")
}

// httpClient speaks HTTP/2 to the control plane as the holder of cert
// (anonymous when nil), without client-go's retries of 429s.
func (cp *controlPlane) httpClient(cert *pki.Pair) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(cp.ca.Cert)
	cfg := &tls.Config{RootCAs: pool}
	if cert != nil {
		pair, err := tls.X509KeyPair(cert.CertPEM, cert.KeyPEM)
		if err != nil {
			panic(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}}
}

func (cp *controlPlane) clientset(t *testing.T, cert *pki.Pair) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(&rest.Config{
		Host:            cp.inst.URL,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.ca.CertPEM, CertData: cert.CertPEM, KeyData: cert.KeyPEM},
		QPS:             1000, Burst: 1000,
	})
}

func readAuditLog(t *testing.T, path string) []auditv1.Event {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []auditv1.Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit log line is not an event: %v\n%s", err, sc.Text())
		}
		out = append(out, ev)
	}
	return out
}

// TestAuditLog runs a control plane with the policy the documentation
// ships and checks what its log holds after ordinary use.
func TestAuditLog(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second control plane")
	}
	logPath := filepath.Join(t.TempDir(), "audit", "audit.log")
	cp := startControlPlane(t, server.Options{
		AuditPolicyFile: "../../docs/audit-policy.yaml",
		AuditLog:        audit.LogFile{Path: logPath, MaxSizeMB: 100, MaxBackups: 1},
	})
	ctx := context.Background()
	admin := cp.admin(t)
	c := cp.clientset(t, admin)

	const secretValue, configValue = "hunter2-in-a-secret", "hunter3-in-a-configmap"
	if _, err := c.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s1"}, StringData: map[string]string{"password": secretValue},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Secrets("default").Get(ctx, "s1", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Data: map[string]string{"k": configValue},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "audited"}
	if _, err := c.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d1"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Namespaces().Get(ctx, "missing", metav1.GetOptions{}); err == nil {
		t.Fatal("got a namespace that does not exist")
	}
	w, err := c.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()

	// The client's Audit-ID is kept and echoed; without one the server
	// makes one up and says which.
	hc := cp.httpClient(admin)
	req, _ := http.NewRequest(http.MethodGet, cp.inst.URL+"/api/v1/namespaces/default/services", nil)
	req.Header.Set("Audit-ID", "client-chosen-id")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Audit-Id"); got != "client-chosen-id" {
		t.Errorf("Audit-Id = %q, want the client's", got)
	}
	resp, err = hc.Get(cp.inst.URL + "/api/v1/namespaces/default/endpoints")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	serverID := resp.Header.Get("Audit-Id")
	if serverID == "" {
		t.Error("no Audit-Id header")
	}
	resp, err = hc.Get(cp.inst.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Credentials that do not hold.
	req, _ = http.NewRequest(http.MethodGet, cp.inst.URL+"/api/v1/namespaces", nil)
	req.Header.Set("Authorization", "Bearer not-a-token")
	if resp, err = cp.httpClient(nil).Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bad token: %d", resp.StatusCode)
	}

	find := func(evs []auditv1.Event, stage auditv1.Stage, verb, resource, name string) *auditv1.Event {
		for i := range evs {
			ev := &evs[i]
			if ev.Stage == stage && ev.Verb == verb && ev.ObjectRef != nil && ev.ObjectRef.Resource == resource && ev.ObjectRef.Name == name {
				return ev
			}
		}
		return nil
	}
	var evs []auditv1.Event
	eventually(t, 10*time.Second, func() error {
		evs = readAuditLog(t, logPath)
		for _, want := range []struct{ verb, resource, name string }{
			{"create", "secrets", "s1"}, {"get", "secrets", "s1"}, {"create", "configmaps", "c1"},
			{"create", "deployments", "d1"}, {"get", "namespaces", "missing"}, {"watch", "pods", ""},
		} {
			if find(evs, auditv1.StageResponseComplete, want.verb, want.resource, want.name) == nil {
				return fmt.Errorf("no ResponseComplete event for %v yet", want)
			}
		}
		return nil
	})

	raw, _ := os.ReadFile(logPath)
	for _, v := range []string{secretValue, configValue} {
		if bytes.Contains(raw, []byte(v)) {
			t.Errorf("the audit log holds %q", v)
		}
	}
	if st, err := os.Stat(logPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("log file mode: %v %v", st.Mode(), err)
	}
	for _, ev := range evs {
		if ev.Stage == auditv1.StageRequestReceived {
			t.Errorf("policy omits RequestReceived, got %s %s", ev.Verb, ev.RequestURI)
		}
		if strings.HasPrefix(ev.RequestURI, "/readyz") {
			t.Errorf("health probe audited: %+v", ev)
		}
	}

	sc := find(evs, auditv1.StageResponseComplete, "create", "secrets", "s1")
	if sc.Level != auditv1.LevelMetadata || sc.RequestObject != nil || sc.ResponseObject != nil {
		t.Errorf("secret create: level %s, bodies %v %v", sc.Level, sc.RequestObject, sc.ResponseObject)
	}
	if sc.User.Username != "system:admin" || !slices.Contains(sc.User.Groups, "system:masters") ||
		!slices.Contains(sc.SourceIPs, "127.0.0.1") || sc.UserAgent == "" || sc.AuditID == "" ||
		sc.ResponseStatus == nil || sc.ResponseStatus.Code != 201 ||
		sc.ObjectRef.Namespace != "default" || sc.ObjectRef.APIVersion != "v1" ||
		sc.RequestURI != "/api/v1/namespaces/default/secrets" {
		t.Errorf("secret create event: %+v", sc)
	}

	dc := find(evs, auditv1.StageResponseComplete, "create", "deployments", "d1")
	if dc.Level != auditv1.LevelRequestResponse || dc.RequestObject == nil || dc.ResponseObject == nil {
		t.Fatalf("deployment create: %+v", dc)
	}
	var stored appsv1.Deployment
	if err := json.Unmarshal(dc.ResponseObject.Raw, &stored); err != nil || stored.UID == "" || stored.Kind != "Deployment" {
		t.Errorf("responseObject %s: %v", dc.ResponseObject.Raw, err)
	}
	if len(stored.ManagedFields) > 0 {
		t.Error("managedFields recorded despite omitManagedFields")
	}
	if dc.ObjectRef.APIGroup != "apps" {
		t.Errorf("objectRef %+v", dc.ObjectRef)
	}

	nf := find(evs, auditv1.StageResponseComplete, "get", "namespaces", "missing")
	if nf.ResponseStatus.Code != 404 || nf.ResponseStatus.Reason != metav1.StatusReasonNotFound || nf.ResponseStatus.Message != `namespaces "missing" not found` {
		t.Errorf("not found status: %+v", nf.ResponseStatus)
	}

	// A watch is long-running: it has a ResponseStarted stage before it
	// completes.
	// The control plane's own controllers watch pods too, so the started
	// stage is looked for by the completed watch's audit ID.
	wc := find(evs, auditv1.StageResponseComplete, "watch", "pods", "")
	var ws *auditv1.Event
	for i := range evs {
		if evs[i].Stage == auditv1.StageResponseStarted && evs[i].AuditID == wc.AuditID {
			ws = &evs[i]
		}
	}
	if ws == nil || ws.Verb != "watch" || ws.ResponseStatus.Code != 200 {
		t.Errorf("watch stages: started %+v, complete %+v", ws, wc)
	}

	ids := map[string]bool{}
	var unauthorized *auditv1.Event
	for i, ev := range evs {
		ids[string(ev.AuditID)] = true
		if ev.ResponseStatus != nil && ev.ResponseStatus.Code == 401 {
			unauthorized = &evs[i]
		}
	}
	if !ids["client-chosen-id"] || !ids[serverID] {
		t.Errorf("audit IDs of the raw requests missing from the log: %q %q", "client-chosen-id", serverID)
	}
	if unauthorized == nil || unauthorized.Stage != auditv1.StageResponseStarted || unauthorized.User.Username != "" {
		t.Errorf("failed authentication event: %+v", unauthorized)
	}
}

// TestAuditLogPathWithoutPolicy: as upstream, a log path alone records
// nothing.
func TestAuditLogPathWithoutPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second control plane")
	}
	logPath := filepath.Join(t.TempDir(), "audit.log")
	cp := startControlPlane(t, server.Options{AuditLog: audit.LogFile{Path: logPath}})
	if _, err := cp.clientset(t, cp.admin(t)).CoreV1().ConfigMaps("default").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(logPath); err == nil && len(data) > 0 {
		t.Errorf("events written without a policy:\n%s", data)
	}
}
