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
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// newCSR is a request for subject from a fresh key, returned with the
// key in PEM.
func newCSR(t *testing.T, subject pkix.Name, dnsNames ...string) (request, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, DNSNames: dnsNames}, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// clusterGrant gives subjects a cluster role of rules for the test.
func clusterGrant(t *testing.T, name string, rules []rbacv1.PolicyRule, subjects ...rbacv1.Subject) {
	t.Helper()
	ctx := context.Background()
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   subjects,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = client.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	})
}

// clientAs is a client that impersonates name in groups.
func clientAs(t *testing.T, name string, groups ...string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(restCfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name, Groups: groups}
	return kubernetes.NewForConfigOrDie(cfg)
}

func waitForCertificate(t *testing.T, name string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	var csr *certificatesv1.CertificateSigningRequest
	eventually(t, 30*time.Second, func() error {
		var err error
		if csr, err = client.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		if len(csr.Status.Certificate) == 0 {
			return fmt.Errorf("not signed yet: %+v", csr.Status.Conditions)
		}
		return nil
	})
	return csr
}

// TestCSRClientCertificate follows upstream's "should support building a
// client with a CSR": a user asks for a kube-apiserver-client
// certificate, someone without the approve verb cannot approve it (403),
// an administrator approves it with kubectl, the csrsigning controller
// signs it for the requested hour, and the certificate authenticates as
// the requested user and groups.
func TestCSRClientCertificate(t *testing.T) {
	ctx := context.Background()
	const requestor, approver, intruder = "csr-requestor", "csr-approver", "csr-intruder"
	clusterGrant(t, "csr-test-create", []rbacv1.PolicyRule{
		{Verbs: []string{"create", "get"}, APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}},
	}, user(requestor))
	// The intruder may write /approval, but holds no signer.
	clusterGrant(t, "csr-test-intruder", []rbacv1.PolicyRule{
		{Verbs: []string{"get", "update"}, APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests", "certificatesigningrequests/approval"}},
	}, user(intruder))
	// The approver holds every kubernetes.io signer through the wildcard.
	clusterGrant(t, "csr-test-approver", []rbacv1.PolicyRule{
		{Verbs: []string{"get", "update"}, APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests", "certificatesigningrequests/approval"}},
		{Verbs: []string{"approve"}, APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{"kubernetes.io/*"}},
	}, user(approver))

	request, keyPEM := newCSR(t, pkix.Name{CommonName: "tester-csr", Organization: []string{"csr-testers"}})
	csr, err := clientAs(t, requestor, "csr-requestors").CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "tester-csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: request, SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
			ExpirationSeconds: ptr.To[int32](3600),
			// Whatever a client claims, the server records who asks.
			Username: "system:admin", Groups: []string{"system:masters"},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{})
	})
	if csr.Spec.Username != requestor || !slices.Equal(csr.Spec.Groups, []string{"csr-requestors", "system:authenticated"}) {
		t.Errorf("requestor: %q %v, want %q [csr-requestors system:authenticated]", csr.Spec.Username, csr.Spec.Groups, requestor)
	}
	if len(csr.Status.Conditions) != 0 {
		t.Errorf("a new request has conditions: %+v", csr.Status.Conditions)
	}

	// kubectl's table, while pending.
	out := mustKubectl(t, "", "get", "csr", csr.Name)
	if !strings.Contains(out, "NAME") || !strings.Contains(out, "SIGNERNAME") || !strings.Contains(out, "REQUESTEDDURATION") ||
		!strings.Contains(out, "kubernetes.io/kube-apiserver-client   "+requestor+"   60m                 Pending") {
		t.Errorf("kubectl get csr:\n%s", out)
	}

	// Without the approve verb: upstream's admission refusal; without
	// /approval at all: the authorizer's.
	res := runKubectl(t, "", "--as="+intruder, "certificate", "approve", csr.Name)
	want := `Error from server (Forbidden): certificatesigningrequests.certificates.k8s.io "` + csr.Name + `" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`
	if res.Code == 0 || strings.TrimSpace(res.Stderr) != want {
		t.Errorf("approval without the approve verb: exit %d, stderr %q\nwant %q", res.Code, res.Stderr, want)
	}
	res = runKubectl(t, "", "--as="+requestor, "certificate", "approve", csr.Name)
	if res.Code == 0 || !strings.Contains(res.Stderr, `User "`+requestor+`" cannot update resource "certificatesigningrequests/approval" in API group "certificates.k8s.io" at the cluster scope`) {
		t.Errorf("approval without /approval: exit %d, stderr %q", res.Code, res.Stderr)
	}
	// Nor can status carry an approval in.
	got, _ := client.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
	got.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Sneaky"}}
	if _, err := client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, got, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), `updates may not add a condition of type "Approved"`) {
		t.Errorf("approval through /status: %v", err)
	}

	out = mustKubectl(t, "", "--as="+approver, "certificate", "approve", csr.Name)
	if strings.TrimSpace(out) != "certificatesigningrequest.certificates.k8s.io/"+csr.Name+" approved" {
		t.Errorf("kubectl certificate approve: %q", out)
	}
	csr = waitForCertificate(t, csr.Name)
	if c := csr.Status.Conditions[0]; c.Type != certificatesv1.CertificateApproved || c.Reason != "KubectlApprove" || c.LastUpdateTime.IsZero() {
		t.Errorf("approval condition: %+v", c)
	}
	block, _ := pem.Decode(csr.Status.Certificate)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if d := cert.NotAfter.Sub(cert.NotBefore); d > time.Hour+5*time.Minute {
		t.Errorf("certificate valid for %v, asked for an hour", d)
	}
	out = mustKubectl(t, "", "get", "csr", csr.Name)
	if !strings.Contains(out, "Approved,Issued") {
		t.Errorf("kubectl get csr after signing:\n%s", out)
	}

	// The certificate is a client certificate of the cluster.
	cfg := rest.AnonymousClientConfig(restCfg)
	cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.KeyData = csr.Status.Certificate, keyPEM
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := review.Status.UserInfo; u.Username != "tester-csr" || !slices.Equal(u.Groups, []string{"csr-testers", "system:authenticated"}) {
		t.Errorf("the certificate authenticates as %q %v", u.Username, u.Groups)
	}
}

