package csrapproving

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"slices"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRecognized(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	req := func(subject pkix.Name, dns ...string) *x509.CertificateRequest {
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, DNSNames: dns}, k)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := x509.ParseCertificateRequest(der)
		return r
	}
	node := pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}
	clientUsages := []certificatesv1.KeyUsage{"digital signature", "client auth"}
	for _, tc := range []struct {
		name      string
		signer    string
		requestor string
		req       *x509.CertificateRequest
		usages    []certificatesv1.KeyUsage
		want      []string
	}{
		{"own renewal", certificatesv1.KubeAPIServerClientKubeletSignerName, "system:node:n1", req(node), clientUsages, []string{"selfnodeclient", "nodeclient"}},
		{"bootstrap", certificatesv1.KubeAPIServerClientKubeletSignerName, "system:bootstrap:abc", req(node), clientUsages, []string{"nodeclient"}},
		{"other signer", certificatesv1.KubeAPIServerClientSignerName, "system:node:n1", req(node), clientUsages, nil},
		{"serving usages", certificatesv1.KubeAPIServerClientKubeletSignerName, "system:node:n1", req(node), []certificatesv1.KeyUsage{"digital signature", "server auth"}, nil},
		{"with a name", certificatesv1.KubeAPIServerClientKubeletSignerName, "system:node:n1", req(node, "n1.example"), clientUsages, nil},
		{"not a node", certificatesv1.KubeAPIServerClientKubeletSignerName, "alice", req(pkix.Name{CommonName: "alice", Organization: []string{"system:nodes"}}), clientUsages, nil},
		{"kube-proxy", certificatesv1.KubeAPIServerClientSignerName, "system:node:n1", req(pkix.Name{CommonName: "system:kube-proxy"}), clientUsages, []string{"kubeproxyclient"}},
		{"kube-proxy with a group", certificatesv1.KubeAPIServerClientSignerName, "system:node:n1", req(pkix.Name{CommonName: "system:kube-proxy", Organization: []string{"system:masters"}}), clientUsages, nil},
		{"kube-proxy with a name", certificatesv1.KubeAPIServerClientSignerName, "system:node:n1", req(pkix.Name{CommonName: "system:kube-proxy"}, "evil.example"), clientUsages, nil},
		{"kube-proxy serving", certificatesv1.KubeAPIServerClientSignerName, "system:node:n1", req(pkix.Name{CommonName: "system:kube-proxy"}), []certificatesv1.KeyUsage{"digital signature", "server auth"}, nil},
		{"kube-proxy from the kubelet signer", certificatesv1.KubeAPIServerClientKubeletSignerName, "system:node:n1", req(pkix.Name{CommonName: "system:kube-proxy"}), clientUsages, nil},
		{"ingress", certificatesv1.KubeAPIServerClientSignerName, "system:node:n1", req(pkix.Name{CommonName: "system:orca:ingress"}), clientUsages, []string{"ingressclient"}},
		{"ingress with a group", certificatesv1.KubeAPIServerClientSignerName, "system:node:n1", req(pkix.Name{CommonName: "system:orca:ingress", Organization: []string{"system:masters"}}), clientUsages, nil},
		{"own serving", certificatesv1.KubeletServingSignerName, "system:node:n1", req(node, "n1"), []certificatesv1.KeyUsage{"digital signature", "server auth"}, []string{"selfnodeserver"}},
		{"another node's serving", certificatesv1.KubeletServingSignerName, "system:node:n2", req(node, "n1"), []certificatesv1.KeyUsage{"digital signature", "server auth"}, nil},
		{"serving with client usages", certificatesv1.KubeletServingSignerName, "system:node:n1", req(node, "n1"), clientUsages, nil},
		{"someone else from the client signer", certificatesv1.KubeAPIServerClientSignerName, "system:node:n1", req(pkix.Name{CommonName: "admin"}), clientUsages, nil},
	} {
		csr := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: tc.signer, Username: tc.requestor, Usages: tc.usages}}
		if got := Recognized(csr, tc.req); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestNamesOwnAddresses(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}, {Type: corev1.NodeHostName, Address: "n1.lan"},
	}}}
	for _, tc := range []struct {
		name string
		dns  []string
		ips  []string
		ok   bool
	}{
		{"own name and address", []string{"n1", "n1.lan"}, []string{"10.0.0.5"}, true},
		{"another address", []string{"n1"}, []string{"10.0.0.6"}, false},
		{"the API server's name", []string{"kubernetes.default"}, nil, false},
		{"loopback", nil, []string{"127.0.0.1"}, false},
	} {
		r := &x509.CertificateRequest{DNSNames: tc.dns}
		for _, ip := range tc.ips {
			r.IPAddresses = append(r.IPAddresses, net.ParseIP(ip))
		}
		if err := namesOwnAddresses(node, r); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
