package volume

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeCertificates serves bundles and pod certificate requests from
// maps; tests play the signer by editing the requests.
type fakeCertificates struct {
	mu      sync.Mutex
	bundles map[string]*certificatesv1.ClusterTrustBundle
	pcrs    map[string]*certificatesv1.PodCertificateRequest
	created []string
}

func newFakeCertificates() *fakeCertificates {
	return &fakeCertificates{bundles: map[string]*certificatesv1.ClusterTrustBundle{}, pcrs: map[string]*certificatesv1.PodCertificateRequest{}}
}

func (f *fakeCertificates) ClusterTrustBundle(_ context.Context, name string) (*certificatesv1.ClusterTrustBundle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b, ok := f.bundles[name]; ok {
		return b.DeepCopy(), nil
	}
	return nil, notFound("clustertrustbundles", name)
}

func (f *fakeCertificates) ClusterTrustBundles(_ context.Context, signer string) ([]certificatesv1.ClusterTrustBundle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []certificatesv1.ClusterTrustBundle
	for _, name := range sortedKeys(f.bundles) {
		if b := f.bundles[name]; b.Spec.SignerName == signer {
			out = append(out, *b.DeepCopy())
		}
	}
	return out, nil
}

func (f *fakeCertificates) ServiceAccount(_ context.Context, ns, name string) (*v1.ServiceAccount, error) {
	return &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: "sa-uid"}}, nil
}

func (f *fakeCertificates) Node(_ context.Context, name string) (*v1.Node, error) {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "node-uid"}}, nil
}

func (f *fakeCertificates) CreatePodCertificateRequest(_ context.Context, pcr *certificatesv1.PodCertificateRequest) (*certificatesv1.PodCertificateRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := pcr.DeepCopy()
	out.Name = fmt.Sprintf("%s%d", pcr.GenerateName, len(f.created))
	f.created = append(f.created, out.Name)
	f.pcrs[out.Namespace+"/"+out.Name] = out
	return out.DeepCopy(), nil
}

func (f *fakeCertificates) PodCertificateRequest(_ context.Context, ns, name string) (*certificatesv1.PodCertificateRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.pcrs[ns+"/"+name]; ok {
		return p.DeepCopy(), nil
	}
	return nil, notFound("podcertificaterequests", name)
}

// issue signs the named request with ca, as a signer would through
// /status, and returns the leaf.
func (f *fakeCertificates) issue(t *testing.T, ns, name string, ca *testCA, lifetime time.Duration, now time.Time) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	pcr := f.pcrs[ns+"/"+name]
	req, err := x509.ParseCertificateRequest(pcr.Spec.StubPKCS10Request)
	if err != nil || req.CheckSignature() != nil {
		t.Fatalf("stub request of %s: %v", name, err)
	}
	leaf := ca.sign(t, req.PublicKey, now, lifetime)
	pcr.Status = certificatesv1.PodCertificateRequestStatus{
		Conditions:       []metav1.Condition{{Type: "Issued", Status: metav1.ConditionTrue, Reason: "Issued"}},
		CertificateChain: leaf + "intermediate comment\n" + ca.pem,
		NotBefore:        &metav1.Time{Time: now}, BeginRefreshAt: &metav1.Time{Time: now.Add(lifetime / 2)}, NotAfter: &metav1.Time{Time: now.Add(lifetime)},
	}
	return leaf
}

func (f *fakeCertificates) deny(ns, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pcrs[ns+"/"+name].Status.Conditions = []metav1.Condition{{Type: "Denied", Status: metav1.ConditionTrue, Reason: "UnsupportedKeyType", Message: "try RSA"}}
}

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
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{key: key, cert: cert, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

func (ca *testCA) sign(t *testing.T, pub any, now time.Time, lifetime time.Duration) string {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), NotBefore: now, NotAfter: now.Add(lifetime)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func projectedPod(sources ...v1.VolumeProjection) *v1.Pod {
	pod := podWith(v1.Volume{Name: "certs", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: sources, DefaultMode: ptr(int32(0o644))}}})
	pod.Spec.NodeName = "node1"
	return pod
}