// TestCSRDeniedAndRefused: a denied request is never signed and cannot be
// approved afterwards; a request for system:masters is refused at
// creation; a request the signer refuses gets a Failed condition.
func TestCSRDeniedAndRefused(t *testing.T) {
	ctx := context.Background()
	csrs := client.CertificatesV1().CertificateSigningRequests()
	create := func(subject pkix.Name, usages ...certificatesv1.KeyUsage) (*certificatesv1.CertificateSigningRequest, error) {
		request, _ := newCSR(t, subject)
		csr, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "refused-"},
			Spec:       certificatesv1.CertificateSigningRequestSpec{Request: request, SignerName: certificatesv1.KubeAPIServerClientSignerName, Usages: usages},
		}, metav1.CreateOptions{})
		if err == nil {
			t.Cleanup(func() { _ = csrs.Delete(ctx, csr.Name, metav1.DeleteOptions{}) })
		}
		return csr, err
	}

	denied, err := create(pkix.Name{CommonName: "denied"}, certificatesv1.UsageClientAuth)
	if err != nil {
		t.Fatal(err)
	}
	if out := mustKubectl(t, "", "certificate", "deny", denied.Name); !strings.Contains(out, "denied") {
		t.Errorf("kubectl certificate deny: %q", out)
	}
	// kubectl refuses to approve it; the server too.
	if res := runKubectl(t, "", "certificate", "approve", denied.Name); res.Code == 0 {
		t.Errorf("kubectl approved a denied request: %q", res.Stdout)
	}
	d, err := csrs.Get(ctx, denied.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status.Conditions = append(d.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue})
	if _, err := csrs.UpdateApproval(ctx, d.Name, d, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "Approved and Denied conditions are mutually exclusive") {
		t.Errorf("approving a denied request: %v", err)
	}
	if out := mustKubectl(t, "", "get", "csr", denied.Name); !strings.Contains(out, "Denied") {
		t.Errorf("kubectl get csr: %q", out)
	}

	_, err = create(pkix.Name{CommonName: "root", Organization: []string{"system:masters"}}, certificatesv1.UsageClientAuth)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed") {
		t.Errorf("system:masters request: %v", err)
	}

	failed, err := create(pkix.Name{CommonName: "server"}, certificatesv1.UsageServerAuth)
	if err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, "", "certificate", "approve", failed.Name)
	eventually(t, 30*time.Second, func() error {
		got, err := csrs.Get(ctx, failed.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == certificatesv1.CertificateFailed {
				if c.Reason != "SignerValidationFailure" || c.Message != "invalid usage for client certificate: server auth" || len(got.Status.Certificate) != 0 {
					return fmt.Errorf("unexpected failure %+v", got.Status)
				}
				return nil
			}
		}
		return fmt.Errorf("no Failed condition: %+v", got.Status.Conditions)
	})
	if out := mustKubectl(t, "", "get", "csr", failed.Name); !strings.Contains(out, "Approved,Failed") {
		t.Errorf("kubectl get csr: %q", out)
	}

	// By now the signer has long acted on the approvals around it.
	got, err := csrs.Get(ctx, denied.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Certificate) != 0 {
		t.Error("a denied request was signed")
	}
}

