package csrsigning

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"fmt"
	"math/big"
	"sort"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// Upstream's signing policy: certificates start five minutes in the past
// for clocks that lag, and a long-lived one gives those minutes back at
// its end; a certificate shorter than eight hours keeps its full length.
const (
	backdate = 5 * time.Minute
	short    = 8 * time.Hour
	// minDuration keeps a requested duration above twice the backdating.
	minDuration = 10 * time.Minute
)

// Authority is a CA that signs requests.
type Authority struct {
	Certificate *x509.Certificate
	Key         crypto.Signer
}

var serialLimit = new(big.Int).Lsh(big.NewInt(1), 128)

// Sign issues a certificate for a PKCS#10 request (DER) valid for ttl
// from now, with the usages asked for, as upstream's local signer: the
// request's subject and names are kept, its extensions dropped, and the
// certificate is never a CA nor outlives the signer.
func (a *Authority) Sign(reqDER []byte, usages []certificatesv1.KeyUsage, ttl time.Duration, now time.Time) ([]byte, error) {
	if !now.Add(-backdate).Before(a.Certificate.NotAfter) {
		return nil, fmt.Errorf("the signer has expired: NotAfter=%v", a.Certificate.NotAfter)
	}
	req, err := x509.ParseCertificateRequest(reqDER)
	if err != nil {
		return nil, fmt.Errorf("unable to parse certificate request: %v", err)
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("unable to verify certificate request signature: %v", err)
	}
	keyUsage, extUsages, err := keyUsages(usages)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, serialLimit)
	if err != nil {
		return nil, fmt.Errorf("unable to generate a serial number for %s: %v", req.Subject.CommonName, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               req.Subject,
		DNSNames:              req.DNSNames,
		IPAddresses:           req.IPAddresses,
		EmailAddresses:        req.EmailAddresses,
		URIs:                  req.URIs,
		KeyUsage:              keyUsage,
		ExtKeyUsage:           extUsages,
		BasicConstraintsValid: true,
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(ttl - backdate),
	}
	if ttl < short {
		tmpl.NotAfter = now.Add(ttl)
	}
	if !tmpl.NotAfter.Before(a.Certificate.NotAfter) {
		tmpl.NotAfter = a.Certificate.NotAfter
	}
	if !now.Before(a.Certificate.NotAfter) {
		return nil, fmt.Errorf("refusing to sign a certificate that expired in the past: NotAfter=%v", a.Certificate.NotAfter)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.Certificate, req.PublicKey, a.Key)
	if err != nil {
		return nil, fmt.Errorf("failed to sign certificate: %v", err)
	}
	return der, nil
}

// Duration is how long a certificate lasts: the requested
// expirationSeconds within [10m, max], else max.
func Duration(expirationSeconds *int32, max time.Duration) time.Duration {
	if expirationSeconds == nil {
		return max
	}
	switch d := time.Duration(*expirationSeconds) * time.Second; {
	case d > max:
		return max
	case d < minDuration:
		return minDuration
	default:
		return d
	}
}

var keyUsageOf = map[certificatesv1.KeyUsage]x509.KeyUsage{
	certificatesv1.UsageSigning:           x509.KeyUsageDigitalSignature,
	certificatesv1.UsageDigitalSignature:  x509.KeyUsageDigitalSignature,
	certificatesv1.UsageContentCommitment: x509.KeyUsageContentCommitment,
	certificatesv1.UsageKeyEncipherment:   x509.KeyUsageKeyEncipherment,
	certificatesv1.UsageKeyAgreement:      x509.KeyUsageKeyAgreement,
	certificatesv1.UsageDataEncipherment:  x509.KeyUsageDataEncipherment,
	certificatesv1.UsageCertSign:          x509.KeyUsageCertSign,
	certificatesv1.UsageCRLSign:           x509.KeyUsageCRLSign,
	certificatesv1.UsageEncipherOnly:      x509.KeyUsageEncipherOnly,
	certificatesv1.UsageDecipherOnly:      x509.KeyUsageDecipherOnly,
}

var extKeyUsageOf = map[certificatesv1.KeyUsage]x509.ExtKeyUsage{
	certificatesv1.UsageAny:             x509.ExtKeyUsageAny,
	certificatesv1.UsageServerAuth:      x509.ExtKeyUsageServerAuth,
	certificatesv1.UsageClientAuth:      x509.ExtKeyUsageClientAuth,
	certificatesv1.UsageCodeSigning:     x509.ExtKeyUsageCodeSigning,
	certificatesv1.UsageEmailProtection: x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageSMIME:           x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageIPsecEndSystem:  x509.ExtKeyUsageIPSECEndSystem,
	certificatesv1.UsageIPsecTunnel:     x509.ExtKeyUsageIPSECTunnel,
	certificatesv1.UsageIPsecUser:       x509.ExtKeyUsageIPSECUser,
	certificatesv1.UsageTimestamping:    x509.ExtKeyUsageTimeStamping,
	certificatesv1.UsageOCSPSigning:     x509.ExtKeyUsageOCSPSigning,
	certificatesv1.UsageMicrosoftSGC:    x509.ExtKeyUsageMicrosoftServerGatedCrypto,
	certificatesv1.UsageNetscapeSGC:     x509.ExtKeyUsageNetscapeServerGatedCrypto,
}

// keyUsages translates the API's usages into X.509's, extended usages
// once each and sorted.
func keyUsages(usages []certificatesv1.KeyUsage) (x509.KeyUsage, []x509.ExtKeyUsage, error) {
	var ku x509.KeyUsage
	var unknown []certificatesv1.KeyUsage
	ext := map[x509.ExtKeyUsage]bool{}
	for _, u := range usages {
		if v, ok := keyUsageOf[u]; ok {
			ku |= v
		} else if v, ok := extKeyUsageOf[u]; ok {
			ext[v] = true
		} else {
			unknown = append(unknown, u)
		}
	}
	if len(unknown) > 0 {
		return 0, nil, fmt.Errorf("unrecognized usage values: %q", unknown)
	}
	var sorted []x509.ExtKeyUsage
	for e := range ext {
		sorted = append(sorted, e)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	return ku, sorted, nil
}
