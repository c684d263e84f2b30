// Package csrapproving is upstream's csrapproving controller: it approves
// kubelets' requests for client certificates (signer
// kubernetes.io/kube-apiserver-client-kubelet) when the requestor may
// create certificatesigningrequests/selfnodeclient (renewing its own
// identity) or certificatesigningrequests/nodeclient (any node's), as a
// SubjectAccessReview of the requestor says. Beyond upstream, it approves
// what Orca's joining nodes ask for: the client certificates of the
// service proxy (certificatesigningrequests/kubeproxyclient, signer
// kubernetes.io/kube-apiserver-client, CN system:kube-proxy alone) and of
// the ingress controller (certificatesigningrequests/ingressclient, CN
// system:orca:ingress alone), and a
// node's own kubelet serving certificate
// (certificatesigningrequests/selfnodeserver), the latter only for names
// and addresses its Node reports.
package csrapproving

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/auth/certificates"
	"github.com/orca-project/orca/internal/controller/certificatecontroller"
)

// recognizer is one kind of request the approver knows, the permission
// that approves it, and the message of the approval.
type recognizer struct {
	recognize   func(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool
	subresource string
	message     string
}

var recognizers = []recognizer{
	{isSelfNodeClient, "selfnodeclient", "Auto approving self kubelet client certificate after SubjectAccessReview."},
	{isNodeClient, "nodeclient", "Auto approving kubelet client certificate after SubjectAccessReview."},
	{isClientOf(KubeProxyUser), KubeProxyClientSubresource, "Auto approving kube-proxy client certificate after SubjectAccessReview."},
	{isClientOf(IngressUser), IngressClientSubresource, "Auto approving ingress controller client certificate after SubjectAccessReview."},
	{isSelfNodeServing, SelfNodeServerSubresource, "Auto approving self kubelet serving certificate after SubjectAccessReview."},
}

// SelfNodeServerSubresource is the permission that approves a node's
// request for a serving certificate naming only its own addresses (which
// the approver checks against its Node as well).
const SelfNodeServerSubresource = "selfnodeserver"

// isSelfNodeServing: a node asking for its own kubelet serving
// certificate.
func isSelfNodeServing(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.SignerName == certificatesv1.KubeletServingSignerName &&
		certificates.ValidateKubeletServingCSR(req, csr.Spec.Usages) == nil &&
		csr.Spec.Username == req.Subject.CommonName
}

// namesOwnAddresses checks that a serving request names only the node's
// name and the addresses its Node reports, so that a node cannot obtain
// a certificate for another machine's address or name.
func namesOwnAddresses(node *corev1.Node, req *x509.CertificateRequest) error {
	names := map[string]bool{node.Name: true}
	ips := map[string]bool{}
	for _, a := range node.Status.Addresses {
		switch a.Type {
		case corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeExternalDNS:
			names[a.Address] = true
		case corev1.NodeInternalIP, corev1.NodeExternalIP:
			if ip := net.ParseIP(a.Address); ip != nil {
				ips[ip.String()] = true
			}
		}
	}
	for _, n := range req.DNSNames {
		if !names[n] {
			return fmt.Errorf("DNS name %q is not one of node %s's", n, node.Name)
		}
	}
	for _, ip := range req.IPAddresses {
		if !ips[ip.String()] {
			return fmt.Errorf("IP address %s is not one of node %s's", ip, node.Name)
		}
	}
	return nil
}

// KubeProxyClientSubresource is the permission that approves a node's
// request for the service proxy's client certificate (Orca's agent runs
// the proxy, which needs its own identity to watch every Node and
// Service; upstream's kube-proxy gets one from its DaemonSet).
const KubeProxyClientSubresource = "kubeproxyclient"

// KubeProxyUser is the service proxy's identity, bound to
// system:node-proxier by the bootstrap policy.
const KubeProxyUser = "system:kube-proxy"

// IngressClientSubresource is the permission that approves a node's
// request for the client certificate of the ingress controller it runs.
const IngressClientSubresource = "ingressclient"

// IngressUser is the ingress controller's identity, bound to
// system:orca:ingress by the bootstrap policy.
const IngressUser = "system:orca:ingress"

// isClientOf recognizes a client certificate for user and nothing more
// (no groups, no other names), from the generic client signer.
func isClientOf(user string) func(*certificatesv1.CertificateSigningRequest, *x509.CertificateRequest) bool {
	return func(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
		if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName || req.Subject.CommonName != user ||
			len(req.Subject.Organization) > 0 || len(req.DNSNames) > 0 || len(req.IPAddresses) > 0 || len(req.EmailAddresses) > 0 || len(req.URIs) > 0 {
			return false
		}
		client := false
		for _, u := range csr.Spec.Usages {
			switch u {
			case certificatesv1.UsageClientAuth:
				client = true
			case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment:
			default:
				return false
			}
		}
		return client
	}
}

func isNodeClient(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName &&
		certificates.ValidateKubeletClientCSR(req, csr.Spec.Usages) == nil
}

// isSelfNodeClient: a node renewing the identity it already has.
func isSelfNodeClient(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return isNodeClient(csr, req) && csr.Spec.Username == req.Subject.CommonName
}

// Recognized lists, in order, the subresources whose create permission
// would approve the request.
func Recognized(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) []string {
	var out []string
	for _, r := range recognizers {
		if r.recognize(csr, req) {
			out = append(out, r.subresource)
		}
	}
	return out
}

type approver struct {
	client kubernetes.Interface
	nodes  corelisters.NodeLister
	log    *slog.Logger
}

// New builds the controller.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*certificatecontroller.Controller, error) {
	a := &approver{client: client, nodes: factory.Core().V1().Nodes().Lister(), log: log}
	return certificatecontroller.New("csrapproving", factory, a.handle, metrics, log)
}

func (a *approver) handle(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	if certificates.HasTrueCondition(csr, certificatesv1.CertificateApproved) || certificates.HasTrueCondition(csr, certificatesv1.CertificateDenied) {
		return nil
	}
	req, err := certificates.ParseCSR(csr.Spec.Request)
	if err != nil {
		return fmt.Errorf("unable to parse csr %q: %v", csr.Name, err)
	}
	tried := Recognized(csr, req)
	for _, r := range recognizers {
		if !r.recognize(csr, req) {
			continue
		}
		if r.subresource == SelfNodeServerSubresource {
			node, err := a.nodes.Get(strings.TrimPrefix(req.Subject.CommonName, "system:node:"))
			if err != nil {
				return fmt.Errorf("serving certificate request %q: node: %w", csr.Name, err)
			}
			if err := namesOwnAddresses(node, req); err != nil {
				a.log.Info("not approving serving certificate", "csr", csr.Name, "reason", err)
				continue
			}
		}
		ok, err := a.authorize(ctx, csr, r.subresource)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
			Reason: "AutoApproved", Message: r.message,
		})
		if _, err := a.client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("error updating approval for csr: %v", err)
		}
		a.log.Info("approved certificate request", "csr", csr.Name, "signer", csr.Spec.SignerName, "requestor", csr.Spec.Username)
		return nil
	}
	if len(tried) > 0 {
		// Retried later: the requestor may be granted the permission.
		return fmt.Errorf("recognized csr %q as %v but subject access review was not approved", csr.Name, tried)
	}
	return nil
}

// authorize asks whether the requestor may create the subresource.
func (a *approver) authorize(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, subresource string) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range csr.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := a.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups, Extra: extra,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Group: certificatesv1.GroupName, Resource: "certificatesigningrequests", Verb: "create", Subresource: subresource,
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}
