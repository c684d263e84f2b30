package csrcleaner

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExpired(t *testing.T) {
	now := time.Now()
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	cond := func(typ certificatesv1.RequestConditionType, at metav1.Time) certificatesv1.CertificateSigningRequestCondition {
		return certificatesv1.CertificateSigningRequestCondition{Type: typ, Status: "True", LastUpdateTime: at}
	}
	valid, expired := certificate(t, now.Add(time.Hour)), certificate(t, now.Add(-time.Minute))
	for _, tc := range []struct {
		name       string
		created    time.Duration
		conditions []certificatesv1.CertificateSigningRequestCondition
		cert       []byte
		want       bool
	}{
		{"pending, new", time.Hour, nil, nil, false},
		{"pending a day", 25 * time.Hour, nil, nil, true},
		{"approved, not issued", 2 * time.Hour, []certificatesv1.CertificateSigningRequestCondition{cond("Approved", ago(2*time.Hour))}, nil, false},
		{"issued recently", 2 * time.Hour, []certificatesv1.CertificateSigningRequestCondition{cond("Approved", ago(30*time.Minute))}, valid, false},
		{"issued an hour ago", 2 * time.Hour, []certificatesv1.CertificateSigningRequestCondition{cond("Approved", ago(61*time.Minute))}, valid, true},
		{"certificate expired", 2 * time.Hour, []certificatesv1.CertificateSigningRequestCondition{cond("Approved", ago(time.Minute))}, expired, true},
		{"denied recently", 2 * time.Hour, []certificatesv1.CertificateSigningRequestCondition{cond("Denied", ago(time.Minute))}, nil, false},
		{"denied an hour ago", 2 * time.Hour, []certificatesv1.CertificateSigningRequestCondition{cond("Denied", ago(61*time.Minute))}, nil, true},
		{"failed an hour ago", 2 * time.Hour, []certificatesv1.CertificateSigningRequestCondition{cond("Approved", ago(2*time.Hour)), cond("Failed", ago(61*time.Minute))}, nil, true},
	} {
		csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: ago(tc.created)}}
		csr.Status.Conditions, csr.Status.Certificate = tc.conditions, tc.cert
		if got, why := Expired(csr, now); got != tc.want {
			t.Errorf("%s: %v (%s), want %v", tc.name, got, why, tc.want)
		}
	}
}

func certificate(t *testing.T, notAfter time.Time) []byte {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"}, NotBefore: notAfter.Add(-2 * time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, k.Public(), k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
