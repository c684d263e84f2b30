package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"

	"github.com/orca-project/orca/internal/agent"
	"github.com/orca-project/orca/internal/auth/bootstrappolicy"
	"github.com/orca-project/orca/internal/auth/pki"
)

// agentOptions completes the in-process agent's options: its data lives
// beside the control plane's, it reaches the API server over loopback as
// system:node:NAME, and its serving certificate is signed by the cluster
// CA.
func agentOptions(opts Options, tlsDir string, ca *pki.Pair, port int) (agent.Options, error) {
	a := *opts.Agent
	a.DataDir = opts.DataDir
	a.ClusterCIDR, a.ServiceCIDR = opts.ClusterCIDR, opts.ServiceCIDR
	if a.ClusterCIDR == "" {
		a.ClusterCIDR = DefaultClusterCIDR
	}
	if a.ServiceCIDR == "" {
		a.ServiceCIDR = DefaultServiceCIDR
	}
	if len(a.ClusterDNS) == 0 && opts.ClusterDNSPort >= 0 {
		ip, err := ClusterDNSIP(a.ServiceCIDR)
		if err != nil {
			return a, err
		}
		a.ClusterDNS = []string{ip}
	}
	if a.ClusterDomain == "" {
		a.ClusterDomain = opts.ClusterDomain
	}
	if a.NodeName == "" {
		n, err := agentNodeName()
		if err != nil {
			return a, err
		}
		a.NodeName = n
	}
	if a.Labels == nil {
		a.Labels = map[string]string{}
	}
	a.Labels["node-role.kubernetes.io/control-plane"] = "true"
	cfg, err := loopbackConfig(opts, tlsDir, ca, port, "node-"+a.NodeName, "system:node:"+a.NodeName, []string{"system:nodes"}, "orca-agent", 50, 100)
	if err != nil {
		return a, err
	}
	a.Config = cfg
	if a.ProxyConfig, err = loopbackConfig(opts, tlsDir, ca, port, "kube-proxy", "system:kube-proxy", nil, "orca-proxy", 20, 40); err != nil {
		return a, err
	}
	if !a.DisableIngress {
		if a.IngressConfig, err = loopbackConfig(opts, tlsDir, ca, port, "ingress", bootstrappolicy.IngressUser, nil, "orca-ingress", 20, 40); err != nil {
			return a, err
		}
	}
	ips := []net.IP{net.IPv4(127, 0, 0, 1)}
	if ip := net.ParseIP(a.NodeIP); ip != nil {
		ips = append(ips, ip)
	}
	if ip := net.ParseIP(opts.AdvertiseAddress); ip != nil && !ip.IsLoopback() {
		ips = append(ips, ip)
	}
	leaf, err := pki.LoadOrIssue(tlsDir, "kubelet-"+a.NodeName, ca, pki.LeafSpec{CommonName: a.NodeName, DNSNames: []string{a.NodeName, "localhost"}, IPs: ips, Server: true})
	if err != nil {
		return a, fmt.Errorf("kubelet serving certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(leaf.CertPEM, leaf.KeyPEM)
	if err != nil {
		return a, fmt.Errorf("kubelet serving certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	a.ServingCert, a.ClientCA = &cert, pool
	return a, nil
}

func runAgent(ctx context.Context, a agent.Options) error {
	if err := agent.Run(ctx, a); err != nil && ctx.Err() == nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}

func agentNodeName() (string, error) {
	h, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("node name: %w", err)
	}
	return h, nil
}
