// Package csrsigning is upstream's csrsigning controller: it signs the
// approved CertificateSigningRequests of the built-in signers
// (kubernetes.io/kube-apiserver-client, kube-apiserver-client-kubelet,
// kubelet-serving and legacy-unknown) with the cluster CA, after each
// signer's checks of subject and usages; a request a signer refuses gets
// a Failed condition instead.
package csrsigning

import (
	"context"
	"encoding/pem"
	"fmt"
	"log/slog"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/auth/certificates"
	"github.com/orca-project/orca/internal/controller/certificatecontroller"
)

// DefaultDuration is upstream's --cluster-signing-duration: the longest
// a certificate lasts, whatever it asks.
const DefaultDuration = 365 * 24 * time.Hour

// Action is what the signer does with a request.
type Action int

// The signer's possible actions.
const (
	// Ignore: not approved, already failed, or not a built-in signer.
	Ignore Action = iota
	// Fail: the signer refuses the request; Decision.Message says why.
	Fail
	// Sign: issue the certificate.
	Sign
)

// Decision is the signer's verdict on a request.
type Decision struct {
	Action  Action
	Message string
}

// Decide is the pure part of the signer: approved requests of built-in
// signers are signed when they pass the signer's checks and failed
// otherwise; everything else is left alone. A request that does not
// parse is an error (validation should have refused it).
func Decide(csr *certificatesv1.CertificateSigningRequest) (Decision, error) {
	if !certificates.IsApproved(csr) || certificates.HasTrueCondition(csr, certificatesv1.CertificateFailed) {
		return Decision{}, nil
	}
	switch csr.Spec.SignerName {
	case certificatesv1.KubeAPIServerClientSignerName, certificatesv1.KubeAPIServerClientKubeletSignerName,
		certificatesv1.KubeletServingSignerName, certificates.LegacyUnknownSignerName:
	default:
		return Decision{}, nil
	}
	req, err := certificates.ParseCSR(csr.Spec.Request)
	if err != nil {
		return Decision{}, fmt.Errorf("unable to parse csr %q: %v", csr.Name, err)
	}
	if _, err := certificates.CheckForSigner(csr.Spec.SignerName, req, csr.Spec.Usages); err != nil {
		return Decision{Action: Fail, Message: err.Error()}, nil
	}
	return Decision{Action: Sign}, nil
}

type signer struct {
	client kubernetes.Interface
	ca     *Authority
	max    time.Duration
	now    func() time.Time
	log    *slog.Logger
}

// New builds the controller: ca signs, for at most maxDuration.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, ca *Authority, maxDuration time.Duration, metrics workqueue.MetricsProvider, log *slog.Logger) (*certificatecontroller.Controller, error) {
	if maxDuration <= 0 {
		maxDuration = DefaultDuration
	}
	s := &signer{client: client, ca: ca, max: maxDuration, now: time.Now, log: log}
	return certificatecontroller.New("csrsigning", factory, s.handle, metrics, log)
}

func (s *signer) handle(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	d, err := Decide(csr)
	if err != nil {
		return err
	}
	switch d.Action {
	case Fail:
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue,
			Reason: "SignerValidationFailure", Message: d.Message, LastUpdateTime: metav1.NewTime(s.now()),
		})
		if _, err := s.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("error adding failure condition for csr: %v", err)
		}
		s.log.Info("refused certificate signing request", "csr", csr.Name, "signer", csr.Spec.SignerName, "reason", d.Message)
	case Sign:
		block, _ := pem.Decode(csr.Spec.Request)
		der, err := s.ca.Sign(block.Bytes, csr.Spec.Usages, Duration(csr.Spec.ExpirationSeconds, s.max), s.now())
		if err != nil {
			return fmt.Errorf("error auto signing csr: %v", err)
		}
		csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		if _, err := s.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("error updating signature for csr: %v", err)
		}
		s.log.Info("signed certificate signing request", "csr", csr.Name, "signer", csr.Spec.SignerName)
	}
	return nil
}
