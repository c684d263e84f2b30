// Package csrcleaner holds upstream's two certificate cleaners: csrcleaner
// deletes CertificateSigningRequests once they are done with (issued or
// denied or failed for an hour, pending for a day, or with an expired
// certificate), and podcertificaterequest-cleaner deletes
// PodCertificateRequests half an hour after their creation; kubelets have
// read the outcome by then.
package csrcleaner

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Upstream's ages.
const (
	pollInterval       = time.Hour
	approvedExpiration = time.Hour
	deniedExpiration   = time.Hour
	pendingExpiration  = 24 * time.Hour

	pcrPollInterval = time.Minute
	pcrMaxAge       = 30 * time.Minute
)

// Expired says whether a request is due for deletion at now, and why.
func Expired(csr *certificatesv1.CertificateSigningRequest, now time.Time) (bool, string) {
	issued := len(csr.Status.Certificate) > 0
	older := func(t metav1.Time, d time.Duration) bool { return !t.IsZero() && now.Sub(t.Time) > d }
	for _, c := range csr.Status.Conditions {
		switch {
		case c.Type == certificatesv1.CertificateApproved && issued && older(c.LastUpdateTime, approvedExpiration):
			return true, "issued more than an hour ago"
		case c.Type == certificatesv1.CertificateDenied && older(c.LastUpdateTime, deniedExpiration):
			return true, "denied more than an hour ago"
		case c.Type == certificatesv1.CertificateFailed && older(c.LastUpdateTime, deniedExpiration):
			return true, "failed more than an hour ago"
		}
	}
	if len(csr.Status.Conditions) == 0 && older(csr.CreationTimestamp, pendingExpiration) {
		return true, "pending for more than a day"
	}
	if issued && certificateExpired(csr.Status.Certificate, now) {
		for _, c := range csr.Status.Conditions {
			if c.Type == certificatesv1.CertificateApproved {
				return true, "its certificate has expired"
			}
		}
	}
	return false, ""
}

func certificateExpired(data []byte, now time.Time) bool {
	block, _ := pem.Decode(data)
	if block == nil {
		return false
	}
	certs, err := x509.ParseCertificates(block.Bytes)
	if err != nil || len(certs) == 0 {
		return false
	}
	return now.After(certs[0].NotAfter)
}

// Cleaner is the csrcleaner controller.
type Cleaner struct {
	client kubernetes.Interface
	lister certificateslisters.CertificateSigningRequestLister
	synced cache.InformerSynced
	now    func() time.Time
	log    *slog.Logger
}

// New builds the CSR cleaner over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, log *slog.Logger) *Cleaner {
	inf := factory.Certificates().V1().CertificateSigningRequests()
	return &Cleaner{client: client, lister: inf.Lister(), synced: inf.Informer().HasSynced, now: time.Now, log: log.With("controller", "csrcleaner")}
}

func (c *Cleaner) Name() string { return "csrcleaner" }

// Run looks at every request once an hour, as upstream.
func (c *Cleaner) Run(ctx context.Context, _ int) error {
	return controllerutil.Loop{
		Name: "csrcleaner", Synced: []cache.InformerSynced{c.synced},
		Alongside: []func(context.Context){controllerutil.Every(pollInterval, c.clean)},
	}.Run(ctx)
}

func (c *Cleaner) clean(ctx context.Context) {
	csrs, err := c.lister.List(labels.Everything())
	if err != nil {
		c.log.Warn("list failed", "err", err)
		return
	}
	now := c.now()
	for _, csr := range csrs {
		expired, why := Expired(csr, now)
		if !expired {
			continue
		}
		err := c.client.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: ptr.To(csr.UID)},
		})
		switch {
		case err == nil:
			c.log.Info("deleted certificate signing request", "csr", csr.Name, "because", why)
		case !apierrors.IsNotFound(err):
			c.log.Warn("delete failed", "csr", csr.Name, "err", err)
		}
	}
}
