// Package tokencleaner deletes bootstrap tokens once they expire, as
// upstream's tokencleaner controller: the authenticator already refuses
// an expired token, and this keeps kube-system from filling with them.
// A token not yet due is requeued for exactly the time it has left.
package tokencleaner

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstrapsecrets "k8s.io/cluster-bootstrap/util/secrets"
	"k8s.io/utils/clock"

	"github.com/orca-project/orca/internal/auth/bootstraptoken"
	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Controller deletes expired bootstrap token Secrets. Keys are names in
// kube-system.
type Controller struct {
	client  kubernetes.Interface
	factory informers.SharedInformerFactory
	secrets corelisters.SecretLister
	synced  cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	clock   clock.PassiveClock
	log     *slog.Logger
}

// New builds the controller. Its role reads Secrets in kube-system only,
// so it watches them through an informer of its own, limited to that
// namespace and to bootstrap tokens.
func New(client kubernetes.Interface, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	return newController(client, metrics, log, clock.RealClock{})
}

func newController(client kubernetes.Interface, metrics workqueue.MetricsProvider, log *slog.Logger, clk clock.PassiveClock) (*Controller, error) {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(metav1.NamespaceSystem),
		informers.WithTweakListOptions(bootstraptoken.OnlyTokens))
	inf := factory.Core().V1().Secrets()
	c := &Controller{
		client: client, factory: factory, secrets: inf.Lister(), synced: inf.Informer().HasSynced,
		queue: controllerutil.NewQueue[string]("token_cleaner", metrics),
		clock: clk, log: log.With("controller", "tokencleaner"),
	}
	enqueue := func(obj any) {
		if s, ok := obj.(*v1.Secret); ok {
			c.queue.Add(s.Name)
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, cur any) { enqueue(cur) },
	}); err != nil {
		return nil, fmt.Errorf("tokencleaner: secret handler: %w", err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "tokencleaner" }

// Run deletes expired tokens until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	c.factory.Start(ctx.Done())
	defer c.factory.Shutdown()
	return controllerutil.Loop{
		Name: "tokencleaner", Synced: []cache.InformerSynced{c.synced},
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "secret")},
	}.Run(ctx)
}

// timeLeft is how long a token Secret has until it expires; ok is false
// for one that never does.
func timeLeft(s *v1.Secret, now time.Time) (left time.Duration, ok bool) {
	if bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenExpirationKey) == "" {
		return 0, false
	}
	left, expired := bootstrapsecrets.GetExpiration(s, now)
	if expired {
		return 0, true
	}
	return left, true
}

func (c *Controller) sync(ctx context.Context, name string) error {
	s, err := c.secrets.Secrets(metav1.NamespaceSystem).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if s.Type != bootstrapapi.SecretTypeBootstrapToken || s.DeletionTimestamp != nil {
		return nil
	}
	left, expires := timeLeft(s, c.clock.Now())
	if !expires {
		return nil
	}
	if left > 0 {
		c.queue.AddAfter(name, left)
		return nil
	}
	err = c.client.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete expired token %s: %w", name, err)
	}
	c.log.Info("deleted expired bootstrap token", "secret", name)
	return nil
}
