package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testCA is a CA the test signs with, as a signer would.
type testCA struct {
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
	pem  string
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{key: key, cert: cert, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

func projectedPod(ns, name, script string, sources ...v1.VolumeProjection) *v1.Pod {
	p := simplePod(ns, name, script)
	p.Spec.Volumes = []v1.Volume{{Name: "certs", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: sources}}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "certs", MountPath: "/certs"}}
	return p
}

// podLogs waits until the pod's log holds marker and returns it.
func podLogs(t *testing.T, ns, name, marker string) string {
	t.Helper()
	var out string
	eventually(t, 30*time.Second, func() error {
		out = kubectlOK(t, "", "logs", name, "-n", ns)
		if !strings.Contains(out, marker) {
			return fmt.Errorf("log so far: %q", out)
		}
		return nil
	})
	return out
}

// TestProjectedClusterTrustBundle follows upstream's projected
// clusterTrustBundle specs: a bundle by name, the union of a signer's
// bundles chosen by labels, an optional missing bundle as an empty file,
// and a pod held back while its required bundle is missing, which starts
// once it exists.
func TestProjectedClusterTrustBundle(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := context.Background()
	a, b, c := newTestCA(t, "a"), newTestCA(t, "b"), newTestCA(t, "c")
	signer := "e2e.example.com/" + ns
	prefix := strings.ReplaceAll(signer, "/", ":") + ":"
	create := func(name, signer string, labels map[string]string, pems ...string) {
		t.Helper()
		_, err := client.CertificatesV1().ClusterTrustBundles().Create(ctx, &certificatesv1.ClusterTrustBundle{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec:       certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: strings.Join(pems, "")},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = client.CertificatesV1().ClusterTrustBundles().Delete(ctx, name, metav1.DeleteOptions{}) })
	}
	create("plain-"+ns, "", nil, a.pem, b.pem)
	create(prefix+"alive", signer, map[string]string{"alive": "true"}, a.pem)
	create(prefix+"alive2", signer, map[string]string{"alive": "true"}, a.pem, c.pem)
	create(prefix+"dead", signer, map[string]string{"alive": "false"}, b.pem)

	pod := projectedPod(ns, "ctb", "for f in named alive missing; do echo \"== $f\"; cat /certs/$f.pem; done; echo END; exec sleep 3600",
		v1.VolumeProjection{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{Name: ptrTo("plain-" + ns), Path: "named.pem"}},
		v1.VolumeProjection{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{SignerName: &signer, Path: "alive.pem",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"alive": "true"}}}},
		v1.VolumeProjection{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{Name: ptrTo("missing-" + ns), Optional: ptrTo(true), Path: "missing.pem"}},
	)
	createPod(t, pod)
	waitPod(t, ns, "ctb", time.Minute, "Running", running)
	out := podLogs(t, ns, "ctb", "END")
	if want := "== named\n" + a.pem + b.pem + "== alive\n" + a.pem + c.pem + "== missing\nEND\n"; out != want {
		t.Errorf("projected bundles:\n%s\nwant:\n%s", out, want)
	}

	blocked := projectedPod(ns, "blocked", "cat /certs/ca.pem; echo END; exec sleep 3600",
		v1.VolumeProjection{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{SignerName: &signer, Path: "ca.pem",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"alive": "later"}}}})
	createPod(t, blocked)
	eventually(t, 30*time.Second, func() error {
		if !hasEvent(events(t, ns, "blocked"), `FailedMount: MountVolume.SetUp failed for volume "certs" : combination of signerName and labelSelector matched zero ClusterTrustBundles`) {
			return fmt.Errorf("no FailedMount event yet: %v", events(t, ns, "blocked"))
		}
		return nil
	})
	if p := getPod(t, ns, "blocked"); p.Status.Phase == v1.PodRunning {
		t.Fatal("the pod runs without its bundle")
	}
	create(prefix+"later", signer, map[string]string{"alive": "later"}, c.pem)
	waitPod(t, ns, "blocked", time.Minute, "Running", running)
	if out := podLogs(t, ns, "blocked", "END"); out != c.pem+"END\n" {
		t.Errorf("bundle once it exists:\n%s", out)
	}
}

