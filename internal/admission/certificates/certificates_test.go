package certificates

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/admissiontest"
)

// grants allows verb on signers/NAME for the names listed, per user.
type grants map[string][]string // "user verb" -> signer names

func (g grants) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetAPIGroup() != "certificates.k8s.io" || a.GetResource() != "signers" {
		return authorizer.DecisionNoOpinion, "", nil
	}
	for _, n := range g[a.GetUser().GetName()+" "+a.GetVerb()] {
		if n == a.GetName() {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}

var authz = grants{
	"approver approve": {"kubernetes.io/kube-apiserver-client"},
	"wild approve":     {"kubernetes.io/*"},
	"signer sign":      {"example.com/pods", "kubernetes.io/kube-apiserver-client"},
	"attester attest":  {"example.com/ca"},
}

var (
	csrGVR = certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests")
	ctbGVR = certificatesv1.SchemeGroupVersion.WithResource("clustertrustbundles")
	pcrGVR = certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests")
)

func csr(signer string) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "req"}, Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer}}
}

func TestApprovalAndSigning(t *testing.T) {
	signed := csr("kubernetes.io/kube-apiserver-client")
	signed.Status.Certificate = []byte("cert")
	for _, tc := range []struct {
		name     string
		plugin   admission.Validator
		user     string
		sub      string
		old, obj *certificatesv1.CertificateSigningRequest
		want     string // "" allowed
	}{
		{"approver of the signer", NewApproval(authz), "approver", "approval", csr("kubernetes.io/kube-apiserver-client"), csr("kubernetes.io/kube-apiserver-client"), ""},
		{"approver of another signer", NewApproval(authz), "approver", "approval", csr("kubernetes.io/kubelet-serving"), csr("kubernetes.io/kubelet-serving"),
			`certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kubelet-serving"`},
		{"domain wildcard", NewApproval(authz), "wild", "approval", csr("kubernetes.io/kubelet-serving"), csr("kubernetes.io/kubelet-serving"), ""},
		{"the stored signer counts", NewApproval(authz), "approver", "approval", csr("example.com/x"), csr("kubernetes.io/kube-apiserver-client"),
			`certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted to approve requests with signerName "example.com/x"`},
		{"approval plugin ignores status", NewApproval(authz), "nobody", "status", csr("example.com/x"), csr("example.com/x"), ""},
		{"status without a certificate change", NewSigning(authz), "nobody", "status", csr("example.com/x"), csr("example.com/x"), ""},
		{"certificate by a signer", NewSigning(authz), "signer", "status", csr("kubernetes.io/kube-apiserver-client"), signed, ""},
		{"certificate by someone else", NewSigning(authz), "approver", "status", csr("kubernetes.io/kube-apiserver-client"), signed,
			`certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted to sign requests with signerName "kubernetes.io/kube-apiserver-client"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.plugin.Validate(context.Background(), &admission.Attributes{
				Operation: admission.Update, Resource: csrGVR, Subresource: tc.sub, Name: "req",
				Object: tc.obj, OldObject: tc.old, UserName: tc.user,
			})
			check(t, err, tc.want)
		})
	}
}

func check(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("refused: %v", err)
	case want != "" && (err == nil || err.Error() != want):
		t.Errorf("got %v, want %s", err, want)
	}
}

func csrPEM(t *testing.T, subject pkix.Name) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestSubjectRestriction(t *testing.T) {
	masters := csr("kubernetes.io/kube-apiserver-client")
	masters.Spec.Request = csrPEM(t, pkix.Name{CommonName: "root", Organization: []string{"dev", "system:masters"}})
	other := masters.DeepCopy()
	other.Spec.SignerName = "example.com/anything"
	plain := masters.DeepCopy()
	plain.Spec.Request = csrPEM(t, pkix.Name{CommonName: "alice", Organization: []string{"dev"}})
	for _, tc := range []struct {
		name string
		obj  *certificatesv1.CertificateSigningRequest
		want string
	}{
		{"system:masters", masters, `certificatesigningrequests.certificates.k8s.io "req" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`},
		{"another signer", other, ""},
		{"another group", plain, ""},
	} {
		err := SubjectRestriction{}.Validate(context.Background(), &admission.Attributes{Operation: admission.Create, Resource: csrGVR, Object: tc.obj})
		check(t, err, tc.want)
	}
}

func TestAttest(t *testing.T) {
	bundle := func(signer string, owners ...string) *certificatesv1.ClusterTrustBundle {
		b := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: "x"}}
		for _, o := range owners {
			b.OwnerReferences = append(b.OwnerReferences, metav1.OwnerReference{Name: o})
		}
		return b
	}
	changed := bundle("example.com/ca")
	changed.Spec.TrustBundle = "y"
	for _, tc := range []struct {
		name     string
		op       admission.Operation
		user     string
		obj, old *certificatesv1.ClusterTrustBundle
		want     string
	}{
		{"no signer", admission.Create, "nobody", bundle(""), nil, ""},
		{"attester", admission.Create, "attester", bundle("example.com/ca"), nil, ""},
		{"not an attester", admission.Create, "nobody", bundle("example.com/ca"), nil,
			`clustertrustbundles.certificates.k8s.io "b" is forbidden: user not permitted to attest for signerName "example.com/ca"`},
		{"owner references only", admission.Update, "nobody", bundle("example.com/ca", "gc"), bundle("example.com/ca"), ""},
		{"content", admission.Update, "nobody", changed, bundle("example.com/ca"),
			`clustertrustbundles.certificates.k8s.io "b" is forbidden: user not permitted to attest for signerName "example.com/ca"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: tc.op, Resource: ctbGVR, Name: "b", Object: tc.obj, UserName: tc.user}
			if tc.old != nil {
				a.OldObject = tc.old
			}
			check(t, NewAttest(authz).Validate(context.Background(), a), tc.want)
		})
	}
}

