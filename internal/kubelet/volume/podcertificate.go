package volume

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/kubelet/volume/atomicdir"
)

// podCertKey names one podCertificate source of a pod.
type podCertKey struct {
	pod    types.UID
	volume string
	source int
}

// podCert is what the kubelet knows of one source: the credentials it
// serves (once issued), and the request it waits on, if any. A request
// that was denied or failed ends the source for the pod's life.
type podCert struct {
	key, chain               []byte
	beginRefreshAt, notAfter time.Time

	pendingKey []byte
	pendingPCR string

	denied error
}

// podCertificatePayload serves a podCertificate source: the first time,
// it generates a key and asks the signer with a PodCertificateRequest, and
// the volume waits until the request is issued; from beginRefreshAt on, it
// asks again with a new key while the current credentials stay in place.
func (m *Manager) podCertificatePayload(ctx context.Context, pod *v1.Pod, volume string, index int, src *v1.PodCertificateProjection, mode int32) (map[string]atomicdir.File, error) {
	if m.Certificates == nil {
		return nil, errNoCertificates
	}
	k := podCertKey{pod: pod.UID, volume: volume, source: index}
	m.mu.Lock()
	st := m.podCerts[k]
	if st == nil {
		st = &podCert{}
		if m.podCerts == nil {
			m.podCerts = map[podCertKey]*podCert{}
		}
		m.podCerts[k] = st
	}
	m.mu.Unlock()
	if err := m.advancePodCert(ctx, pod, src, st); err != nil {
		return nil, err
	}
	return podCertFiles(src, st.key, st.chain, mode), nil
}

// advancePodCert moves a source's state one step: it reads the pending
// request's outcome, and starts a request when none is pending and there
// are no credentials or they are due for refresh.
func (m *Manager) advancePodCert(ctx context.Context, pod *v1.Pod, src *v1.PodCertificateProjection, st *podCert) error {
	if st.denied != nil {
		return st.denied
	}
	if st.pendingPCR != "" {
		pcr, err := m.Certificates.PodCertificateRequest(ctx, pod.Namespace, st.pendingPCR)
		switch {
		case apierrors.IsNotFound(err):
			// Deleted before it was issued (by the cleaner, or by hand):
			// ask again.
			st.pendingPCR, st.pendingKey = "", nil
		case err != nil:
			return fmt.Errorf("while getting PodCertificateRequest %s/%s: %w", pod.Namespace, st.pendingPCR, err)
		default:
			if err := st.observe(pcr); err != nil {
				return err
			}
		}
	}
	now := m.now()
	if st.pendingPCR == "" && (st.chain == nil || !now.Before(st.beginRefreshAt)) {
		if err := m.requestPodCert(ctx, pod, src, st); err != nil {
			if st.chain != nil {
				// Keep serving what was issued; the next sync tries again.
				m.log().Warn("cannot refresh pod certificate", "pod", pod.Namespace+"/"+pod.Name, "signer", src.SignerName, "err", err)
				return nil
			}
			return err
		}
	}
	if st.chain == nil {
		return fmt.Errorf("credential bundle is not issued yet")
	}
	return nil
}

// observe takes the outcome of the pending request, if it has one.
func (st *podCert) observe(pcr *certificatesv1.PodCertificateRequest) error {
	for _, c := range pcr.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			continue
		}
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued:
			st.key, st.chain = st.pendingKey, normaliseChain(pcr.Status.CertificateChain)
			if pcr.Status.BeginRefreshAt != nil {
				st.beginRefreshAt = pcr.Status.BeginRefreshAt.Time
			}
			if pcr.Status.NotAfter != nil {
				st.notAfter = pcr.Status.NotAfter.Time
			}
			st.pendingKey, st.pendingPCR = nil, ""
		case certificatesv1.PodCertificateRequestConditionTypeDenied:
			st.denied = fmt.Errorf("PodCertificateRequest was permanently denied: reason=%q message=%q", c.Reason, c.Message)
			return st.denied
		case certificatesv1.PodCertificateRequestConditionTypeFailed:
			st.denied = fmt.Errorf("PodCertificateRequest was permanently failed: reason=%q message=%q", c.Reason, c.Message)
			return st.denied
		}
	}
	return nil
}

