// Package ttlafterfinished deletes finished Jobs whose
// ttlSecondsAfterFinished has passed, as upstream's TTL-after-finished
// controller: deletion is Foreground, so the Job's pods go first, and a
// Job not yet due is requeued for exactly the time it has left.
package ttlafterfinished

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Controller deletes expired Jobs. Keys are namespace/name.
type Controller struct {
	client    kubernetes.Interface
	jobLister batchlisters.JobLister
	synced    cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	clock     clock.PassiveClock
	log       *slog.Logger
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	return newController(client, factory, metrics, log, clock.RealClock{})
}

func newController(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger, clk clock.PassiveClock) (*Controller, error) {
	inf := factory.Batch().V1().Jobs()
	c := &Controller{
		client:    client,
		jobLister: inf.Lister(),
		synced:    inf.Informer().HasSynced,
		queue:     controllerutil.NewQueue[string]("ttl_jobs_to_delete", metrics),
		clock:     clk,
		log:       log.With("controller", "ttl-after-finished"),
	}
	enqueue := func(obj any) {
		j, ok := obj.(*batchv1.Job)
		if !ok || !needsCleanup(j) {
			return
		}
		if key, err := cache.MetaNamespaceKeyFunc(j); err == nil {
			c.queue.Add(key)
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, cur any) { enqueue(cur) },
	}); err != nil {
		return nil, fmt.Errorf("ttl-after-finished: job handler: %w", err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "ttl-after-finished" }

// Run processes Jobs until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "ttl-after-finished", Synced: []cache.InformerSynced{c.synced},
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "job")},
	}.Run(ctx)
}

// needsCleanup is a finished Job with a TTL that is not already going.
func needsCleanup(j *batchv1.Job) bool {
	return j.Spec.TTLSecondsAfterFinished != nil && j.DeletionTimestamp == nil && finishedAt(j) != nil
}

// finishedAt is when the Job's terminal condition became true.
func finishedAt(j *batchv1.Job) *time.Time {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == v1.ConditionTrue {
			t := c.LastTransitionTime.Time
			return &t
		}
	}
	return nil
}

// timeLeft is how long until the Job expires (zero or less: due now).
func timeLeft(j *batchv1.Job, now time.Time) (time.Duration, error) {
	fin := finishedAt(j)
	if fin == nil || fin.IsZero() {
		return 0, fmt.Errorf("unable to find the time when the Job %s/%s finished", j.Namespace, j.Name)
	}
	expire := fin.Add(time.Duration(*j.Spec.TTLSecondsAfterFinished) * time.Second)
	return expire.Sub(now), nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	j, err := c.jobLister.Jobs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if due, err := c.due(key, j); err != nil || !due {
		return err
	}
	// The cache may be stale (the TTL changed, the Job was recreated):
	// decide again on the live object before deleting it.
	fresh, err := c.client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get job %s: %w", key, err)
	}
	if due, err := c.due(key, fresh); err != nil || !due {
		return err
	}
	policy := metav1.DeletePropagationForeground
	err = c.client.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{
		PropagationPolicy: &policy,
		Preconditions:     &metav1.Preconditions{UID: &fresh.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete expired job %s: %w", key, err)
	}
	c.log.Info("deleted expired job", "job", key)
	return nil
}

// due reports whether j has expired, requeueing it for the time it has
// left otherwise.
func (c *Controller) due(key string, j *batchv1.Job) (bool, error) {
	if !needsCleanup(j) {
		return false, nil
	}
	left, err := timeLeft(j, c.clock.Now())
	if err != nil {
		return false, err
	}
	if left > 0 {
		c.queue.AddAfter(key, left)
		return false, nil
	}
	return true, nil
}
