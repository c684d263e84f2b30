package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/imagebuild"
	"github.com/orca-project/orca/internal/images"
)

const webhookImage = "localhost/orca-test/webhook:1"

// webhookServerSource is the webhook a policy engine would run, with the
// standard library only: AdmissionReview v1 over HTTPS on :8443. /validate
// refuses ConfigMaps with the key "forbidden"; /slow answers the same
// after longer than any timeout the test gives it.
const webhookServerSource = `package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"time"
)

type review struct {
	APIVersion string    ` + "`json:\"apiVersion\"`" + `
	Kind       string    ` + "`json:\"kind\"`" + `
	Request    *request  ` + "`json:\"request,omitempty\"`" + `
	Response   *response ` + "`json:\"response,omitempty\"`" + `
}

type request struct {
	UID    string ` + "`json:\"uid\"`" + `
	Object struct {
		Metadata struct {
			Name string ` + "`json:\"name\"`" + `
		} ` + "`json:\"metadata\"`" + `
		Data map[string]string ` + "`json:\"data\"`" + `
	} ` + "`json:\"object\"`" + `
}

type response struct {
	UID     string  ` + "`json:\"uid\"`" + `
	Allowed bool    ` + "`json:\"allowed\"`" + `
	Status  *status ` + "`json:\"status,omitempty\"`" + `
}

type status struct {
	Code    int    ` + "`json:\"code\"`" + `
	Reason  string ` + "`json:\"reason\"`" + `
	Message string ` + "`json:\"message\"`" + `
}

func validate(w http.ResponseWriter, r *http.Request) {
	var rev review
	if err := json.NewDecoder(r.Body).Decode(&rev); err != nil || rev.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	resp := &response{UID: rev.Request.UID, Allowed: true}
	if _, ok := rev.Request.Object.Data["forbidden"]; ok {
		// As controller-runtime's admission.Denied answers.
		resp.Allowed = false
		resp.Status = &status{Code: http.StatusForbidden, Reason: "Forbidden", Message: "` + webhookDenial + `"}
	}
	log.Printf("%s %s allowed=%v", r.URL.Path, rev.Request.Object.Metadata.Name, resp.Allowed)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview", Response: resp})
}

func main() {
	cert := flag.String("cert", "/tls/tls.crt", "serving certificate")
	key := flag.String("key", "/tls/tls.key", "its key")
	flag.Parse()
	http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
	http.HandleFunc("/validate", validate)
	http.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		log.Printf("/slow: waiting")
		select {
		case <-time.After(20 * time.Second):
		case <-r.Context().Done():
			log.Printf("/slow: the caller went away")
			return
		}
		validate(w, r)
	})
	log.Printf("serving on :8443")
	log.Fatal(http.ListenAndServeTLS(":8443", *cert, *key, nil))
}
`

// webhookDenial is what the webhook answers a ConfigMap it refuses.
const webhookDenial = `ConfigMaps must not have the key \"forbidden\"`

// webhookImageTar builds the webhook server from its source, written to a
// directory of its own, into a one-file image.
func webhookImageTar(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":  "module e2e.orca.test/webhook\n\ngo 1.22\n",
		"main.go": webhookServerSource,
	} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(src, "webhook")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOTOOLCHAIN=local", "GOPROXY=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the webhook server: %v\n%s", err, out)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	img := imagebuild.Image{
		Ref:     webhookImage,
		Entries: []imagebuild.Entry{imagebuild.FileEntry("/webhook", 0o755, b)},
		Config:  imagebuild.Config{Entrypoint: []string{"/webhook"}},
	}
	tar := filepath.Join(src, "webhook.tar")
	if err := img.WriteFile(tar); err != nil {
		t.Fatal(err)
	}
	return tar
}