// requestPodCert creates a request for a new key. The request names the
// pod, its service account and the node with their UIDs, which the API
// server checks, so that the signer can trust them.
func (m *Manager) requestPodCert(ctx context.Context, pod *v1.Pod, src *v1.PodCertificateProjection, st *podCert) error {
	sa, err := m.Certificates.ServiceAccount(ctx, pod.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return fmt.Errorf("while fetching service account: %w", err)
	}
	node, err := m.Certificates.Node(ctx, pod.Spec.NodeName)
	if err != nil {
		return fmt.Errorf("while getting node object: %w", err)
	}
	key, keyPEM, err := generateKey(src.KeyType)
	if err != nil {
		return err
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		return fmt.Errorf("while creating the certificate request: %w", err)
	}
	pcr, err := m.Certificates.CreatePodCertificateRequest(ctx, &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: pod.Namespace, GenerateName: "req-" + pod.Name + "-",
			// The request goes with its pod.
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}},
		},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: src.SignerName,
			PodName:    pod.Name, PodUID: pod.UID,
			ServiceAccountName: pod.Spec.ServiceAccountName, ServiceAccountUID: sa.UID,
			NodeName: types.NodeName(pod.Spec.NodeName), NodeUID: node.UID,
			MaxExpirationSeconds:      src.MaxExpirationSeconds,
			StubPKCS10Request:         stub,
			UnverifiedUserAnnotations: src.UserAnnotations,
		},
	})
	if err != nil {
		return fmt.Errorf("while creating PodCertificateRequest: %w", err)
	}
	st.pendingKey, st.pendingPCR = keyPEM, pcr.Name
	m.log().Debug("requested pod certificate", "pod", pod.Namespace+"/"+pod.Name, "request", pcr.Name, "signer", src.SignerName)
	return nil
}

// generateKey makes a key of one of the types a projection may name, and
// its PKCS#8 PEM form.
func generateKey(keyType string) (crypto.Signer, []byte, error) {
	var key crypto.Signer
	var err error
	switch keyType {
	case "RSA3072":
		key, err = rsa.GenerateKey(rand.Reader, 3072)
	case "RSA4096":
		key, err = rsa.GenerateKey(rand.Reader, 4096)
	case "ECDSAP256":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ECDSAP384":
		key, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ECDSAP521":
		key, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "ED25519":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, nil, fmt.Errorf("unknown key type %q", keyType)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("while generating %s key: %w", keyType, err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// normaliseChain keeps the chain's certificates only, without headers or
// text between them, as upstream's kubelet writes it.
func normaliseChain(chain string) []byte {
	var out []byte
	rest := []byte(chain)
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return out
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: b.Type, Bytes: b.Bytes})...)
	}
}

// podCertFiles lays the credentials out as the source asks: the key then
// the chain in one file, or each in a file of its own.
func podCertFiles(src *v1.PodCertificateProjection, key, chain []byte, mode int32) map[string]atomicdir.File {
	out := map[string]atomicdir.File{}
	if src.CredentialBundlePath != "" {
		out[src.CredentialBundlePath] = atomicdir.File{Data: append(append([]byte(nil), key...), chain...), Mode: fileMode(mode)}
	}
	if src.KeyPath != "" {
		out[src.KeyPath] = atomicdir.File{Data: key, Mode: fileMode(mode)}
	}
	if src.CertificateChainPath != "" {
		out[src.CertificateChainPath] = atomicdir.File{Data: chain, Mode: fileMode(mode)}
	}
	return out
}

func (m *Manager) forgetPodCerts(pod types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.podCerts {
		if k.pod == pod {
			delete(m.podCerts, k)
		}
	}
}
