// Package cronjob creates Jobs on a cron schedule, as upstream's CronJob
// controller (v2): one Job per scheduled time, named after that time so a
// restart never creates it twice; concurrency policies Allow, Forbid and
// Replace; startingDeadlineSeconds and at most one catch-up run after
// downtime; time zones; history limits; status.active, lastScheduleTime
// and lastSuccessfulTime. Time comes from an injected clock.
package cronjob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/tools/reference"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/controller/controllerutil"
	"github.com/orca-project/orca/internal/cron"
)

var controllerKind = batchv1.SchemeGroupVersion.WithKind("CronJob")

// Controller reconciles CronJobs. Keys are namespace/name.
type Controller struct {
	client    kubernetes.Interface
	cjLister  batchlisters.CronJobLister
	jobLister batchlisters.JobLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	events    record.EventBroadcaster
	recorder  record.EventRecorder
	clock     clock.PassiveClock
	log       *slog.Logger
}

// New builds the controller over the shared informers, on the real clock.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	events := record.NewBroadcaster()
	recorder := events.NewRecorder(scheme.Scheme, v1.EventSource{Component: "cronjob-controller"})
	return newController(client, factory, metrics, log, clock.RealClock{}, events, recorder)
}

func newController(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger,
	clk clock.PassiveClock, events record.EventBroadcaster, recorder record.EventRecorder) (*Controller, error) {
	cjInf := factory.Batch().V1().CronJobs()
	jobInf := factory.Batch().V1().Jobs()
	c := &Controller{
		client:    client,
		cjLister:  cjInf.Lister(),
		jobLister: jobInf.Lister(),
		synced:    []cache.InformerSynced{cjInf.Informer().HasSynced, jobInf.Informer().HasSynced},
		queue:     controllerutil.NewQueue[string]("cronjob", metrics),
		events:    events,
		recorder:  recorder,
		clock:     clk,
		log:       log.With("controller", "cronjob"),
	}
	if _, err := cjInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, fmt.Errorf("cronjob: cronjob handler: %w", err)
	}
	if _, err := jobInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.jobChanged,
		UpdateFunc: func(_, cur any) { c.jobChanged(cur) },
		DeleteFunc: c.jobChanged,
	}); err != nil {
		return nil, fmt.Errorf("cronjob: job handler: %w", err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "cronjob" }

// Run processes CronJobs until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "cronjob", Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.syncKey, c.log, "cronjob")},
	}.Run(ctx)
}

// syncKey brings a CronJob back at its next schedule.
func (c *Controller) syncKey(ctx context.Context, key string) error {
	requeue, err := c.sync(ctx, key)
	if err == nil && requeue != nil {
		return controllerutil.RequeueAfter(*requeue)
	}
	return err
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) jobChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	j, ok := obj.(*batchv1.Job)
	if !ok {
		return
	}
	ref := metav1.GetControllerOf(j)
	if ref == nil || ref.Kind != controllerKind.Kind {
		return
	}
	cj, err := c.cjLister.CronJobs(j.Namespace).Get(ref.Name)
	if err != nil || cj.UID != ref.UID {
		return
	}
	c.enqueue(cj)
}

// sync reconciles one CronJob and returns when to look at it again.
func (c *Controller) sync(ctx context.Context, key string) (*time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, nil
	}
	shared, err := c.cjLister.CronJobs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	all, err := c.jobLister.Jobs(ns).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var jobs []*batchv1.Job
	for _, j := range all {
		if ref := metav1.GetControllerOf(j); ref != nil && ref.Kind == controllerKind.Kind && ref.Name == shared.Name {
			jobs = append(jobs, j)
		}
	}
	cj := shared.DeepCopy()
	cleaned := c.cleanupFinishedJobs(ctx, cj, jobs)
	requeue, changed, syncErr := c.syncCronJob(ctx, cj, jobs)
	if cleaned || changed {
		if _, err := c.client.BatchV1().CronJobs(ns).UpdateStatus(ctx, cj, metav1.UpdateOptions{}); err != nil {
			return nil, errors.Join(syncErr, fmt.Errorf("update status of cronjob %s: %w", key, err))
		}
	}
	return requeue, syncErr
}

