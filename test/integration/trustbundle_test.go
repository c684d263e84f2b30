package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
)

// testCA is a CA a test can sign with.
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
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{key: key, cert: cert, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// issue signs a leaf for pub, from notBefore for lifetime.
func (ca *testCA) issue(t *testing.T, pub any, notBefore time.Time, lifetime time.Duration) string {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(notBefore.UnixNano()), Subject: pkix.Name{CommonName: "pod"}, NotBefore: notBefore, NotAfter: notBefore.Add(lifetime)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestClusterTrustBundleAPI: bundles without a signer are anyone's with
// the write verbs; a signer's bundle needs the attest verb for it
// (upstream's 403 otherwise), its name carries the signer, and its signer
// never changes.
func TestClusterTrustBundleAPI(t *testing.T) {
	ctx := context.Background()
	suffix := utilrand.String(5)
	signer := "e2e.example.com/signer-" + suffix
	prefix := "e2e.example.com:signer-" + suffix + ":"
	ca, other := newTestCA(t, "root"), newTestCA(t, "other")
	ctbs := client.CertificatesV1().ClusterTrustBundles()
	const writer, attester = "ctb-writer", "ctb-attester"
	writeRule := rbacv1.PolicyRule{Verbs: []string{"create", "update", "get", "list"}, APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"clustertrustbundles"}}
	clusterGrant(t, "ctb-test-writer", []rbacv1.PolicyRule{writeRule}, user(writer), user(attester))
	clusterGrant(t, "ctb-test-attester", []rbacv1.PolicyRule{
		{Verbs: []string{"attest"}, APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{"e2e.example.com/*"}},
	}, user(attester))
	bundle := func(name, signer, pems string) *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"test": suffix}},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: pems}}
	}
	cleanup := func(name string) { t.Cleanup(func() { _ = ctbs.Delete(ctx, name, metav1.DeleteOptions{}) }) }

	if _, err := clientAs(t, writer).CertificatesV1().ClusterTrustBundles().Create(ctx, bundle("plain-"+suffix, "", ca.pem), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cleanup("plain-" + suffix)
	_, err := clientAs(t, writer).CertificatesV1().ClusterTrustBundles().Create(ctx, bundle(prefix+"a", signer, ca.pem), metav1.CreateOptions{})
	want := `clustertrustbundles.certificates.k8s.io "` + prefix + `a" is forbidden: user not permitted to attest for signerName "` + signer + `"`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("bundle of a signer without attest: %v\nwant %s", err, want)
	}
	if _, err := clientAs(t, attester).CertificatesV1().ClusterTrustBundles().Create(ctx, bundle(prefix+"a", signer, ca.pem+other.pem), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cleanup(prefix + "a")

	for _, tc := range []struct {
		b    *certificatesv1.ClusterTrustBundle
		want string
	}{
		{bundle("wrong-"+suffix, signer, ca.pem), "ClusterTrustBundle for signerName " + signer + " must be named with prefix " + prefix},
		{bundle("colon:"+suffix, "", ca.pem), `ClusterTrustBundle without signer name must not have ":" in its name`},
		{bundle("empty-"+suffix, "", ""), "at least one trust anchor must be provided"},
		{bundle("twice-"+suffix, "", ca.pem+ca.pem), "duplicate trust anchor (indices [0 1])"},
	} {
		if _, err := ctbs.Create(ctx, tc.b, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.b.Name, err, tc.want)
		}
	}

	got, err := ctbs.Get(ctx, prefix+"a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.SignerName = "e2e.example.com/elsewhere"
	if _, err := ctbs.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "field is immutable") {
		t.Errorf("changing the signer: %v", err)
	}
	// The writer without attest may not change the signer's bundle, not
	// even its labels.
	got, _ = ctbs.Get(ctx, prefix+"a", metav1.GetOptions{})
	got.Labels["more"] = "x"
	if _, err := clientAs(t, writer).CertificatesV1().ClusterTrustBundles().Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("writer updating a signer's bundle: %v", err)
	}

	// kubectl apply needs the OpenAPI models of the group.
	applied := "apiVersion: certificates.k8s.io/v1\nkind: ClusterTrustBundle\nmetadata:\n  name: applied-" + suffix + "\nspec:\n  trustBundle: |\n" +
		"    " + strings.ReplaceAll(strings.TrimSpace(other.pem), "\n", "\n    ") + "\n"
	if out := mustKubectl(t, applied, "apply", "-f", "-"); !strings.Contains(out, "clustertrustbundle.certificates.k8s.io/applied-"+suffix+" created") {
		t.Errorf("kubectl apply: %q", out)
	}
	cleanup("applied-" + suffix)
	if out := mustKubectl(t, "", "explain", "clustertrustbundle.spec.signerName"); !strings.Contains(out, "signerName indicates the associated signer") {
		t.Errorf("kubectl explain:\n%s", out)
	}

	list, err := ctbs.List(ctx, metav1.ListOptions{FieldSelector: "spec.signerName=" + signer})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != prefix+"a" {
		t.Fatalf("list by signer: %v %+v", err, list)
	}
	out := mustKubectl(t, "", "get", "clustertrustbundles", "-l", "test="+suffix)
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		rows = append(rows, strings.Join(strings.Fields(l), " "))
	}
	if want := []string{"NAME SIGNERNAME", prefix + "a " + signer, "plain-" + suffix + " <none>"}; strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("kubectl get clustertrustbundles:\n%s", out)
	}
	// Every node may read bundles, for its pods' volumes.
	if res := runKubectl(t, "", "auth", "can-i", "list", "clustertrustbundles", "--as=system:node:n1", "--as-group=system:nodes"); strings.TrimSpace(res.Stdout) != "yes" {
		t.Errorf("a node may not list bundles: %q %q", res.Stdout, res.Stderr)
	}
}

