// Package join gives a machine its own node credentials from no more
// than a server address and a join token, as kubeadm's TLS bootstrap
// does: the cluster CA is read from kube-public/cluster-info and trusted
// only when its public key hashes to the pin in the token (a man in the
// middle cannot forge that); the bootstrap token then asks, through a
// CertificateSigningRequest that the cluster approves for its group, for
// a client certificate as system:node:NAME; from then on the node uses
// that certificate, and a certificate manager renews it well before it
// expires. The credentials live in one directory, so a restarted agent
// reuses them and never needs the token again.
package join

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/orca-project/orca/internal/auth/bootstraptoken"
)

// Config is what joining needs.
type Config struct {
	// Server is the API server's URL, https://HOST:PORT.
	Server string
	// Token is the join token (K10<CA hash>::ID.SECRET); needed only
	// until the node holds a certificate.
	Token string
	// Dir keeps the CA and the node's certificates.
	Dir      string
	NodeName string
	// Ingress asks for the ingress controller's certificate as well.
	Ingress bool
	// Timeout bounds the wait for the certificate (2 minutes when 0).
	Timeout time.Duration
	Log     *slog.Logger
}

// Files in Dir.
const caFile = "ca.crt"

// identity is one client certificate the node holds: its own, the
// service proxy's (which watches every Node and Service, more than a
// node's identity may read) and the ingress controller's (which reads
// Ingresses and TLS Secrets too).
type identity struct {
	prefix  string
	subject pkix.Name
	signer  string
}

func nodeIdentity(name string) identity {
	return identity{"kubelet-client", pkix.Name{CommonName: "system:node:" + name, Organization: []string{"system:nodes"}}, certificatesv1.KubeAPIServerClientKubeletSignerName}
}

var (
	proxyIdentity   = identity{"kube-proxy-client", pkix.Name{CommonName: "system:kube-proxy"}, certificatesv1.KubeAPIServerClientSignerName}
	ingressIdentity = identity{"ingress-client", pkix.Name{CommonName: "system:orca:ingress"}, certificatesv1.KubeAPIServerClientSignerName}
)

var clientUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}

// Credentials are the node's identities toward the API server.
type Credentials struct {
	// Config authenticates as system:node:NAME, ProxyConfig as
	// system:kube-proxy and IngressConfig (nil unless asked for) as
	// system:orca:ingress, each with its current certificate, re-read
	// from disk when a manager renews it.
	Config, ProxyConfig, IngressConfig *rest.Config
	// Managers renew the certificates; start them for as long as the
	// node runs.
	Managers []certificate.Manager

	dir, nodeName string
}

// Serving returns a manager of the kubelet's serving certificate, signed
// by the cluster CA (signer kubernetes.io/kubelet-serving) for the node's
// name and addresses, and asked for as the node; start it, and serve
// what it holds once it holds something.
func (c *Credentials) Serving(ips []net.IP) (certificate.Manager, error) {
	store, err := certificate.NewFileStore("kubelet-server", c.dir, c.dir, "", "")
	if err != nil {
		return nil, fmt.Errorf("serving certificate store: %w", err)
	}
	cfg := c.Config
	return certificate.NewManager(&certificate.Config{
		ClientsetFn: func(*tls.Certificate) (kubernetes.Interface, error) { return kubernetes.NewForConfig(cfg) },
		Template: &x509.CertificateRequest{
			Subject:  pkix.Name{CommonName: "system:node:" + c.nodeName, Organization: []string{"system:nodes"}},
			DNSNames: []string{c.nodeName}, IPAddresses: ips,
		},
		SignerName:       certificatesv1.KubeletServingSignerName,
		Usages:           []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth},
		CertificateStore: store,
		Name:             "kubelet-server",
	})
}