// servingCert is a certificate for dnsName signed by ca, and its key, in
// PEM.
func servingCert(t *testing.T, ca *testCA, dnsName string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// validatingWebhook is a ValidatingWebhookConfiguration of one webhook,
// named as the configuration, for ConfigMap creates in the namespaces
// labelled e2e.orca.test/webhook=<label>.
func validatingWebhook(name, label, ns, path, failurePolicy string, timeout int, caBundle string) string {
	return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: %[1]s
webhooks:
- name: %[1]s
  clientConfig:
    service: {namespace: %[3]s, name: webhook, path: %[4]s, port: 443}
    caBundle: %[7]s
  rules:
  - apiGroups: [""]
    apiVersions: [v1]
    operations: [CREATE]
    resources: [configmaps]
    scope: Namespaced
  namespaceSelector:
    matchLabels: {e2e.orca.test/webhook: %[2]s}
  failurePolicy: %[5]s
  timeoutSeconds: %[6]d
  sideEffects: None
  admissionReviewVersions: [v1]
`, name, label, ns, path, failurePolicy, timeout, caBundle)
}

// TestAdmissionWebhookInCluster is what a cert-manager or policy engine
// user sets up: a validating webhook served over TLS by a Deployment
// behind a Service, the serving certificate in a Secret and its CA in the
// configuration's caBundle. The API server calls it at a ready endpoint
// of the service; its refusal refuses the create, as do, with
// failurePolicy Fail, a service without endpoints and a webhook that
// outlives its timeout, while Ignore lets creates through.
func TestAdmissionWebhookInCluster(t *testing.T) {
	needCluster(t)
	if _, err := images.Import(context.Background(), images.SocketPath(nodeDir), webhookImageTar(t)); err != nil {
		t.Fatalf("import the webhook server: %v", err)
	}
	ctx := context.Background()
	ns := namespace(t)
	// The webhook guards another namespace, labelled, as the webhook
	// configuration selects it; ConfigMaps are created there.
	target := ns + "-cm"
	kubectlOK(t, "", "create", "namespace", target)
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), target, metav1.DeleteOptions{})
	})
	// Its CA ConfigMap is created before the webhook selects it: a create
	// the webhook would see, and refuse while it is unreachable.
	eventually(t, 30*time.Second, func() error {
		_, err := client.CoreV1().ConfigMaps(target).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err
	})
	kubectlOK(t, "", "label", "namespace", target, "e2e.orca.test/webhook="+ns)

	// The serving certificate names the service as the API server
	// verifies it: <service>.<namespace>.svc.
	ca := newTestCA(t, "webhook-ca")
	certPEM, keyPEM := servingCert(t, ca, "webhook."+ns+".svc")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	kubectlOK(t, "", "-n", ns, "create", "secret", "tls", "webhook-tls", "--cert="+certFile, "--key="+keyFile)
	kubectlOK(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: webhook
spec:
  replicas: 1
  selector:
    matchLabels: {app: webhook}
  template:
    metadata:
      labels: {app: webhook}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: webhook
        image: %s
        imagePullPolicy: Never
        args: ["-cert", "/tls/tls.crt", "-key", "/tls/tls.key"]
        ports: [{name: https, containerPort: 8443}]
        readinessProbe:
          httpGet: {path: /healthz, port: https, scheme: HTTPS}
          periodSeconds: 1
        volumeMounts: [{name: tls, mountPath: /tls, readOnly: true}]
      volumes:
      - name: tls
        secret: {secretName: webhook-tls}
---
apiVersion: v1
kind: Service
metadata:
  name: webhook
spec:
  selector: {app: webhook}
  ports: [{name: https, port: 443, targetPort: https}]
`, webhookImage), "-n", ns, "apply", "-f", "-")

	deny, slow := "deny-forbidden.e2e.orca.test", "slow.e2e.orca.test"
	// Registered after the namespaces', so it runs before their deletion:
	// the configurations go first, so that no webhook outlives its server.
	t.Cleanup(func() {
		if t.Failed() {
			res := runKubectl(t, nil, "", "-n", ns, "describe", "deployment,pods,endpointslices")
			t.Logf("state at failure:\n%s%s", res.Stdout, res.Stderr)
			res = runKubectl(t, nil, "", "-n", ns, "logs", "deployment/webhook")
			t.Logf("webhook log:\n%s%s", res.Stdout, res.Stderr)
		}
		for _, name := range []string{deny, slow} {
			_ = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
		}
		// Its pods go before the namespace's: deleted under a ReplicaSet
		// the collector has not yet removed, a pod is replaced, and a
		// sandbox the node is still starting when the run ends outlives
		// it.
		fg := metav1.DeletePropagationForeground
		_ = client.AppsV1().Deployments(ns).Delete(context.Background(), "webhook", metav1.DeleteOptions{PropagationPolicy: &fg})
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			pods, err := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=webhook"})
			if err == nil && len(pods.Items) == 0 {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	kubectlOK(t, "", "-n", ns, "rollout", "status", "deployment/webhook", "--timeout=90s")
	waitReadyEndpoints(t, ns, "webhook", 1)

	caBundle := base64.StdEncoding.EncodeToString([]byte(ca.pem))
	kubectlOK(t, validatingWebhook(deny, ns, ns, "/validate", "Fail", 10, caBundle), "apply", "-f", "-")

	n := 0
	// createConfigMap creates a ConfigMap of a new name with the key in
	// the guarded namespace, as kubectl create -f does.
	createConfigMap := func(key string) (string, kubectlResult, time.Duration) {
		n++
		name := fmt.Sprintf("cm-%d", n)
		start := time.Now()
		res := runKubectl(t, nil, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {%s: \"yes\"}\n", name, key),
			"-n", target, "create", "-f", "-")
		return name, res, time.Since(start)
	}
	// refused waits until a create is refused (the configuration reaches
	// the API server's admission through a watch) and returns kubectl's
	// error.
	refused := func(key string, timeout time.Duration) (string, time.Duration) {
		t.Helper()
		var msg string
		var took time.Duration
		eventually(t, timeout, func() error {
			name, res, d := createConfigMap(key)
			if res.Code == 0 {
				return fmt.Errorf("configmap %s with key %q was created: %s", name, key, res.Stdout)
			}
			msg, took = strings.TrimSpace(res.Stderr), d
			return nil
		})
		return msg, took
	}
	created := func(key string, timeout time.Duration) {
		t.Helper()
		eventually(t, timeout, func() error {
			name, res, _ := createConfigMap(key)
			if res.Code != 0 || !strings.Contains(res.Stdout, "configmap/"+name+" created") {
				return fmt.Errorf("create configmap %s with key %q: exit %d: %s%s", name, key, res.Code, res.Stdout, res.Stderr)
			}
			return nil
		})
	}

	// The webhook refuses with its message, as upstream words a refusal.
	msg, _ := refused("forbidden", 30*time.Second)
	want := fmt.Sprintf(`Error from server (Forbidden): error when creating "STDIN": admission webhook %q denied the request: %s`,
		deny, strings.ReplaceAll(webhookDenial, `\"`, `"`))
	if msg != want {
		t.Errorf("refusal:\n got %s\nwant %s", msg, want)
	}
	created("ordinary", 10*time.Second)
	logs := kubectlOK(t, "", "-n", ns, "logs", "deployment/webhook")
	if !strings.Contains(logs, "/validate cm-") || !strings.Contains(logs, "allowed=false") || !strings.Contains(logs, "allowed=true") {
		t.Errorf("the webhook's log shows no calls of both kinds:\n%s", logs)
	}

	// Ignore, and no pod behind the service: creates go through.
	kubectlOK(t, "", "patch", "validatingwebhookconfiguration", deny, "--type=json",
		"-p", `[{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}]`)
	kubectlOK(t, "", "-n", ns, "scale", "deployment/webhook", "--replicas=0")
	eventually(t, time.Minute, func() error {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=webhook"})
		if err != nil {
			return err
		}
		if len(pods.Items) != 0 {
			return fmt.Errorf("%d webhook pods left", len(pods.Items))
		}
		l, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=webhook"})
		if err != nil {
			return err
		}
		for _, sl := range l.Items {
			if len(sl.Endpoints) != 0 {
				return fmt.Errorf("slice %s lists %d endpoints", sl.Name, len(sl.Endpoints))
			}
		}
		return nil
	})
	created("forbidden", 10*time.Second)
	created("ordinary", 10*time.Second)

	// Fail, and no pod: refused, as upstream refuses when it cannot reach
	// the service.
	kubectlOK(t, "", "patch", "validatingwebhookconfiguration", deny, "--type=json",
		"-p", `[{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Fail"}]`)
	msg, _ = refused("ordinary", 10*time.Second)
	t.Logf("without endpoints: %s", msg)
	for _, w := range []string{
		`Error from server (InternalError): error when creating "STDIN": Internal error occurred: `,
		fmt.Sprintf(`failed calling webhook %q: failed to call webhook: Post "https://webhook.%s.svc:443/validate?timeout=10s": `, deny, ns),
		`no endpoints available for service "webhook"`,
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal without endpoints:\n %s\nwants %q", msg, w)
		}
	}

	// The pod back, and a second webhook that answers after its timeout:
	// refused when the timeout passes.
	kubectlOK(t, "", "-n", ns, "scale", "deployment/webhook", "--replicas=1")
	kubectlOK(t, "", "-n", ns, "rollout", "status", "deployment/webhook", "--timeout=90s")
	waitReadyEndpoints(t, ns, "webhook", 1)
	created("ordinary", 30*time.Second)
	kubectlOK(t, validatingWebhook(slow, ns, ns, "/slow", "Fail", 1, caBundle), "apply", "-f", "-")
	msg, took := refused("ordinary", 30*time.Second)
	t.Logf("after the timeout (%v): %s", took.Round(time.Millisecond), msg)
	for _, w := range []string{
		`Error from server (InternalError): error when creating "STDIN": Internal error occurred: `,
		fmt.Sprintf(`failed calling webhook %q: failed to call webhook: Post "https://webhook.%s.svc:443/slow?timeout=1s": `, slow, ns),
		`context deadline exceeded`,
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal after the timeout:\n %s\nwants %q", msg, w)
		}
	}
	// One second, not the twenty the webhook takes (kubectl's own start
	// included).
	if took > 8*time.Second {
		t.Errorf("the refusal after a timeout of 1s took %v", took)
	}

	// Without the slow webhook, creates go through again.
	kubectlOK(t, "", "delete", "validatingwebhookconfiguration", slow)
	created("ordinary", 10*time.Second)
	msg, _ = refused("forbidden", 10*time.Second)
	if !strings.Contains(msg, fmt.Sprintf("admission webhook %q denied the request", deny)) {
		t.Errorf("refusal once the slow webhook is gone: %s", msg)
	}
}
