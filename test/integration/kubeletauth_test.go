package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/orca-project/orca/internal/auth/delegating"
	"github.com/orca-project/orca/internal/auth/pki"
	kubeletserver "github.com/orca-project/orca/internal/kubelet/server"
	"github.com/orca-project/orca/internal/kubelet/server/streamtest"
)

// TestKubeletAuth runs the kubelet's server over a stand-in runtime, with
// the checks the agent puts in front of it, made by the node's own
// identity against the shared API server: who may call a kubelet is up
// to RBAC, and the API server itself gets through by its bootstrap
// binding, so that kubectl logs and exec still work.
func TestKubeletAuth(t *testing.T) {
	ctx := context.Background()
	const ns, node = "kubelet-auth", "kubelet-auth-node"

	// The agent asks as system:node:NAME, which the Node authorizer lets
	// create reviews.
	nodeCfg := rest.CopyConfig(restCfg)
	nodeCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"}}
	nodeClient := kubernetes.NewForConfigOrDie(nodeCfg)

	dir := t.TempDir()
	logPath := filepath.Join(dir, "app.log")
	if err := os.WriteFile(logPath, []byte("2024-01-01T00:00:00Z stdout F hello from app\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rt := streamtest.NewRuntime()
	t.Cleanup(rt.Close)
	rt.Alive = func(string) bool { return false }
	rt.Pods[ns+"/web"] = map[string]kubeletserver.ContainerRef{"app": {ID: "c-app", LogPath: logPath}}

	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "# metrics\n") })
	mux.Handle("/", kubeletserver.New(rt, slog.Default()))
	h := kubeletserver.WithAuth(mux, kubeletserver.Auth{
		Authenticator: delegating.NewAuthenticator(nodeClient.AuthenticationV1().TokenReviews()),
		Authorizer:    delegating.NewAuthorizer(nodeClient.AuthorizationV1().SubjectAccessReviews()),
		NodeName:      node,
	})
	// The serving certificate's CA does not matter (the API server does
	// not verify kubelets); client certificates are the cluster CA's.
	servingCA, err := pki.LoadOrCreateCA(dir, "ca", "kubelet-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	serving, err := pki.LoadOrIssue(dir, "kubelet", servingCA, pki.LeafSpec{CommonName: node, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, Server: true})
	if err != nil {
		t.Fatal(err)
	}
	clusterCA := x509.NewCertPool()
	if !clusterCA.AppendCertsFromPEM(restCfg.CAData) {
		t.Fatal("no cluster CA in the admin kubeconfig")
	}
	kubelet := httptest.NewUnstartedServer(h)
	kubelet.TLS = kubeletserver.TLSConfig(clusterCA, tls.Certificate{Certificate: [][]byte{serving.Cert.Raw}, PrivateKey: serving.Key})
	kubelet.StartTLS()
	t.Cleanup(kubelet.Close)
	port, _ := strconv.Atoi(kubelet.URL[strings.LastIndex(kubelet.URL, ":")+1:])

	// Three service accounts: one with no rights on nodes, one with
	// system:kubelet-api-admin, one that may only read metrics.
	mustCreate(t, func() error {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() { _ = client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	tokens := map[string]string{}
	for _, sa := range []string{"nobody", "admin", "scraper"} {
		mustCreate(t, func() error {
			_, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
			return err
		})
		tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tokens[sa] = tr.Status.Token
	}
	bind := func(name, role, sa string) {
		mustCreate(t, func() error {
			_, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
			}, metav1.CreateOptions{})
			return err
		})
		t.Cleanup(func() {
			_ = client.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	bind("kubelet-auth-admin", "system:kubelet-api-admin", "admin")
	mustCreate(t, func() error {
		_, err := client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "kubelet-auth-metrics"},
			Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"nodes/metrics"}}},
		}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoles().Delete(context.Background(), "kubelet-auth-metrics", metav1.DeleteOptions{})
	})
	bind("kubelet-auth-metrics", "kubelet-auth-metrics", "scraper")

	// The API server's authorizer sees new bindings through its cache;
	// ask it directly until it does, since the kubelet would remember an
	// early refusal for 30 s.
	for _, who := range []string{"admin", "scraper"} {
		eventually(t, 10*time.Second, func() error {
			sar, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: "system:serviceaccount:" + ns + ":" + who, Groups: []string{"system:serviceaccounts", "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: "metrics", Name: node},
			}}, metav1.CreateOptions{})
			if err == nil && !sar.Status.Allowed {
				err = fmt.Errorf("%s may not read nodes/metrics yet", who)
			}
			return err
		})
	}

	noCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	adminCert, err := tls.X509KeyPair(restCfg.CertData, restCfg.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	withCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{adminCert}}}}
	get := func(c *http.Client, token, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", kubelet.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	logs := "/containerLogs/" + ns + "/web/app"
	sa := func(name string) string { return "system:serviceaccount:" + ns + ":" + name }
	cases := []struct {
		name   string
		client *http.Client
		token  string
		path   string
		code   int
		body   string
	}{
		{"no credentials", noCert, "", logs, 401, "Unauthorized"},
		{"no credentials for health", noCert, "", "/healthz", 401, "Unauthorized"},
		{"a token the API server refuses", noCert, "not-a-token", logs, 401, "Unauthorized"},
		{"no rights: logs", noCert, tokens["nobody"], logs, 403, "Forbidden (user=" + sa("nobody") + ", verb=get, resource=nodes, subresource(s)=[proxy])\n"},
		{"no rights: health", noCert, tokens["nobody"], "/healthz", 403, "Forbidden (user=" + sa("nobody") + ", verb=get, resource=nodes, subresource(s)=[healthz proxy])\n"},
		{"no rights: metrics", noCert, tokens["nobody"], "/metrics", 403, "Forbidden (user=" + sa("nobody") + ", verb=get, resource=nodes, subresource(s)=[metrics])\n"},
		{"kubelet-api-admin: logs", noCert, tokens["admin"], logs, 200, "hello from app\n"},
		{"kubelet-api-admin: health", noCert, tokens["admin"], "/healthz", 200, "ok"},
		{"kubelet-api-admin: metrics", noCert, tokens["admin"], "/metrics", 200, "# metrics\n"},
		{"kubelet-api-admin: again, from the cache", noCert, tokens["admin"], logs, 200, "hello from app\n"},
		{"nodes/metrics only: metrics", noCert, tokens["scraper"], "/metrics", 200, "# metrics\n"},
		{"nodes/metrics only: logs", noCert, tokens["scraper"], logs, 403, "Forbidden (user=" + sa("scraper") + ", verb=get, resource=nodes, subresource(s)=[proxy])\n"},
		{"system:masters certificate", withCert, "", logs, 200, "hello from app\n"},
	}
	for _, c := range cases {
		if code, body := get(c.client, c.token, c.path); code != c.code || body != c.body {
			t.Errorf("%s: got %d %q, want %d %q", c.name, code, body, c.code, c.body)
		}
	}

	// Through the API server, which presents its kubelet client
	// certificate (kube-apiserver-kubelet-client, no groups).
	n, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	// The node IPAM controller writes the new Node too: retry on conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if n, err = client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err != nil {
			return err
		}
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
		n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
		_, err = client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var pod *corev1.Pod
	mustCreate(t, func() error {
		pod, err = client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "busybox"}}},
		}, metav1.CreateOptions{})
		return err
	})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if pod, err = client.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
			return err
		}
		pod.Status.Phase = corev1.PodRunning
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "busybox", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
		_, err = client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if out := mustKubectl(t, "", "logs", "-n", ns, "web"); out != "hello from app\n" {
		t.Errorf("kubectl logs: %q", out)
	}
	if out := mustKubectl(t, "", "exec", "-n", ns, "web", "--", "echo", "through", "the", "kubelet"); out != "through the kubelet\n" {
		t.Errorf("kubectl exec: %q", out)
	}
}

// mustCreate retries create while the namespace's service account
// admission or the informers catch up.
func mustCreate(t *testing.T, create func() error) {
	t.Helper()
	eventually(t, 30*time.Second, create)
}