func TestClusterTrustBundleProjection(t *testing.T) {
	a, b, c := newTestCA(t, "a"), newTestCA(t, "b"), newTestCA(t, "c")
	certs := newFakeCertificates()
	bundle := func(name, signer string, labels map[string]string, pems ...string) {
		certs.bundles[name] = &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: strings.Join(pems, "text between\n")}}
	}
	bundle("plain", "", nil, a.pem, b.pem)
	bundle("example.com:s:alive", "example.com/s", map[string]string{"alive": "true"}, a.pem)
	bundle("example.com:s:alive2", "example.com/s", map[string]string{"alive": "true"}, a.pem, c.pem)
	bundle("example.com:s:dead", "example.com/s", map[string]string{"alive": "false"}, b.pem)

	for _, tc := range []struct {
		name string
		src  v1.ClusterTrustBundleProjection
		want string // "" with wantErr
		err  string
	}{
		{"by name", v1.ClusterTrustBundleProjection{Name: ptr("plain")}, a.pem + b.pem, ""},
		{"missing name", v1.ClusterTrustBundleProjection{Name: ptr("nothing")}, "", "while getting ClusterTrustBundle by name"},
		{"missing optional name", v1.ClusterTrustBundleProjection{Name: ptr("nothing"), Optional: ptr(true)}, "", ""},
		{"signer and selector, deduplicated", v1.ClusterTrustBundleProjection{SignerName: ptr("example.com/s"), LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"alive": "true"}}}, a.pem + c.pem, ""},
		{"signer, every bundle", v1.ClusterTrustBundleProjection{SignerName: ptr("example.com/s"), LabelSelector: &metav1.LabelSelector{}}, a.pem + c.pem + b.pem, ""},
		{"signer, no selector matches nothing", v1.ClusterTrustBundleProjection{SignerName: ptr("example.com/s")}, "", "matched zero ClusterTrustBundles"},
		{"signer, no selector, optional", v1.ClusterTrustBundleProjection{SignerName: ptr("example.com/s"), Optional: ptr(true)}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newManager(t, newFakeSources())
			m.Certificates = certs
			src := tc.src
			src.Path = "ca.pem"
			vols, err := setup(t, m, projectedPod(v1.VolumeProjection{ClusterTrustBundle: &src}))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(vols["certs"].HostPath, "ca.pem")); got != tc.want {
				t.Errorf("ca.pem:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestPodCertificateProjection plays the signer: the volume waits until
// the request is issued, serves key and chain, asks again from
// beginRefreshAt while still serving the old credentials, and stops for
// good when a request is denied.
func TestPodCertificateProjection(t *testing.T) {
	ca := newTestCA(t, "signer")
	certs := newFakeCertificates()
	now := time.Now().Truncate(time.Second)
	m := newManager(t, newFakeSources())
	m.Certificates = certs
	m.Now = func() time.Time { return now }
	pod := projectedPod(v1.VolumeProjection{PodCertificate: &v1.PodCertificateProjection{
		SignerName: "example.com/pods", KeyType: "ECDSAP256", MaxExpirationSeconds: ptr(int32(7200)),
		CredentialBundlePath: "bundle.pem", KeyPath: "key.pem", CertificateChainPath: "chain.pem",
		UserAnnotations: map[string]string{"example.com/role": "web"},
	}})

	if _, err := setup(t, m, pod); err == nil || !strings.Contains(err.Error(), "credential bundle is not issued yet") {
		t.Fatalf("before issuance: %v", err)
	}
	if len(certs.created) != 1 {
		t.Fatalf("%d requests", len(certs.created))
	}
	pcr, _ := certs.PodCertificateRequest(context.Background(), "shop", certs.created[0])
	s := pcr.Spec
	if s.SignerName != "example.com/pods" || s.PodName != "web" || s.PodUID != "uid-1" || s.ServiceAccountName != "robot" || s.ServiceAccountUID != "sa-uid" ||
		s.NodeName != "node1" || s.NodeUID != "node-uid" || *s.MaxExpirationSeconds != 7200 || s.UnverifiedUserAnnotations["example.com/role"] != "web" ||
		pcr.OwnerReferences[0].UID != "uid-1" || !strings.HasPrefix(pcr.Name, "req-web-") {
		t.Fatalf("request %+v", pcr)
	}
	// Still pending: no second request.
	if _, err := m.Setup(context.Background(), pod); err == nil {
		t.Fatal("volume ready before issuance")
	}
	leaf := certs.issue(t, "shop", certs.created[0], ca, 2*time.Hour, now)
	vols, err := m.Setup(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := vols["certs"].HostPath
	key, chain := readFile(t, filepath.Join(dir, "key.pem")), readFile(t, filepath.Join(dir, "chain.pem"))
	if chain != leaf+ca.pem {
		t.Errorf("chain not normalised:\n%s", chain)
	}
	if got := readFile(t, filepath.Join(dir, "bundle.pem")); got != key+chain {
		t.Errorf("bundle is not key then chain")
	}
	block, _ := pem.Decode([]byte(key))
	priv, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil || block.Type != "PRIVATE KEY" {
		t.Fatalf("key: %v %s", err, block.Type)
	}
	leafBlock, _ := pem.Decode([]byte(leaf))
	leafCert, _ := x509.ParseCertificate(leafBlock.Bytes)
	if !priv.(*ecdsa.PrivateKey).PublicKey.Equal(leafCert.PublicKey) {
		t.Error("the certificate is not for the written key")
	}

	// Past beginRefreshAt: a new request, the old credentials stay.
	now = now.Add(time.Hour + time.Minute)
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if len(certs.created) != 2 || readFile(t, filepath.Join(dir, "key.pem")) != key {
		t.Fatalf("refresh: %d requests, key changed=%v", len(certs.created), readFile(t, filepath.Join(dir, "key.pem")) != key)
	}
	newLeaf := certs.issue(t, "shop", certs.created[1], ca, 2*time.Hour, now)
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if readFile(t, filepath.Join(dir, "key.pem")) == key || !strings.HasPrefix(readFile(t, filepath.Join(dir, "chain.pem")), newLeaf) {
		t.Error("refreshed credentials not written")
	}

	// A denied request ends the source.
	other := projectedPod(v1.VolumeProjection{PodCertificate: &v1.PodCertificateProjection{SignerName: "example.com/pods", KeyType: "ED25519", KeyPath: "k"}})
	other.UID = "uid-2"
	if _, err := setup(t, m, other); err == nil {
		t.Fatal("ready before issuance")
	}
	certs.deny("shop", certs.created[2])
	for range 2 {
		if _, err := m.Setup(context.Background(), other); err == nil || !strings.Contains(err.Error(), `PodCertificateRequest was permanently denied: reason="UnsupportedKeyType" message="try RSA"`) {
			t.Fatalf("after denial: %v", err)
		}
	}
	if len(certs.created) != 3 {
		t.Errorf("%d requests after a denial", len(certs.created))
	}
}

func TestTrustAnchors(t *testing.T) {
	a, b := newTestCA(t, "a"), newTestCA(t, "b")
	if got := string(TrustAnchors("junk\n"+a.pem, b.pem+a.pem)); got != a.pem+b.pem {
		t.Errorf("TrustAnchors:\n%s", got)
	}
	if got := TrustAnchors(); got == nil || len(got) != 0 {
		t.Errorf("no bundles: %q", got)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
