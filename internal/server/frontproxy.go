package server

import (
	"crypto/tls"

	"github.com/orca-project/orca/internal/apiserver"
	"github.com/orca-project/orca/internal/auth/pki"
)

// frontProxyName is the common name of the front proxy's client
// certificate, as upstream's clusters name it.
const frontProxyName = "front-proxy-client"

// frontProxy loads or makes the front proxy's CA (tls/front-proxy-ca.crt)
// and its client certificate (tls/front-proxy-client.crt), which the API
// server presents to extension API servers. The CA is a separate one, as
// upstream advises: a certificate it signs may claim to be any user.
func frontProxy(tlsDir string, clusterCA *pki.Pair) (*apiserver.FrontProxy, error) {
	ca, err := pki.LoadOrCreateCA(tlsDir, "front-proxy-ca", "orca-front-proxy-ca")
	if err != nil {
		return nil, err
	}
	client, err := pki.LoadOrIssue(tlsDir, frontProxyName, ca, pki.LeafSpec{CommonName: frontProxyName})
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(client.CertPEM, client.KeyPEM)
	if err != nil {
		return nil, err
	}
	return &apiserver.FrontProxy{Client: cert, CAPEM: ca.CertPEM, ClientCAPEM: clusterCA.CertPEM, AllowedNames: []string{frontProxyName}}, nil
}
