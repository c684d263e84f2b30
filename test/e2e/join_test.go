package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/cluster-bootstrap/token/jws"

	"github.com/orca-project/orca/internal/agent/join"
	"github.com/orca-project/orca/internal/auth/bootstraptoken"
)

// TestJoinWithToken joins a machine that holds nothing but the server's
// address and a join token: a wrong CA hash and an unknown token are
// refused with clear errors, the right token yields a node with its own
// certificate through an auto-approved CSR, and the node keeps working
// without the token once that token is revoked.
func TestJoinWithToken(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	server := "https://" + bridgeIP + ":" + inst.URL[strings.LastIndex(inst.URL, ":")+1:]
	pin, _, err := bootstraptoken.ParseJoinToken(inst.JoinToken)
	if err != nil {
		t.Fatalf("the server's join token %q: %v", inst.JoinToken, err)
	}
	tryJoin := func(token string) error {
		_, err := join.Join(ctx, join.Config{Server: server, Token: token, Dir: t.TempDir(), NodeName: "e2e-intruder", Timeout: 20 * time.Second})
		return err
	}

	// A token for a token for another cluster's CA: refused before the
	// token is sent anywhere.
	if err := tryJoin("K10" + strings.Repeat("ab", 32) + "::abcdef.0123456789abcdef"); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("wrong CA hash: %v", err)
	}
	// A token the cluster does not know: the server refuses it.
	if err := tryJoin("K10" + pin + "::zzzzzz.0123456789abcdef"); err == nil || !strings.Contains(err.Error(), "refused the join token") {
		t.Errorf("unknown token: %v", err)
	}

	// A token of its own, so that revoking it leaves the server's alone.
	secret, token, err := bootstraptoken.Spec{TTL: time.Hour, Usages: []string{"authentication", "signing"}, Groups: []string{bootstraptoken.NodeGroup}}.Secret(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Secrets("kube-system").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	id, tokenSecret, _ := bootstraptoken.Parse(token)
	// The bootstrap signer signs cluster-info with it, for joiners that
	// check signatures rather than pin the CA (kubeadm join).
	eventually(t, 20*time.Second, func() error {
		cm, err := client.CoreV1().ConfigMaps("kube-public").Get(ctx, "cluster-info", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !jws.DetachedTokenIsValid(cm.Data["jws-kubeconfig-"+id], cm.Data["kubeconfig"], id, tokenSecret) {
			return fmt.Errorf("cluster-info not signed with token %s: %v", id, cm.Data)
		}
		return nil
	})
	x, err := addNodeJoining(9, "K10"+pin+"::"+token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(x.dir, "agent.log"))
			t.Logf("agent log of %s:\n%s", x.name, tail(string(b), 40))
		}
		x.remove()
		_ = client.CoreV1().Nodes().Delete(context.Background(), x.name, metav1.DeleteOptions{})
	})

	// Its credentials came through a CSR the cluster approved.
	csrs, err := client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	approved := false
	for _, c := range csrs.Items {
		if c.Spec.Username != "system:bootstrap:"+id || c.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
			continue
		}
		for _, cond := range c.Status.Conditions {
			if cond.Type == certificatesv1.CertificateApproved && cond.Reason == "AutoApproved" && len(c.Status.Certificate) > 0 {
				approved = true
			}
		}
	}
	if !approved {
		t.Errorf("no approved, signed CSR from system:bootstrap:%s", id)
	}
	certPEM, err := os.ReadFile(filepath.Join(x.dir, "agent", "pki", "kubelet-client-current.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if cn := certCN(t, certPEM); cn != "system:node:"+x.name {
		t.Errorf("node certificate for %q", cn)
	}
	if _, err := os.Stat(filepath.Join(x.dir, "kubeconfig")); err == nil {
		t.Errorf("the joined node has a kubeconfig")
	}

	// Its kubelet serves a certificate the cluster CA signed, for its
	// own name and address, once the cluster approves its request.
	caPool := x509.NewCertPool()
	if !caPool.AppendCertsFromPEM(clusterCAPEM(t)) {
		t.Fatal("no cluster CA in the admin kubeconfig")
	}
	eventually(t, time.Minute, func() error {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", net.JoinHostPort(x.ip, "10250"),
			&tls.Config{RootCAs: caPool, ServerName: x.ip, MinVersion: tls.VersionTLS12})
		if err != nil {
			return fmt.Errorf("kubelet serving certificate: %w", err)
		}
		defer conn.Close()
		if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "system:node:"+x.name {
			return fmt.Errorf("kubelet serves a certificate for %q", cn)
		}
		return nil
	})

	// It runs pods.
	ns := namespace(t)
	p := simplePod(ns, "on-joined", "sleep 3600")
	p.Spec.NodeName = x.name
	p.Spec.Tolerations = []v1.Toleration{{Key: extraNodeTaint.Key, Operator: v1.TolerationOpExists}}
	createPod(t, p)
	waitPod(t, ns, "on-joined", 2*time.Minute, "Running", running)

	// Revoked, the token joins nothing more, and the node, restarted,
	// carries on with its own certificate.
	if err := client.CoreV1().Secrets("kube-system").Delete(ctx, secret.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		if err := tryJoin("K10" + pin + "::" + token); err == nil || !strings.Contains(err.Error(), "refused the join token") {
			return fmt.Errorf("revoked token: %v", err)
		}
		return nil
	})
	x.kill()
	if err := x.start(); err != nil {
		t.Fatal(err)
	}
	// Ready again means the restarted agent posted a fresh heartbeat.
	before, _ := client.CoreV1().Nodes().Get(ctx, x.name, metav1.GetOptions{})
	eventually(t, time.Minute, func() error {
		n, err := client.CoreV1().Nodes().Get(ctx, x.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.ResourceVersion == before.ResourceVersion {
			return fmt.Errorf("node not updated since the restart")
		}
		for _, c := range n.Status.Conditions {
			if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("node not Ready")
	})
	b, _ := os.ReadFile(filepath.Join(x.dir, "agent.log"))
	if strings.Count(string(b), "joined the cluster") != 1 {
		t.Errorf("the agent joined %d times; a restart should reuse its certificate", strings.Count(string(b), "joined the cluster"))
	}
}

func certCN(t *testing.T, data []byte) string {
	t.Helper()
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			t.Fatal("no certificate")
		}
		if b.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			return c.Subject.CommonName
		}
	}
}

func clusterCAPEM(t *testing.T) []byte {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(inst.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range kc.Clusters {
		return c.CertificateAuthorityData
	}
	t.Fatal("no cluster in the admin kubeconfig")
	return nil
}