// TestProjectedPodCertificate plays a signer for upstream's podCertificate
// volume: the kubelet asks for the pod's certificate with a
// PodCertificateRequest, the pod waits until the test issues it through
// /status, and then reads its key and the chain; a denied request keeps
// its pod from starting.
func TestProjectedPodCertificate(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := context.Background()
	ca := newTestCA(t, "pods")
	signer := "e2e.example.com/pods-" + ns
	source := func(keyType string) v1.VolumeProjection {
		return v1.VolumeProjection{PodCertificate: &v1.PodCertificateProjection{
			SignerName: signer, KeyType: keyType, CredentialBundlePath: "creds.pem", KeyPath: "key.pem", CertificateChainPath: "chain.pem",
			UserAnnotations: map[string]string{"e2e.example.com/role": "web"},
		}}
	}
	createPod(t, projectedPod(ns, "cert", "cat /certs/key.pem /certs/chain.pem; echo END; exec sleep 3600", source("ECDSAP256")))
	pcr := waitForPodCertificateRequest(t, ns, "cert")
	s := pcr.Spec
	if s.SignerName != signer || s.NodeName != nodeName || s.ServiceAccountName != "default" || s.UnverifiedUserAnnotations["e2e.example.com/role"] != "web" {
		t.Errorf("request %+v", s)
	}
	if p := getPod(t, ns, "cert"); p.Status.Phase == v1.PodRunning {
		t.Fatal("the pod runs before its certificate is issued")
	}
	req, err := x509.ParseCertificateRequest(s.StubPKCS10Request)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "cert"},
		NotBefore: now, NotAfter: now.Add(2 * time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, req.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	pcr.Status = certificatesv1.PodCertificateRequestStatus{
		Conditions:       []metav1.Condition{{Type: "Issued", Status: metav1.ConditionTrue, Reason: "Issued", Message: "issued by the e2e test", LastTransitionTime: metav1.NewTime(now)}},
		CertificateChain: leaf + ca.pem,
		NotBefore:        &metav1.Time{Time: now}, BeginRefreshAt: &metav1.Time{Time: now.Add(time.Hour)}, NotAfter: &metav1.Time{Time: now.Add(2 * time.Hour)},
	}
	if _, err := client.CertificatesV1().PodCertificateRequests(ns).UpdateStatus(ctx, pcr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, "cert", time.Minute, "Running", running)
	out := podLogs(t, ns, "cert", "END")
	keyBlock, rest := pem.Decode([]byte(out))
	if keyBlock == nil || keyBlock.Type != "PRIVATE KEY" {
		t.Fatalf("no key first:\n%s", out)
	}
	key, err := x509.ParsePKCS8PrivateKey(keyBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !key.(*ecdsa.PrivateKey).PublicKey.Equal(req.PublicKey) {
		t.Error("the pod's key is not the one the certificate was issued to")
	}
	if string(rest) != leaf+ca.pem+"END\n" {
		t.Errorf("chain:\n%s", rest)
	}

	createPod(t, projectedPod(ns, "denied", "cat /certs/chain.pem; exec sleep 3600", source("ED25519")))
	pcr = waitForPodCertificateRequest(t, ns, "denied")
	pcr.Status.Conditions = []metav1.Condition{{Type: "Denied", Status: metav1.ConditionTrue, Reason: "UnsupportedKeyType", Message: "use ECDSAP256", LastTransitionTime: metav1.Now()}}
	if _, err := client.CertificatesV1().PodCertificateRequests(ns).UpdateStatus(ctx, pcr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		want := `FailedMount: MountVolume.SetUp failed for volume "certs" : PodCertificateRequest was permanently denied: reason="UnsupportedKeyType" message="use ECDSAP256"`
		if !hasEvent(events(t, ns, "denied"), want) {
			return fmt.Errorf("no denial event yet: %v", events(t, ns, "denied"))
		}
		return nil
	})
	if p := getPod(t, ns, "denied"); p.Status.Phase == v1.PodRunning {
		t.Error("a pod whose certificate was denied runs")
	}
}

func waitForPodCertificateRequest(t *testing.T, ns, pod string) *certificatesv1.PodCertificateRequest {
	t.Helper()
	var pcr *certificatesv1.PodCertificateRequest
	eventually(t, time.Minute, func() error {
		list, err := client.CertificatesV1().PodCertificateRequests(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "spec.podName=" + pod})
		if err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d requests for %s", len(list.Items), pod)
		}
		pcr = &list.Items[0]
		return nil
	})
	return pcr
}

func ptrTo[T any](v T) *T { return &v }
