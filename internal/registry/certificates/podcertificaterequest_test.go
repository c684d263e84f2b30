package certificates

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509/pkix"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func validPCR(t *testing.T) (*certificatesv1.PodCertificateRequest, any) {
	key := newKey(t)
	return &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "pcr", Namespace: "ns"},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: "example.com/pods", PodName: "web", PodUID: "pod-uid",
			ServiceAccountName: "default", ServiceAccountUID: "sa-uid", NodeName: "node1", NodeUID: "node-uid",
			MaxExpirationSeconds: ptr.To[int32](86400),
			StubPKCS10Request:    csrDER(t, key, pkix.Name{}),
		},
	}, &key.PublicKey
}

func TestValidatePCR(t *testing.T) {
	rsa2048, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*certificatesv1.PodCertificateRequest)
		want   []wantErr
	}{
		{"valid", func(*certificatesv1.PodCertificateRequest) {}, nil},
		{"names and UIDs", func(p *certificatesv1.PodCertificateRequest) {
			p.Spec.PodName, p.Spec.PodUID, p.Spec.NodeUID = "Web", "", "x"
		}, []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.podName", Detail: ""}, {Type: field.ErrorTypeInvalid, Field: "spec.podUID", Detail: "must not be empty"}}},
		{"no signer", func(p *certificatesv1.PodCertificateRequest) { p.Spec.SignerName = "" },
			[]wantErr{{Type: field.ErrorTypeRequired, Field: "spec.signerName", Detail: ""}}},
		{"no lifetime", func(p *certificatesv1.PodCertificateRequest) { p.Spec.MaxExpirationSeconds = nil },
			[]wantErr{{Type: field.ErrorTypeRequired, Field: "spec.maxExpirationSeconds", Detail: "must be set"}}},
		{"lifetime too short", func(p *certificatesv1.PodCertificateRequest) { p.Spec.MaxExpirationSeconds = ptr.To[int32](3599) },
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.maxExpirationSeconds", Detail: "must be in the range [3600, 7862400]"}}},
		{"kubernetes signer, two days", func(p *certificatesv1.PodCertificateRequest) {
			p.Spec.SignerName, p.Spec.MaxExpirationSeconds = "kubernetes.io/kube-apiserver-client-pod", ptr.To[int32](2*86400)
		}, []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.maxExpirationSeconds", Detail: "must be in the range [3600, 86400]"}}},
		{"stub not PKCS#10", func(p *certificatesv1.PodCertificateRequest) { p.Spec.StubPKCS10Request = []byte("junk") },
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.stubPKCS10Request", Detail: "must be a valid DER-encoded PKCS#10 certificate request"}}},
		{"RSA 2048", func(p *certificatesv1.PodCertificateRequest) {
			p.Spec.StubPKCS10Request = csrDER(t, rsa2048, pkix.Name{})
		},
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.stubPKCS10Request", Detail: "RSA keys must have modulus size 3072 or 4096"}}},
		{"annotation without domain", func(p *certificatesv1.PodCertificateRequest) {
			p.Spec.UnverifiedUserAnnotations = map[string]string{"example.com/ok": "1", "plain": "2"}
		}, []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.unverifiedUserAnnotations", Detail: `must be a domain-prefixed key (such as "acme.io/foo")`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := validPCR(t)
			tc.mutate(p)
			checkErrs(t, validatePCR(p), tc.want)
		})
	}
}

func TestValidatePCRStatusUpdate(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	old, pub := validPCR(t)
	chain := string(certFor(t, pub, false, now, 2*time.Hour))
	issued := func(chain string, nb, refresh, na time.Time) certificatesv1.PodCertificateRequestStatus {
		return certificatesv1.PodCertificateRequestStatus{
			Conditions:       []metav1.Condition{{Type: "Issued", Status: metav1.ConditionTrue, Reason: "Issued", LastTransitionTime: metav1.NewTime(now)}},
			CertificateChain: chain,
			NotBefore:        ptr.To(metav1.NewTime(nb)), BeginRefreshAt: ptr.To(metav1.NewTime(refresh)), NotAfter: ptr.To(metav1.NewTime(na)),
		}
	}
	denied := certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{Type: "Denied", Status: metav1.ConditionTrue, Reason: "UnsupportedKeyType", LastTransitionTime: metav1.NewTime(now)}}}
	for _, tc := range []struct {
		name   string
		old    certificatesv1.PodCertificateRequestStatus
		status certificatesv1.PodCertificateRequestStatus
		want   []wantErr
	}{
		{"issued", certificatesv1.PodCertificateRequestStatus{}, issued(chain, now, now.Add(time.Hour), now.Add(2*time.Hour)), nil},
		{"issued to another key", certificatesv1.PodCertificateRequestStatus{},
			issued(string(certFor(t, &newKey(t).PublicKey, false, now, 2*time.Hour)), now, now.Add(time.Hour), now.Add(2*time.Hour)),
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "status.certificateChain", Detail: "leaf certificate was not issued to the requested public key"}}},
		{"notAfter differs from the certificate", certificatesv1.PodCertificateRequestStatus{}, issued(chain, now, now.Add(time.Hour), now.Add(3*time.Hour)),
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "status.notAfter", Detail: "must be set to the NotAfter time encoded in the leaf certificate"}}},
		{"refresh too late", certificatesv1.PodCertificateRequestStatus{}, issued(chain, now, now.Add(2*time.Hour-5*time.Minute), now.Add(2*time.Hour)),
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "status.beginRefreshAt", Detail: "must be at least 10 minutes before status.notAfter"}}},
		{"lifetime under an hour", certificatesv1.PodCertificateRequestStatus{},
			issued(string(certFor(t, pub, false, now, 30*time.Minute)), now, now.Add(10*time.Minute), now.Add(30*time.Minute)),
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "status.certificateChain", Detail: "leaf certificate lifetime must be >= 1 hour"}}},
		{"denied", certificatesv1.PodCertificateRequestStatus{}, denied, nil},
		{"denied with a chain", certificatesv1.PodCertificateRequestStatus{}, func() certificatesv1.PodCertificateRequestStatus {
			s := denied.DeepCopy()
			s.CertificateChain = chain
			return *s
		}(), []wantErr{{Type: field.ErrorTypeInvalid, Field: "status", Detail: "non-condition status fields must be empty when denying or failing the PodCertificateRequest"}}},
		{"issued after denial", denied, issued(chain, now, now.Add(time.Hour), now.Add(2*time.Hour)),
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "status", Detail: "immutable after PodCertificateRequest is issued, denied, or failed"}}},
		{"unknown condition", certificatesv1.PodCertificateRequestStatus{}, certificatesv1.PodCertificateRequestStatus{
			Conditions: []metav1.Condition{{Type: "Pending", Status: metav1.ConditionTrue, Reason: "Wait", LastTransitionTime: metav1.NewTime(now)}},
		}, []wantErr{{Type: field.ErrorTypeNotSupported, Field: "status.conditions[0].type", Detail: ""}}},
		{"chain without condition", certificatesv1.PodCertificateRequestStatus{}, certificatesv1.PodCertificateRequestStatus{CertificateChain: chain},
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "status", Detail: `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := old.DeepCopy()
			o.Status = tc.old
			p := o.DeepCopy()
			p.Status = tc.status
			checkErrs(t, ValidatePCRStatusUpdate(p, o, now), tc.want)
		})
	}
}

func TestPCRSpecImmutable(t *testing.T) {
	old, _ := validPCR(t)
	p := old.DeepCopy()
	p.Spec.PodName = "other"
	checkErrs(t, validatePCRUpdate(p, old), []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec", Detail: "field is immutable"}})
}