// TestPodCertificateRequestAPI: a node asks for a certificate for a pod it
// runs, with the pod's, service account's and its own UIDs (anything else
// is refused by NodeRestriction); only a user with the sign verb for the
// signer may answer through /status, and the answer must match the
// request.
func TestPodCertificateRequestAPI(t *testing.T) {
	ctx := context.Background()
	ns := admissionNamespace(t, "pcr")
	signer := "e2e.example.com/pods-" + ns
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "pcr-node-" + ns}}
	node, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(ctx, node.Name, metav1.DeleteOptions{}) })
	pod := simplePod("web", corev1.ResourceRequirements{})
	pod.Spec.NodeName = node.Name
	pod, err = client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sa, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	request := func() *certificatesv1.PodCertificateRequest {
		return &certificatesv1.PodCertificateRequest{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "req-web-"},
			Spec: certificatesv1.PodCertificateRequestSpec{
				SignerName: signer, PodName: pod.Name, PodUID: pod.UID, ServiceAccountName: "default", ServiceAccountUID: sa.UID,
				NodeName: k8stypes.NodeName(node.Name), NodeUID: node.UID, StubPKCS10Request: stub,
			},
		}
	}
	nodeClient := clientAs(t, "system:node:"+node.Name, "system:nodes").CertificatesV1().PodCertificateRequests(ns)
	for _, tc := range []struct {
		name   string
		mutate func(*certificatesv1.PodCertificateRequest)
		want   string
	}{
		{"another node", func(p *certificatesv1.PodCertificateRequest) { p.Spec.NodeName = "elsewhere" }, `which is not the requesting node`},
		{"another pod UID", func(p *certificatesv1.PodCertificateRequest) { p.Spec.PodUID = "nope" }, `which is not the UID of pod "web"`},
		{"another service account UID", func(p *certificatesv1.PodCertificateRequest) { p.Spec.ServiceAccountUID = "nope" }, `which is not the UID of service account "default"`},
	} {
		p := request()
		tc.mutate(p)
		if _, err := nodeClient.Create(ctx, p, metav1.CreateOptions{}); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	pcr, err := nodeClient.Create(ctx, request(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *pcr.Spec.MaxExpirationSeconds != 86400 {
		t.Errorf("maxExpirationSeconds defaulted to %v", pcr.Spec.MaxExpirationSeconds)
	}
	if list, err := client.CertificatesV1().PodCertificateRequests(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node.Name}); err != nil || len(list.Items) != 1 {
		t.Fatalf("list by node: %v", err)
	}
	if out := mustKubectl(t, "", "get", "podcertificaterequests", "-n", ns); !strings.Contains(out, pcr.Name) {
		t.Errorf("kubectl get podcertificaterequests:\n%s", out)
	}

	// Signing: the sign verb for the signer decides.
	const signerUser = "pod-signer"
	clusterGrant(t, "pcr-test-status", []rbacv1.PolicyRule{
		{Verbs: []string{"get", "update"}, APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"podcertificaterequests", "podcertificaterequests/status"}},
	}, user(signerUser))
	ca := newTestCA(t, "pods")
	now := time.Now().Truncate(time.Second)
	issued := pcr.DeepCopy()
	issued.Status = certificatesv1.PodCertificateRequestStatus{
		Conditions:       []metav1.Condition{{Type: "Issued", Status: metav1.ConditionTrue, Reason: "Issued", LastTransitionTime: metav1.NewTime(now)}},
		CertificateChain: ca.issue(t, key.Public(), now, 2*time.Hour),
		NotBefore:        ptr.To(metav1.NewTime(now)), BeginRefreshAt: ptr.To(metav1.NewTime(now.Add(time.Hour))), NotAfter: ptr.To(metav1.NewTime(now.Add(2 * time.Hour))),
	}
	signerClient := clientAs(t, signerUser).CertificatesV1().PodCertificateRequests(ns)
	_, err = signerClient.UpdateStatus(ctx, issued, metav1.UpdateOptions{})
	want := `spec.signerName: Forbidden: User "pod-signer" is not permitted to "sign" for signer "` + signer + `"`
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("status without the sign verb: %v\nwant %s", err, want)
	}
	clusterGrant(t, "pcr-test-sign", []rbacv1.PolicyRule{
		{Verbs: []string{"sign"}, APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{signer}},
	}, user(signerUser))
	wrongKey := issued.DeepCopy()
	wrongKey.Status.CertificateChain = ca.issue(t, &newTestCA(t, "x").key.PublicKey, now, 2*time.Hour)
	if _, err := signerClient.UpdateStatus(ctx, wrongKey, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "leaf certificate was not issued to the requested public key") {
		t.Errorf("a certificate for another key: %v", err)
	}
	var done *certificatesv1.PodCertificateRequest
	eventually(t, 10*time.Second, func() error { // the new binding reaches the authorizer's cache
		done, err = signerClient.UpdateStatus(ctx, issued, metav1.UpdateOptions{})
		return err
	})
	if done.Status.CertificateChain != issued.Status.CertificateChain {
		t.Errorf("chain not stored")
	}
	again := done.DeepCopy()
	again.Status.Conditions[0].Message = "changed"
	if _, err := signerClient.UpdateStatus(ctx, again, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "immutable after PodCertificateRequest is issued") {
		t.Errorf("changing an issued request: %v", err)
	}
	spec := done.DeepCopy()
	spec.Spec.PodName = "other"
	if _, err := client.CertificatesV1().PodCertificateRequests(ns).Update(ctx, spec, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("changing the spec: %v", err)
	}
}