func TestPodCertificateSigning(t *testing.T) {
	old := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/pods"}}
	issued := old.DeepCopy()
	issued.Status.CertificateChain = "chain"
	for _, tc := range []struct {
		user string
		obj  *certificatesv1.PodCertificateRequest
		want bool
	}{
		{"signer", issued, true},
		{"nobody", issued, false},
		{"nobody", old.DeepCopy(), true},
	} {
		err := NewPodCertificateSigning(authz).Validate(context.Background(), &admission.Attributes{
			Operation: admission.Update, Resource: pcrGVR, Subresource: "status", Object: tc.obj, OldObject: old, UserName: tc.user,
		})
		if (err == nil) != tc.want {
			t.Errorf("%s: %v", tc.user, err)
		}
		if err != nil && (!apierrors.IsInvalid(err) || err.Error() != `PodCertificateRequest.certificates.k8s.io "r" is invalid: spec.signerName: Forbidden: User "nobody" is not permitted to "sign" for signer "example.com/pods"`) {
			t.Errorf("refusal: %v", err)
		}
	}
}

func TestNodePodCertificates(t *testing.T) {
	objects := admissiontest.New().
		Add(nodesGVR, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "n1-uid"}}).
		Add(podsGVR, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "pod-uid"}, Spec: corev1.PodSpec{NodeName: "n1", ServiceAccountName: "robot"}}).
		Add(podsGVR, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "ns", UID: "e-uid"}, Spec: corev1.PodSpec{NodeName: "n2", ServiceAccountName: "robot"}}).
		Add(serviceAccountsGVR, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "ns", UID: "sa-uid"}})
	good := certificatesv1.PodCertificateRequestSpec{PodName: "web", PodUID: "pod-uid", ServiceAccountName: "robot", ServiceAccountUID: "sa-uid", NodeName: "n1", NodeUID: "n1-uid"}
	for _, tc := range []struct {
		name   string
		user   string
		mutate func(*certificatesv1.PodCertificateRequestSpec)
		want   string // "" allowed
	}{
		{"own pod", "system:node:n1", func(*certificatesv1.PodCertificateRequestSpec) {}, ""},
		{"not a node", "alice", func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeName = "n9" }, ""},
		{"another node's name", "system:node:n1", func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeName = "n2" },
			`PodCertificateRequest.Spec.NodeName="n2", which is not the requesting node "n1"`},
		{"node UID", "system:node:n1", func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeUID = "x" }, "which is not the UID of the requesting node"},
		{"pod elsewhere", "system:node:n1", func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName, s.PodUID = "elsewhere", "e-uid" },
			`pod "elsewhere" is not bound to the requesting node "n1"`},
		{"pod UID", "system:node:n1", func(s *certificatesv1.PodCertificateRequestSpec) { s.PodUID = "x" }, `which is not the UID of pod "web"`},
		{"service account", "system:node:n1", func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountName = "default" }, "which is not the service account of pod"},
		{"service account UID", "system:node:n1", func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountUID = "x" }, "which is not the UID of service account"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, Spec: good}
			tc.mutate(&pcr.Spec)
			groups := []string{"system:authenticated"}
			if tc.user != "alice" {
				groups = append(groups, "system:nodes")
			}
			err := NewNodePodCertificates(objects).Validate(context.Background(), &admission.Attributes{
				Operation: admission.Create, Resource: pcrGVR, Namespace: "ns", Object: pcr, UserName: tc.user, Groups: groups,
			})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