// Join returns the node's credentials, bootstrapping them with the token
// when Dir holds none yet (or only expired ones).
func Join(ctx context.Context, c Config) (*Credentials, error) {
	if c.Timeout == 0 {
		c.Timeout = 2 * time.Minute
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("credentials dir: %w", err)
	}
	ids := []identity{nodeIdentity(c.NodeName), proxyIdentity}
	if c.Ingress {
		ids = append(ids, ingressIdentity)
	}
	stores := make([]certificate.FileStore, len(ids))
	for i, id := range ids {
		st, err := certificate.NewFileStore(id.prefix, c.Dir, c.Dir, "", "")
		if err != nil {
			return nil, fmt.Errorf("%s certificate store: %w", id.prefix, err)
		}
		stores[i] = st
	}
	caPath := filepath.Join(c.Dir, caFile)
	caPEM, caErr := os.ReadFile(caPath)
	configOf := func(st certificate.FileStore) *rest.Config {
		// Files, not data: client-go re-reads them, so a renewed
		// certificate is used without a restart.
		return &rest.Config{Host: c.Server, TLSClientConfig: rest.TLSClientConfig{CAFile: caPath, CertFile: st.CurrentPath(), KeyFile: st.CurrentPath()}}
	}
	// Without a valid node certificate the token is the only way in;
	// with one, the node asks for whatever else it lacks itself.
	var requester kubernetes.Interface
	if caErr != nil || !valid(stores[0]) {
		if c.Token == "" {
			return nil, fmt.Errorf("this node has no credentials in %s yet: give it the cluster's join token (--token or --token-file)", c.Dir)
		}
		pin, token, err := bootstraptoken.ParseJoinToken(c.Token)
		if err != nil {
			return nil, err
		}
		if caPEM, err = DiscoverCA(ctx, c.Server, pin); err != nil {
			return nil, err
		}
		c.Log.Info("cluster CA verified against the join token", "server", c.Server)
		if requester, err = kubernetes.NewForConfig(&rest.Config{Host: c.Server, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}); err != nil {
			return nil, err
		}
		if err := request(ctx, c, requester, ids[0], stores[0]); err != nil {
			return nil, err
		}
		if err := os.WriteFile(caPath, caPEM, 0o644); err != nil {
			return nil, fmt.Errorf("store cluster CA: %w", err)
		}
		c.Log.Info("joined the cluster", "node", c.NodeName)
	} else if _, err := certutil.ParseCertsPEM(caPEM); err != nil {
		return nil, fmt.Errorf("cluster CA in %s: %w", caPath, err)
	}
	nodeConfig := configOf(stores[0])
	for i := 1; i < len(ids); i++ {
		if valid(stores[i]) {
			continue
		}
		if requester == nil {
			var err error
			if requester, err = kubernetes.NewForConfig(nodeConfig); err != nil {
				return nil, err
			}
		}
		if err := request(ctx, c, requester, ids[i], stores[i]); err != nil {
			return nil, err
		}
	}
	creds := &Credentials{Config: nodeConfig, ProxyConfig: configOf(stores[1]), dir: c.Dir, nodeName: c.NodeName}
	if c.Ingress {
		creds.IngressConfig = configOf(stores[2])
	}
	for i, id := range ids {
		// Renewals are asked for as the node, whose group may renew each.
		mgr, err := certificate.NewManager(&certificate.Config{
			ClientsetFn:      func(*tls.Certificate) (kubernetes.Interface, error) { return kubernetes.NewForConfig(nodeConfig) },
			Template:         &x509.CertificateRequest{Subject: id.subject},
			SignerName:       id.signer,
			Usages:           clientUsages,
			CertificateStore: stores[i],
			Name:             id.prefix,
		})
		if err != nil {
			return nil, fmt.Errorf("%s certificate manager: %w", id.prefix, err)
		}
		creds.Managers = append(creds.Managers, mgr)
	}
	return creds, nil
}

// valid reports whether the store holds a certificate still in date.
func valid(st certificate.FileStore) bool {
	cur, err := st.Current()
	return err == nil && cur.Leaf != nil && time.Now().Before(cur.Leaf.NotAfter)
}

// request asks for one client certificate through a CSR and waits for
// it to be approved and signed.
func request(ctx context.Context, c Config, client kubernetes.Interface, id identity, store certificate.FileStore) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("%s key: %w", id.prefix, err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: id.subject}, key)
	if err != nil {
		return fmt.Errorf("certificate request: %w", err)
	}
	csrPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	rctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	name, uid, err := csr.RequestCertificateWithContext(rctx, client, csrPEM, "", id.signer, nil, clientUsages, key)
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the server at %s refused the join token (unknown, expired or revoked): %w", c.Server, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("the join token may not request node certificates (is it a node token?): %w", err)
	case err != nil:
		return fmt.Errorf("request %s certificate: %w", id.prefix, err)
	}
	c.Log.Info("waiting for a certificate", "for", id.subject.CommonName, "csr", name)
	certPEM, err := csr.WaitForCertificate(rctx, client, name, uid)
	if err != nil {
		return fmt.Errorf("certificate request %s was not approved and signed within %v: %w", name, c.Timeout, err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	if _, err := store.Update(certPEM, keyPEM); err != nil {
		return fmt.Errorf("store %s certificate: %w", id.prefix, err)
	}
	return nil
}

// DiscoverCA reads cluster-info without trusting the server, checks its
// CA against the pin, and reads it again over a connection verified with
// that CA, so that the server is proven to hold the CA-signed key.
func DiscoverCA(ctx context.Context, server, pin string) ([]byte, error) {
	insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the CA read here is trusted only once it matches the pin
	caPEM, err := clusterInfoCA(ctx, insecure, server)
	if err != nil {
		return nil, err
	}
	certs, err := certutil.ParseCertsPEM(caPEM)
	if err != nil {
		return nil, fmt.Errorf("cluster-info: %w", err)
	}
	ca, err := bootstraptoken.VerifyPin(certs, pin)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	verified := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	if _, err := clusterInfoCA(ctx, verified, server); err != nil {
		return nil, fmt.Errorf("the server's certificate is not signed by the pinned cluster CA: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), nil
}

func clusterInfoCA(ctx context.Context, hc *http.Client, server string) ([]byte, error) {
	url := strings.TrimRight(server, "/") + "/api/v1/namespaces/" + "kube-public" + "/configmaps/" + bootstrapapi.ConfigMapClusterInfo
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("server URL %q: %w", server, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reach the server at %s: %w", server, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read cluster-info from %s: %s", server, resp.Status)
	}
	var cm v1.ConfigMap
	if err := json.Unmarshal(body, &cm); err != nil {
		return nil, fmt.Errorf("cluster-info: %w", err)
	}
	kc, err := clientcmd.Load([]byte(cm.Data[bootstrapapi.KubeConfigKey]))
	if err != nil {
		return nil, fmt.Errorf("cluster-info kubeconfig: %w", err)
	}
	for _, cl := range kc.Clusters {
		if len(cl.CertificateAuthorityData) > 0 {
			return cl.CertificateAuthorityData, nil
		}
	}
	return nil, errors.New("cluster-info names no CA")
}
