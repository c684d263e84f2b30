package certificates

import (
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateClusterTrustBundle(t *testing.T) {
	ca1 := string(certFor(t, &newKey(t).PublicKey, true, time.Now(), time.Hour))
	ca2 := string(certFor(t, &newKey(t).PublicKey, true, time.Now(), time.Hour))
	leaf := string(certFor(t, &newKey(t).PublicKey, false, time.Now(), time.Hour))
	for _, tc := range []struct {
		name, objName, signer, bundle string
		want                          []wantErr
	}{
		{"no signer", "bundle", "", ca1, nil},
		{"two anchors, text between", "bundle", "", ca1 + "comment\n" + ca2, nil},
		{"no signer but a colon", "example.com:foo:x", "", ca1,
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "metadata.name", Detail: `ClusterTrustBundle without signer name must not have ":" in its name`}}},
		{"signer", "example.com:foo:v1", "example.com/foo", ca1, nil},
		{"signer, wrong prefix", "v1", "example.com/foo", ca1,
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "metadata.name", Detail: "ClusterTrustBundle for signerName example.com/foo must be named with prefix example.com:foo:"}}},
		{"invalid signer", "bad:v1", "bad", ca1, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.signerName", Detail: "must be a fully qualified domain and path of the form 'example.com/signer-name'"}}},
		{"empty bundle", "bundle", "", "", []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.trustBundle", Detail: "at least one trust anchor must be provided"}}},
		{"not a CA", "bundle", "", leaf, []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.trustBundle", Detail: "entry 0 does not have the CA bit set"}}},
		{"duplicate", "bundle", "", ca1 + ca2 + ca1, []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.trustBundle", Detail: "duplicate trust anchor (indices [0 2])"}}},
		{"wrong block", "bundle", "", ca1 + "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.trustBundle", Detail: "entry 1 has bad block type: PRIVATE KEY"}}},
		{"headers", "bundle", "", strings.Replace(ca1, "-----\n", "-----\nProc-Type: 4,ENCRYPTED\n\n", 1),
			[]wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.trustBundle", Detail: "entry 0 has PEM block headers"}}},
		{"too long", "bundle", "", strings.Repeat("x", 1<<20+1), []wantErr{{Type: field.ErrorTypeTooLong, Field: "spec.trustBundle", Detail: ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &certificatesv1.ClusterTrustBundle{
				ObjectMeta: metav1.ObjectMeta{Name: tc.objName},
				Spec:       certificatesv1.ClusterTrustBundleSpec{SignerName: tc.signer, TrustBundle: tc.bundle},
			}
			checkErrs(t, validateClusterTrustBundle(b), tc.want)
		})
	}
}

func TestValidateClusterTrustBundleUpdate(t *testing.T) {
	ca := string(certFor(t, &newKey(t).PublicKey, true, time.Now(), time.Hour))
	old := &certificatesv1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{Name: "example.com:foo:v1"},
		Spec:       certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/foo", TrustBundle: ca},
	}
	b := old.DeepCopy()
	b.Spec.SignerName = "example.com/bar"
	checkErrs(t, validateClusterTrustBundleUpdate(b, old), []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.signerName", Detail: "field is immutable"}})
	b = old.DeepCopy()
	b.Spec.TrustBundle = "junk"
	checkErrs(t, validateClusterTrustBundleUpdate(b, old), []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.trustBundle", Detail: "at least one trust anchor must be provided"}})
}