// TestPodCertificateRequestAPIOperations follows upstream's conformance
// test "should support PodCertificateRequest API operations": create, get,
// list, update and every kind of patch of the object's labels and of the
// status (server-side apply included), and deletion.
func TestPodCertificateRequestAPIOperations(t *testing.T) {
	ctx := context.Background()
	ns := admissionNamespace(t, "pcr-ops")
	pcrs := client.CertificatesV1().PodCertificateRequests(ns)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	notBefore := time.Now().Add(-time.Minute).Truncate(time.Second)
	notAfter := notBefore.Add(time.Hour)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "e2e.example.com"}, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	chain := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	now, refresh := time.Now(), notBefore.Add(15*time.Minute)

	create := func() *certificatesv1.PodCertificateRequest {
		t.Helper()
		pcr, err := pcrs.Create(ctx, &certificatesv1.PodCertificateRequest{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-example-pcr-"},
			Spec: certificatesv1.PodCertificateRequestSpec{
				SignerName: "example.com/e2e-" + ns, PodName: "test-pod", PodUID: "12345678-1234-1234-1234-123456789012",
				ServiceAccountName: "default", ServiceAccountUID: "12345678-1234-1234-1234-123456789013",
				NodeName: "test-node", NodeUID: "12345678-1234-1234-1234-123456789014", MaxExpirationSeconds: ptr.To[int32](86400),
				StubPKCS10Request: stub,
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return pcr
	}
	label := `{"metadata": {"labels": {"test.podcertificaterequest.example.com": "test"}}}`
	status := `{"status": {"certificateChain": ` + jsonString(chain) + `, "notBefore": "` + ts(notBefore) + `", "notAfter": "` + ts(notAfter) +
		`", "beginRefreshAt": "` + ts(refresh) + `", "conditions": [{"type": "Issued", "status": "True", "reason": "E2E", "message": "Issued by E2E test patch", "lastTransitionTime": "` + ts(now) + `"}]}}`
	jsonStatus := `[{"op": "add", "path": "/status/certificateChain", "value": ` + jsonString(chain) + `},
		{"op": "add", "path": "/status/notBefore", "value": "` + ts(notBefore) + `"},
		{"op": "add", "path": "/status/notAfter", "value": "` + ts(notAfter) + `"},
		{"op": "add", "path": "/status/beginRefreshAt", "value": "` + ts(refresh) + `"},
		{"op": "add", "path": "/status/conditions", "value": [{"type": "Issued", "status": "True", "reason": "E2E", "message": "m", "lastTransitionTime": "` + ts(now) + `"}]}]`
	withKind := func(patch string) string {
		return `{"apiVersion": "certificates.k8s.io/v1", "kind": "PodCertificateRequest", ` + strings.TrimPrefix(patch, "{")
	}
	for _, tc := range []struct {
		name  string
		pt    k8stypes.PatchType
		patch string
		sub   []string
	}{
		{"apply labels", k8stypes.ApplyPatchType, withKind(label), nil},
		{"strategic labels", k8stypes.StrategicMergePatchType, label, nil},
		{"merge labels", k8stypes.MergePatchType, label, nil},
		{"json labels", k8stypes.JSONPatchType, `[{"op": "add", "path": "/metadata/labels", "value": {"test.podcertificaterequest.example.com": "test"}}]`, nil},
		{"apply status", k8stypes.ApplyPatchType, withKind(status), []string{"status"}},
		{"strategic status", k8stypes.StrategicMergePatchType, status, []string{"status"}},
		{"merge status", k8stypes.MergePatchType, status, []string{"status"}},
		{"json status", k8stypes.JSONPatchType, jsonStatus, []string{"status"}},
	} {
		pcr := create()
		opts := metav1.PatchOptions{}
		if tc.pt == k8stypes.ApplyPatchType {
			opts.FieldManager = "e2e"
		}
		out, err := pcrs.Patch(ctx, pcr.Name, tc.pt, []byte(tc.patch), opts, tc.sub...)
		switch {
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.sub == nil && out.Labels["test.podcertificaterequest.example.com"] != "test":
			t.Errorf("%s: labels %v", tc.name, out.Labels)
		case tc.sub != nil && (out.Status.CertificateChain != chain || len(out.Status.Conditions) != 1):
			t.Errorf("%s: status %+v", tc.name, out.Status)
		}
	}

	pcr := create()
	pcr.Labels = map[string]string{"test.podcertificaterequest.example.com": "test"}
	if pcr, err = pcrs.Update(ctx, pcr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pcr.Status.CertificateChain = chain
	pcr.Status.NotBefore, pcr.Status.NotAfter, pcr.Status.BeginRefreshAt = ptr.To(metav1.NewTime(notBefore)), ptr.To(metav1.NewTime(notAfter)), ptr.To(metav1.NewTime(refresh))
	pcr.Status.Conditions = []metav1.Condition{{Type: "Issued", Status: metav1.ConditionTrue, Reason: "E2E", Message: "Issued by E2E test", LastTransitionTime: metav1.NewTime(now)}}
	if _, err := pcrs.UpdateStatus(ctx, pcr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if list, err := pcrs.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 9 {
		t.Fatalf("list: %v", err)
	}
	if err := pcrs.Delete(ctx, pcr.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pcrs.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if list, err := pcrs.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Fatalf("after deletecollection: %v", err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
