package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// tokenKubeconfig writes a kubeconfig that trusts the cluster CA but
// carries no client certificate, so that --token alone identifies the
// caller.
func tokenKubeconfig(t *testing.T) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["orca"] = &clientcmdapi.Cluster{Server: inst.URL, CertificateAuthorityData: restCfg.CAData}
	cfg.AuthInfos["anonymous"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["orca"] = &clientcmdapi.Context{Cluster: "orca", AuthInfo: "anonymous", Namespace: "default"}
	cfg.CurrentContext = "orca"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// tokenClient is a client that authenticates with tok alone.
func tokenClient(t *testing.T, tok string) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(&rest.Config{Host: inst.URL, BearerToken: tok, TLSClientConfig: rest.TLSClientConfig{CAData: restCfg.CAData}})
}

func TestTokenFromKubectlCreateToken(t *testing.T) {
	ctx := context.Background()
	eventually(t, 30*time.Second, func() error {
		_, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	tok := strings.TrimSpace(mustKubectl(t, "", "create", "token", "default"))
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("kubectl create token printed %q, not a JWT", tok)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Iss  string   `json:"iss"`
		Sub  string   `json:"sub"`
		Aud  []string `json:"aud"`
		Exp  int64    `json:"exp"`
		Iat  int64    `json:"iat"`
		Kube struct {
			Namespace      string `json:"namespace"`
			ServiceAccount struct{ Name, UID string }
		} `json:"kubernetes.io"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	const issuer = "https://kubernetes.default.svc.cluster.local"
	if claims.Iss != issuer || claims.Sub != "system:serviceaccount:default:default" || len(claims.Aud) != 1 || claims.Aud[0] != issuer ||
		claims.Exp-claims.Iat != 3600 || claims.Kube.Namespace != "default" {
		t.Errorf("claims = %s", payload)
	}

	kubeconfig := tokenKubeconfig(t)
	bindRole(t, "default", "default-sa-view", "ClusterRole", "view", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "default"})
	t.Cleanup(func() {
		_ = client.RbacV1().RoleBindings("default").Delete(context.Background(), "default-sa-view", metav1.DeleteOptions{})
	})
	out := mustKubectl(t, "", "--kubeconfig", kubeconfig, "--token", tok, "get", "pods", "-n", "default")
	if strings.Contains(out, "Unauthorized") {
		t.Errorf("get pods with the token: %s", out)
	}

	// The same token with its subject rewritten: the signature no longer
	// matches.
	forged := strings.Replace(string(payload), "system:serviceaccount:default:default", "system:serviceaccount:kube-system:default", 1)
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(forged)) + "." + parts[2]
	res := runKubectl(t, "", "--kubeconfig", kubeconfig, "--token", tampered, "get", "pods", "-n", "default")
	if res.Code == 0 || !strings.Contains(res.Stderr, "Unauthorized") {
		t.Errorf("tampered token: exit %d, stderr %q", res.Code, res.Stderr)
	}

	// The 401 body is upstream's Status.
	req, _ := http.NewRequest("GET", inst.URL+"/api/v1/namespaces/default/pods", nil)
	req.Header.Set("Authorization", "Bearer "+tampered)
	rt, err := rest.TransportFor(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: restCfg.CAData}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var st metav1.Status
	_ = json.Unmarshal(body, &st)
	if resp.StatusCode != http.StatusUnauthorized || st.Reason != metav1.StatusReasonUnauthorized || st.Message != "Unauthorized" || st.Code != 401 {
		t.Errorf("tampered token: %d %s", resp.StatusCode, body)
	}
}

func TestTokenRequestErrorsAndPodBinding(t *testing.T) {
	ctx := context.Background()
	ns := admissionNamespace(t, "tokens")
	sas := client.CoreV1().ServiceAccounts(ns)

	_, err := sas.CreateToken(ctx, "nobody", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `serviceaccounts "nobody" not found`) {
		t.Errorf("token for a missing service account: %v", err)
	}
	_, err = sas.CreateToken(ctx, "default", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](599)}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes") {
		t.Errorf("599 s token: %v", err)
	}
	_, err = sas.CreateToken(ctx, "default", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "ghost"},
	}}, metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `pods "ghost" not found`) {
		t.Errorf("token bound to a missing pod: %v", err)
	}

	pod, err := client.CoreV1().Pods(ns).Create(ctx, simplePod("holder", corev1.ResourceRequirements{}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sas.CreateToken(ctx, "default", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "holder", UID: "not-the-uid"},
	}}, metav1.CreateOptions{})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "the UID in the bound object reference (not-the-uid) does not match the UID in record") {
		t.Errorf("token bound to a pod with the wrong uid: %v", err)
	}

	bound := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To[int64](600),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "holder", UID: pod.UID},
	}}
	if _, err := sas.CreateToken(ctx, "default", bound, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("dry-run token request: %v", err)
	}
	tr, err := sas.CreateToken(ctx, "default", bound, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status.Token == "" || time.Until(tr.Status.ExpirationTimestamp.Time) > 601*time.Second || time.Until(tr.Status.ExpirationTimestamp.Time) < 500*time.Second {
		t.Errorf("bound token status = %+v", tr.Status)
	}
	bindRole(t, ns, "default-view", "ClusterRole", "view", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: ns})
	podClient := tokenClient(t, tr.Status.Token)
	if _, err := podClient.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("bound token while its pod exists: %v", err)
	}
	if err := client.CoreV1().Pods(ns).Delete(ctx, "holder", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		_, err := podClient.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			return err
		}
		return nil
	})
}

func TestRootCAPublishedInEveryNamespace(t *testing.T) {
	ctx := context.Background()
	ns := admissionNamespace(t, "rootca")
	ca, err := os.ReadFile(filepath.Join(filepath.Dir(inst.Kubeconfig), "tls", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	published := func() error {
		cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data["ca.crt"] != string(ca) || cm.Annotations["kubernetes.io/description"] == "" {
			return &apierrors.StatusError{ErrStatus: metav1.Status{Message: "kube-root-ca.crt is not the cluster CA yet"}}
		}
		return nil
	}
	eventually(t, 30*time.Second, published)
	if err := client.CoreV1().ConfigMaps(ns).Delete(ctx, "kube-root-ca.crt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, published)
}
