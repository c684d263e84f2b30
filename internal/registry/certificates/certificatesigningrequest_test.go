package certificates

import (
	"crypto/x509/pkix"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/utils/ptr"
)

func validCSR(t *testing.T) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    csrPEM(t, newKey(t), pkix.Name{CommonName: "alice"}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
}

func approved(reason string) certificatesv1.CertificateSigningRequestCondition {
	return certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: reason}
}

func TestValidateCSR(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*certificatesv1.CertificateSigningRequest)
		want   []wantErr
	}{
		{"valid", func(*certificatesv1.CertificateSigningRequest) {}, nil},
		{"request not PEM", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = []byte("junk") },
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.request", Detail: "PEM block type must be CERTIFICATE REQUEST"}}},
		{"request signature broken", func(c *certificatesv1.CertificateSigningRequest) {
			der := csrDER(t, newKey(t), pkix.Name{CommonName: "alice"})
			der[len(der)-3] ^= 0xff
			c.Spec.Request = pemBlock("CERTIFICATE REQUEST", der)
		}, []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.request", Detail: ""}}},
		{"no usages", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = nil },
			[]wantErr{{Type: field.ErrorTypeRequired, Field: "spec.usages", Detail: ""}}},
		{"unknown and duplicate usages", func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = []certificatesv1.KeyUsage{"client auth", "flying", "client auth"}
		}, []wantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.usages[1]", Detail: ""}, {Type: field.ErrorTypeDuplicate, Field: "spec.usages[2]", Detail: ""}}},
		{"no signer", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "" },
			[]wantErr{{Type: field.ErrorTypeRequired, Field: "spec.signerName", Detail: ""}}},
		{"signer without path", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example.com" },
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.signerName", Detail: "must be a fully qualified domain and path of the form 'example.com/signer-name'"}}},
		{"signer with a one-label domain", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example/signer" },
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.signerName", Detail: "should be a domain with at least two segments separated by dots"}}},
		{"legacy signer", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "kubernetes.io/legacy-unknown" },
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.signerName", Detail: "the legacy signerName is not allowed via this API version"}}},
		{"custom signer", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example.com/e2e-ns.name" }, nil},
		{"short duration", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.ExpirationSeconds = ptr.To[int32](599) },
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.expirationSeconds", Detail: "may not specify a duration less than 600 seconds (10 minutes)"}}},
		{"ten minutes", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.ExpirationSeconds = ptr.To[int32](600) }, nil},
		{"approved and denied", func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved("a"),
				{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue}}
		}, []wantErr{{Type: field.ErrorTypeInvalid, Field: "status.conditions[1].type", Detail: "Approved and Denied conditions are mutually exclusive"}}},
		{"approved False", func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionFalse}}
		}, []wantErr{{Type: field.ErrorTypeNotSupported, Field: "status.conditions[0].status", Detail: ""}}},
		{"custom condition False, twice", func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: "Custom", Status: corev1.ConditionFalse}, {Type: "Custom", Status: corev1.ConditionTrue}}
		}, []wantErr{{Type: field.ErrorTypeDuplicate, Field: "status.conditions[1].type", Detail: ""}}},
		{"certificate not PEM", func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = []byte("junk") },
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "status.certificate", Detail: "must contain at least one CERTIFICATE PEM block"}}},
		{"certificate of the wrong block type", func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = c.Spec.Request },
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "status.certificate", Detail: `only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			csr := validCSR(t)
			tc.mutate(csr)
			checkErrs(t, validateCSR(csr), tc.want)
		})
	}
}

func TestCSRRequestorFromUser(t *testing.T) {
	csr := validCSR(t)
	csr.Spec.Username, csr.Spec.Groups = "mallory", []string{"system:masters"}
	prepareCSRForCreateBy(csr, &user.DefaultInfo{Name: "alice", UID: "u1", Groups: []string{"dev", "system:authenticated"}, Extra: map[string][]string{"scope": {"a"}}})
	if csr.Spec.Username != "alice" || csr.Spec.UID != "u1" || len(csr.Spec.Groups) != 2 || csr.Spec.Extra["scope"][0] != "a" {
		t.Errorf("requestor not taken from the user: %+v", csr.Spec)
	}
	prepareCSRForCreateBy(csr, nil)
	if csr.Spec.Username != "" || csr.Spec.Groups != nil || csr.Spec.Extra != nil {
		t.Errorf("a write without user kept a requestor: %+v", csr.Spec)
	}
}

// TestCSRUpdatePaths checks what each write path may change: approval
// conditions only through /approval, the certificate only through
// /status, and never removal of a terminal condition.
func TestCSRUpdatePaths(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	nowFunc = func() metav1.Time { return now }
	t.Cleanup(func() { nowFunc = metav1.Now })

	base := validCSR(t)
	cert := certFor(t, &newKey(t).PublicKey, false, time.Now(), time.Hour)
	withApproval := base.DeepCopy()
	withApproval.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved("ok")}

	// Through the object, status and spec changes are dropped, so only
	// metadata changes.
	upd := withApproval.DeepCopy()
	upd.Spec.SignerName = "example.com/other"
	upd.Status = certificatesv1.CertificateSigningRequestStatus{}
	upd.Labels = map[string]string{"a": "b"}
	prepareCSRForUpdate(upd, withApproval)
	if upd.Spec.SignerName != base.Spec.SignerName || len(upd.Status.Conditions) != 1 || upd.Labels["a"] != "b" {
		t.Errorf("main update: %+v", upd)
	}

	// /approval adds a condition, stamped now; the spec and the
	// certificate are kept.
	appr := base.DeepCopy()
	appr.Spec.Usages = nil
	appr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Reason: "KubectlApprove"}}
	appr.Status.Certificate = cert
	prepareCSRForApprovalUpdate(appr, base)
	if len(appr.Spec.Usages) != 2 || appr.Status.Certificate != nil {
		t.Errorf("approval wrote more than conditions: %+v", appr)
	}
	if c := appr.Status.Conditions[0]; c.Status != corev1.ConditionTrue || !c.LastUpdateTime.Equal(&now) || !c.LastTransitionTime.Equal(&now) {
		t.Errorf("approval condition not defaulted and stamped: %+v", c)
	}
	checkErrs(t, validateCSRApprovalUpdate(appr, base), nil)

	// /status cannot add or change approval; its attempt is undone.
	st := base.DeepCopy()
	st.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved("sneaky")}
	prepareCSRForStatusUpdate(st, base)
	checkErrs(t, validateCSRStatusUpdate(st, base), []wantErr{{Type: field.ErrorTypeForbidden, Field: "status.conditions", Detail: `updates may not add a condition of type "Approved"`}})
	st = withApproval.DeepCopy()
	st.Status.Conditions[0].Reason = "changed"
	prepareCSRForStatusUpdate(st, withApproval)
	if st.Status.Conditions[0].Reason != "ok" {
		t.Errorf("status write changed an approval condition: %+v", st.Status.Conditions[0])
	}

	for _, tc := range []struct {
		name     string
		validate func(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList
		old      *certificatesv1.CertificateSigningRequest
		mutate   func(*certificatesv1.CertificateSigningRequest)
		want     []wantErr
	}{
		{"status sets the certificate", validateCSRStatusUpdate, withApproval, func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = cert }, nil},
		{"status changes a certificate", validateCSRStatusUpdate, withCert(withApproval, cert), func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Certificate = certFor(t, &newKey(t).PublicKey, false, time.Now(), time.Hour)
		}, []wantErr{{Type: field.ErrorTypeForbidden, Field: "status.certificate", Detail: "updates may not modify existing certificate content"}}},
		{"approval sets the certificate", validateCSRApprovalUpdate, withApproval, func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = cert },
			[]wantErr{{Type: field.ErrorTypeForbidden, Field: "status.certificate", Detail: "updates may not set certificate content"}}},
		{"object sets the certificate", validateCSRUpdate, withApproval, func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = cert },
			[]wantErr{{Type: field.ErrorTypeForbidden, Field: "status.certificate", Detail: "updates may not set certificate content"}}},
		{"approval removes approval", validateCSRApprovalUpdate, withApproval, func(c *certificatesv1.CertificateSigningRequest) { c.Status.Conditions = nil },
			[]wantErr{{Type: field.ErrorTypeForbidden, Field: "status.conditions", Detail: `updates may not remove a condition of type "Approved"`}}},
		{"status adds a failure", validateCSRStatusUpdate, withApproval, func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue})
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			csr := tc.old.DeepCopy()
			tc.mutate(csr)
			checkErrs(t, tc.validate(csr, tc.old), tc.want)
		})
	}
}

func withCert(csr *certificatesv1.CertificateSigningRequest, cert []byte) *certificatesv1.CertificateSigningRequest {
	out := csr.DeepCopy()
	out.Status.Certificate = cert
	return out
}

func TestCSRCondition(t *testing.T) {
	for _, tc := range []struct {
		conditions []certificatesv1.RequestConditionType
		issued     bool
		want       string
	}{
		{nil, false, "Pending"},
		{[]certificatesv1.RequestConditionType{"Approved"}, false, "Approved"},
		{[]certificatesv1.RequestConditionType{"Approved"}, true, "Approved,Issued"},
		{[]certificatesv1.RequestConditionType{"Approved", "Failed"}, false, "Approved,Failed"},
		{[]certificatesv1.RequestConditionType{"Denied"}, false, "Denied"},
		{[]certificatesv1.RequestConditionType{"Failed"}, false, "Pending,Failed"},
	} {
		csr := &certificatesv1.CertificateSigningRequest{}
		for _, c := range tc.conditions {
			csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: c})
		}
		if tc.issued {
			csr.Status.Certificate = []byte("x")
		}
		if got := csrCondition(csr); got != tc.want {
			t.Errorf("%v issued=%v: %q, want %q", tc.conditions, tc.issued, got, tc.want)
		}
	}
}

func TestCSRRow(t *testing.T) {
	now := time.Now()
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-90 * time.Second))},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: certificatesv1.KubeAPIServerClientSignerName, Username: "alice", ExpirationSeconds: ptr.To[int32](3600),
		},
	}
	got := csrRow(csr, now)
	want := []any{"90s", "kubernetes.io/kube-apiserver-client", "alice", "60m", "Pending"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cell %d: %v, want %v", i, got[i], want[i])
		}
	}
	if cells := csrRow(&certificatesv1.CertificateSigningRequest{}, now); cells[1] != "<none>" || cells[3] != "<none>" {
		t.Errorf("empty request: %v", cells)
	}
}
