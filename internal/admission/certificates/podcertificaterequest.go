package certificates

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/auth/node"
)

// PodCertificateSigning refuses a PodCertificateRequest's status to
// anyone without the sign verb for its signer. Upstream makes the check
// in the status strategy, after validation, and answers with a validation
// error; so does this.
type PodCertificateSigning struct{ signerCheck }

// NewPodCertificateSigning checks status writes with authz.
func NewPodCertificateSigning(authz authorizer.UnconditionalAuthorizer) *PodCertificateSigning {
	return &PodCertificateSigning{signerCheck{authz}}
}

func (*PodCertificateSigning) Name() string { return "PodCertificateRequestSigning" }

// Validate implements admission.Validator.
func (p *PodCertificateSigning) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Update || !is(a, pcrResource, "status") {
		return nil
	}
	pcr, ok := a.Object.(*certificatesv1.PodCertificateRequest)
	old, ok2 := a.OldObject.(*certificatesv1.PodCertificateRequest)
	if !ok || !ok2 || apiequality.Semantic.DeepEqual(pcr.Status, old.Status) {
		return nil
	}
	if !p.allowed(ctx, a, "sign", old.Spec.SignerName) {
		return apierrors.NewInvalid(certificatesv1.SchemeGroupVersion.WithKind("PodCertificateRequest").GroupKind(), old.Name, field.ErrorList{
			field.Forbidden(field.NewPath("spec", "signerName"), fmt.Sprintf("User %q is not permitted to \"sign\" for signer %q", a.UserName, old.Spec.SignerName)),
		})
	}
	return nil
}

// NodePodCertificates is NodeRestriction's rule for the requests a node
// creates: only for a pod bound to it, with the pod's, its service
// account's and the node's own names and UIDs, so that a signer can
// trust what the request says about its subject.
type NodePodCertificates struct {
	objects admission.Objects
}

// NewNodePodCertificates reads pods, nodes and service accounts through
// objects.
func NewNodePodCertificates(objects admission.Objects) *NodePodCertificates {
	return &NodePodCertificates{objects: objects}
}

func (*NodePodCertificates) Name() string { return "NodeRestriction(PodCertificateRequest)" }

var (
	podsGVR            = corev1.SchemeGroupVersion.WithResource("pods")
	nodesGVR           = corev1.SchemeGroupVersion.WithResource("nodes")
	serviceAccountsGVR = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
)

// Validate implements admission.Validator.
func (p *NodePodCertificates) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Create || !is(a, pcrResource, "") {
		return nil
	}
	nodeName, isNode := node.Identity(&user.DefaultInfo{Name: a.UserName, Groups: a.Groups})
	if !isNode {
		return nil
	}
	if nodeName == "" {
		return admission.NewForbidden(a, fmt.Errorf("could not determine node from user %q", a.UserName))
	}
	pcr, ok := a.Object.(*certificatesv1.PodCertificateRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type PodCertificateRequest, got: %T", a.Object))
	}
	if err := p.check(ctx, nodeName, a.Namespace, pcr); err != nil {
		return admission.NewForbidden(a, err)
	}
	return nil
}

func (p *NodePodCertificates) check(ctx context.Context, nodeName, ns string, pcr *certificatesv1.PodCertificateRequest) error {
	if string(pcr.Spec.NodeName) != nodeName {
		return fmt.Errorf("PodCertificateRequest.Spec.NodeName=%q, which is not the requesting node %q", pcr.Spec.NodeName, nodeName)
	}
	obj, err := p.objects.Get(ctx, nodesGVR, "", nodeName)
	if err != nil {
		return fmt.Errorf("while retrieving node %q named in the PodCertificateRequest: %w", nodeName, err)
	}
	if n := obj.(*corev1.Node); n.UID != pcr.Spec.NodeUID {
		return fmt.Errorf("PodCertificateRequest.Spec.NodeUID=%q, which is not the UID of the requesting node %q", pcr.Spec.NodeUID, n.UID)
	}
	obj, err = p.objects.Get(ctx, podsGVR, ns, pcr.Spec.PodName)
	if err != nil {
		return fmt.Errorf("while retrieving pod %q named in the PodCertificateRequest: %w", pcr.Spec.PodName, err)
	}
	pod := obj.(*corev1.Pod)
	if pod.UID != pcr.Spec.PodUID {
		return fmt.Errorf("PodCertificateRequest.Spec.PodUID=%q, which is not the UID of pod %q (%q)", pcr.Spec.PodUID, pod.Name, pod.UID)
	}
	if pod.Spec.NodeName != nodeName {
		return fmt.Errorf("pod %q is not bound to the requesting node %q", pod.Name, nodeName)
	}
	if pod.Spec.ServiceAccountName != pcr.Spec.ServiceAccountName {
		return fmt.Errorf("PodCertificateRequest.Spec.ServiceAccountName=%q, which is not the service account of pod %q (%q)", pcr.Spec.ServiceAccountName, pod.Name, pod.Spec.ServiceAccountName)
	}
	obj, err = p.objects.Get(ctx, serviceAccountsGVR, ns, pcr.Spec.ServiceAccountName)
	if err != nil {
		return fmt.Errorf("while retrieving service account %q named in the PodCertificateRequest: %w", pcr.Spec.ServiceAccountName, err)
	}
	if sa := obj.(*corev1.ServiceAccount); sa.UID != pcr.Spec.ServiceAccountUID {
		return fmt.Errorf("PodCertificateRequest.Spec.ServiceAccountUID=%q, which is not the UID of service account %q (%q)", pcr.Spec.ServiceAccountUID, sa.Name, sa.UID)
	}
	return nil
}
