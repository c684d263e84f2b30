package csrcleaner

import (
	"context"
	"log/slog"
	"time"

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

// PCRCleaner is the podcertificaterequest-cleaner controller.
type PCRCleaner struct {
	client kubernetes.Interface
	lister certificateslisters.PodCertificateRequestLister
	synced cache.InformerSynced
	now    func() time.Time
	log    *slog.Logger
}

// NewPCR builds the PodCertificateRequest cleaner over the shared
// informers.
func NewPCR(client kubernetes.Interface, factory informers.SharedInformerFactory, log *slog.Logger) *PCRCleaner {
	inf := factory.Certificates().V1().PodCertificateRequests()
	return &PCRCleaner{client: client, lister: inf.Lister(), synced: inf.Informer().HasSynced, now: time.Now, log: log.With("controller", "podcertificaterequest-cleaner")}
}

func (c *PCRCleaner) Name() string { return "podcertificaterequest-cleaner" }

// Run looks at every request once a minute.
func (c *PCRCleaner) Run(ctx context.Context, _ int) error {
	return controllerutil.Loop{
		Name: "podcertificaterequest-cleaner", Synced: []cache.InformerSynced{c.synced},
		Alongside: []func(context.Context){controllerutil.Every(pcrPollInterval, c.clean)},
	}.Run(ctx)
}

func (c *PCRCleaner) clean(ctx context.Context) {
	pcrs, err := c.lister.List(labels.Everything())
	if err != nil {
		c.log.Warn("list failed", "err", err)
		return
	}
	now := c.now()
	for _, pcr := range pcrs {
		if now.Before(pcr.CreationTimestamp.Add(pcrMaxAge)) {
			continue
		}
		err := c.client.CertificatesV1().PodCertificateRequests(pcr.Namespace).Delete(ctx, pcr.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: ptr.To(pcr.UID)},
		})
		if err != nil && !apierrors.IsNotFound(err) {
			c.log.Warn("delete failed", "pcr", pcr.Namespace+"/"+pcr.Name, "err", err)
		}
	}
}