// TestCSRAPIOperations follows upstream's conformance test "should
// support CSR API operations": discovery, create, get, list and watch by
// signer, patch and update of the object, /approval and /status.
func TestCSRAPIOperations(t *testing.T) {
	ctx := context.Background()
	csrClient := client.CertificatesV1().CertificateSigningRequests()
	signer := "example.com/e2e-" + fmt.Sprint(time.Now().UnixNano())
	request, _ := newCSR(t, pkix.Name{CommonName: "e2e.example.com"}, "e2e.example.com")
	template := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-example-csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: request, SignerName: signer, ExpirationSeconds: ptr.To[int32](3600),
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth},
		},
	}

	resources, err := client.Discovery().ServerResourcesForGroupVersion("certificates.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range resources.APIResources {
		names = append(names, r.Name)
	}
	for _, want := range []string{"certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status",
		"clustertrustbundles", "podcertificaterequests", "podcertificaterequests/status"} {
		if !slices.Contains(names, want) {
			t.Errorf("discovery lacks %s: %v", want, names)
		}
	}

	for range 2 {
		if _, err := csrClient.Create(ctx, template, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	created, err := csrClient.Create(ctx, template, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gotten, err := csrClient.Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil || gotten.UID != created.UID || *gotten.Spec.ExpirationSeconds != 3600 {
		t.Fatalf("get: %v %+v", err, gotten)
	}
	list, err := csrClient.List(ctx, metav1.ListOptions{FieldSelector: "spec.signerName=" + signer})
	if err != nil || len(list.Items) != 3 {
		t.Fatalf("list by signer: %v, %d items", err, len(list.Items))
	}
	w, err := csrClient.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, FieldSelector: "metadata.name=" + created.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	patched, err := csrClient.Patch(ctx, created.Name, types.MergePatchType, []byte(`{"metadata":{"annotations":{"patched":"true"}}}`), metav1.PatchOptions{})
	if err != nil || patched.Annotations["patched"] != "true" {
		t.Fatalf("patch: %v", err)
	}
	toUpdate := patched.DeepCopy()
	toUpdate.Annotations["updated"] = "true"
	if updated, err := csrClient.Update(ctx, toUpdate, metav1.UpdateOptions{}); err != nil || updated.Annotations["updated"] != "true" {
		t.Fatalf("update: %v", err)
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Modified {
			t.Errorf("watch event %v", ev.Type)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}

	dyn := dynamic.NewForConfigOrDie(restCfg)
	gvr := certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests")
	for _, sub := range []string{"approval", "status"} {
		u, err := dyn.Resource(gvr).Get(ctx, created.Name, metav1.GetOptions{}, sub)
		if err != nil || u.GetKind() != "CertificateSigningRequest" || u.GetUID() != created.UID {
			t.Fatalf("get /%s: %v %v", sub, err, u)
		}
	}
	patchedApproval, err := csrClient.Patch(ctx, created.Name, types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"patchedapproval":"true"}},"status":{"conditions":[{"type":"ApprovalPatch","status":"True","reason":"e2e"}]}}`),
		metav1.PatchOptions{}, "approval")
	if err != nil || len(patchedApproval.Status.Conditions) != 1 || patchedApproval.Status.Conditions[0].Type != "ApprovalPatch" || patchedApproval.Annotations["patchedapproval"] != "true" {
		t.Fatalf("patch /approval: %v %+v", err, patchedApproval)
	}
	toApprove := patchedApproval.DeepCopy()
	toApprove.Status.Conditions = append(toApprove.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "E2E", Message: "Set from an e2e test",
	})
	approvedCSR, err := csrClient.UpdateApproval(ctx, toApprove.Name, toApprove, metav1.UpdateOptions{})
	if err != nil || len(approvedCSR.Status.Conditions) != 2 || approvedCSR.Status.Conditions[1].Type != certificatesv1.CertificateApproved {
		t.Fatalf("update /approval: %v %+v", err, approvedCSR)
	}

	certPEM := selfSigned(t)
	certJSON, _ := json.Marshal(certPEM)
	patchedStatus, err := csrClient.Patch(ctx, created.Name, types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"patchedstatus":"true"}},"status":{"certificate":`+string(certJSON)+`}}`), metav1.PatchOptions{}, "status")
	if err != nil || string(patchedStatus.Status.Certificate) != string(certPEM) || patchedStatus.Annotations["patchedstatus"] != "true" {
		t.Fatalf("patch /status: %v", err)
	}
	toStatus := patchedStatus.DeepCopy()
	toStatus.Status.Conditions = append(toStatus.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: "StatusUpdate", Status: corev1.ConditionTrue, Reason: "E2E", Message: "Set from an e2e test",
	})
	updatedStatus, err := csrClient.UpdateStatus(ctx, toStatus, metav1.UpdateOptions{})
	if err != nil || len(updatedStatus.Status.Conditions) != 3 || updatedStatus.Status.Conditions[2].Type != "StatusUpdate" {
		t.Fatalf("update /status: %v %+v", err, updatedStatus)
	}

	if err := csrClient.Delete(ctx, created.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := csrClient.Get(ctx, created.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
	if err := csrClient.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "spec.signerName=" + signer}); err != nil {
		t.Fatal(err)
	}
	if list, err := csrClient.List(ctx, metav1.ListOptions{FieldSelector: "spec.signerName=" + signer}); err != nil || len(list.Items) != 0 {
		t.Fatalf("after deletecollection: %v, %d items", err, len(list.Items))
	}
}

func selfSigned(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e.example.com"}, DNSNames: []string{"e2e.example.com"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