func jobFinished(j *batchv1.Job) (bool, batchv1.JobConditionType) {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == v1.ConditionTrue {
			return true, c.Type
		}
	}
	return false, ""
}

func inActive(cj *batchv1.CronJob, uid types.UID) bool {
	for _, r := range cj.Status.Active {
		if r.UID == uid {
			return true
		}
	}
	return false
}

func removeActive(cj *batchv1.CronJob, uid types.UID) {
	out := cj.Status.Active[:0]
	for _, r := range cj.Status.Active {
		if r.UID != uid {
			out = append(out, r)
		}
	}
	cj.Status.Active = out
}

// syncCronJob is upstream's syncCronJob: reconcile status.active with the
// Jobs, then start the Job for the most recent unmet time if allowed.
func (c *Controller) syncCronJob(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) (*time.Duration, bool, error) {
	now := c.clock.Now()
	changed := false
	children := map[types.UID]bool{}
	for _, j := range jobs {
		children[j.UID] = true
		found := inActive(cj, j.UID)
		finished, cond := jobFinished(j)
		switch {
		case !found && !finished:
			fresh, err := c.client.BatchV1().CronJobs(cj.Namespace).Get(ctx, cj.Name, metav1.GetOptions{})
			if err != nil {
				return nil, changed, fmt.Errorf("get cronjob %s/%s: %w", cj.Namespace, cj.Name, err)
			}
			if inActive(fresh, j.UID) {
				// Our cache was behind our own status update.
				cj.Status.Active = fresh.Status.Active
				continue
			}
			c.recorder.Eventf(cj, v1.EventTypeWarning, "UnexpectedJob", "Saw a job that the controller did not create or forgot: %s", j.Name)
		case found && finished:
			removeActive(cj, j.UID)
			c.recorder.Eventf(cj, v1.EventTypeNormal, "SawCompletedJob", "Saw completed job: %s, condition: %v", j.Name, cond)
			changed = true
		}
		if finished && cond == batchv1.JobComplete && j.Status.CompletionTime != nil {
			if cj.Status.LastSuccessfulTime == nil || j.Status.CompletionTime.After(cj.Status.LastSuccessfulTime.Time) {
				cj.Status.LastSuccessfulTime = j.Status.CompletionTime.DeepCopy()
				changed = true
			}
		}
	}
	for _, r := range append([]v1.ObjectReference(nil), cj.Status.Active...) {
		if children[r.UID] {
			continue
		}
		// The cache may just be slow; ask the API server.
		_, err := c.client.BatchV1().Jobs(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			c.recorder.Eventf(cj, v1.EventTypeNormal, "MissingJob", "Active job went missing: %v", r.Name)
			removeActive(cj, r.UID)
			changed = true
		case err != nil:
			return nil, changed, fmt.Errorf("get job %s/%s: %w", r.Namespace, r.Name, err)
		}
	}

	if cj.DeletionTimestamp != nil {
		return nil, changed, nil
	}
	var loc *time.Location
	if cj.Spec.TimeZone != nil {
		l, err := time.LoadLocation(*cj.Spec.TimeZone)
		if err != nil {
			c.recorder.Eventf(cj, v1.EventTypeWarning, "UnknownTimeZone", "invalid timeZone: %q: %s", *cj.Spec.TimeZone, err)
			return nil, changed, nil
		}
		loc = l
	}
	if ptr.Deref(cj.Spec.Suspend, false) {
		return nil, changed, nil
	}
	sched, err := cron.Parse(cj.Spec.Schedule, loc)
	if err != nil {
		c.recorder.Eventf(cj, v1.EventTypeWarning, "UnparseableSchedule", "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		return nil, changed, nil
	}
	_, scheduled, m, _, err := mostRecentScheduleTime(cj, now, sched, true)
	if err != nil {
		c.recorder.Eventf(cj, v1.EventTypeWarning, "InvalidSchedule", "invalid schedule: %s : %s", cj.Spec.Schedule, err)
		return nil, changed, nil
	}
	if scheduled == nil || scheduled.After(now) {
		return nextRequeue(cj, now, sched), changed, nil
	}
	if m == manyMissed {
		c.recorder.Eventf(cj, v1.EventTypeWarning, "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
		c.log.Info("too many missed times", "cronjob", cj.Namespace+"/"+cj.Name)
	}
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && scheduled.Add(time.Duration(*d)*time.Second).Before(now) {
		c.recorder.Eventf(cj, v1.EventTypeWarning, "MissSchedule", "Missed scheduled time to start a job: %s", scheduled.UTC().Format(time.RFC1123Z))
		return nextRequeue(cj, now, sched), changed, nil
	}
	jobName := JobName(cj.Name, *scheduled)
	if activeByName(cj, jobName) || (cj.Status.LastScheduleTime != nil && cj.Status.LastScheduleTime.Time.Equal(*scheduled)) {
		return nextRequeue(cj, now, sched), changed, nil
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(cj.Status.Active) > 0 {
		c.recorder.Eventf(cj, v1.EventTypeNormal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
		return nextRequeue(cj, now, sched), changed, nil
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ReplaceConcurrent {
		for _, r := range append([]v1.ObjectReference(nil), cj.Status.Active...) {
			j, err := c.client.BatchV1().Jobs(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
			if err != nil {
				c.recorder.Eventf(cj, v1.EventTypeWarning, "FailedGet", "Get job: %v", err)
				return nil, changed, fmt.Errorf("get job %s/%s: %w", r.Namespace, r.Name, err)
			}
			if !c.deleteJob(ctx, cj, j) {
				return nil, changed, fmt.Errorf("could not replace job %s/%s", j.Namespace, j.Name)
			}
			changed = true
		}
	}

	req, err := JobFromTemplate(cj, *scheduled)
	if err != nil {
		return nil, changed, err
	}
	created, err := c.client.BatchV1().Jobs(cj.Namespace).Create(ctx, req, metav1.CreateOptions{})
	switch {
	case apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause):
		return nil, changed, err
	case apierrors.IsAlreadyExists(err):
		existing, err := c.client.BatchV1().Jobs(cj.Namespace).Get(ctx, req.Name, metav1.GetOptions{})
		if err != nil {
			return nil, changed, fmt.Errorf("get job %s/%s: %w", cj.Namespace, req.Name, err)
		}
		// Someone else's Job of that name, or ours already recorded.
		if !metav1.IsControlledBy(existing, cj) || inActive(cj, existing.UID) {
			return nil, changed, nil
		}
		created = existing
	case err != nil:
		c.recorder.Eventf(cj, v1.EventTypeWarning, "FailedCreate", "Error creating job: %v", err)
		return nil, changed, fmt.Errorf("create job for cronjob %s/%s: %w", cj.Namespace, cj.Name, err)
	default:
		c.recorder.Eventf(cj, v1.EventTypeNormal, "SuccessfulCreate", "Created job %v", created.Name)
	}
	ref, err := reference.GetReference(scheme.Scheme, created)
	if err != nil {
		return nil, changed, fmt.Errorf("reference job %s: %w", created.Name, err)
	}
	cj.Status.Active = append(cj.Status.Active, *ref)
	cj.Status.LastScheduleTime = &metav1.Time{Time: *scheduled}
	return nextRequeue(cj, now, sched), true, nil
}

func activeByName(cj *batchv1.CronJob, name string) bool {
	for _, r := range cj.Status.Active {
		if r.Name == name && r.Namespace == cj.Namespace {
			return true
		}
	}
	return false
}

// JobName is the deterministic name of the Job for a scheduled time, the
// lock that keeps a restarted controller from creating it twice.
func JobName(cronJobName string, scheduled time.Time) string {
	return fmt.Sprintf("%s-%d", cronJobName, scheduled.Unix()/60)
}

// JobFromTemplate builds the Job for a scheduled time, as upstream: the
// template's labels, annotations and spec, the scheduled-timestamp
// annotation in the CronJob's zone, and the controller reference.
func JobFromTemplate(cj *batchv1.CronJob, scheduled time.Time) (*batchv1.Job, error) {
	loc, err := time.LoadLocation(ptr.Deref(cj.Spec.TimeZone, ""))
	if err != nil {
		return nil, err
	}
	lbls := map[string]string{}
	for k, v := range cj.Spec.JobTemplate.Labels {
		lbls[k] = v
	}
	annotations := map[string]string{}
	for k, v := range cj.Spec.JobTemplate.Annotations {
		annotations[k] = v
	}
	annotations[batchv1.CronJobScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:              JobName(cj.Name, scheduled),
			Namespace:         cj.Namespace,
			Labels:            lbls,
			Annotations:       annotations,
			CreationTimestamp: metav1.Time{Time: scheduled},
			OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(cj, controllerKind)},
		},
	}
	cj.Spec.JobTemplate.Spec.DeepCopyInto(&j.Spec)
	return j, nil
}

// cleanupFinishedJobs keeps the newest successfulJobsHistoryLimit
// complete and failedJobsHistoryLimit failed Jobs.
func (c *Controller) cleanupFinishedJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) bool {
	if cj.Spec.SuccessfulJobsHistoryLimit == nil && cj.Spec.FailedJobsHistoryLimit == nil {
		return false
	}
	var succeeded, failed []*batchv1.Job
	for _, j := range jobs {
		switch done, cond := jobFinished(j); {
		case done && cond == batchv1.JobComplete:
			succeeded = append(succeeded, j)
		case done && cond == batchv1.JobFailed:
			failed = append(failed, j)
		}
	}
	changed := false
	if l := cj.Spec.SuccessfulJobsHistoryLimit; l != nil {
		for _, j := range oldestBeyond(succeeded, int(*l)) {
			changed = c.deleteJob(ctx, cj, j) || changed
		}
	}
	if l := cj.Spec.FailedJobsHistoryLimit; l != nil {
		for _, j := range oldestBeyond(failed, int(*l)) {
			changed = c.deleteJob(ctx, cj, j) || changed
		}
	}
	return changed
}

// oldestBeyond returns the Jobs past the newest keep, oldest first, by
// start time (never-started ones count as newest), then name.
func oldestBeyond(jobs []*batchv1.Job, keep int) []*batchv1.Job {
	n := len(jobs) - keep
	if n <= 0 {
		return nil
	}
	sorted := append([]*batchv1.Job(nil), jobs...)
	sort.SliceStable(sorted, func(a, b int) bool {
		sa, sb := sorted[a].Status.StartTime, sorted[b].Status.StartTime
		switch {
		case sa == nil && sb != nil:
			return false
		case sa != nil && sb == nil:
			return true
		case sa == nil && sb == nil || sa.Equal(sb):
			return sorted[a].Name < sorted[b].Name
		}
		return sa.Before(sb)
	})
	return sorted[:n]
}

// deleteJob deletes a Job in the background, as upstream, and forgets it
// from status.active.
func (c *Controller) deleteJob(ctx context.Context, cj *batchv1.CronJob, j *batchv1.Job) bool {
	bg := metav1.DeletePropagationBackground
	if err := c.client.BatchV1().Jobs(j.Namespace).Delete(ctx, j.Name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil && !apierrors.IsNotFound(err) {
		c.recorder.Eventf(cj, v1.EventTypeWarning, "FailedDelete", "Deleted job: %v", err)
		c.log.Warn("delete job", "job", j.Namespace+"/"+j.Name, "err", err)
		return false
	}
	removeActive(cj, j.UID)
	c.recorder.Eventf(cj, v1.EventTypeNormal, "SuccessfulDelete", "Deleted job %v", j.Name)
	return true
}
