package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

var labelsEverything = labels.Everything()

// maxPodsPerSync bounds the pods one sync creates or deletes, as upstream.
const maxPodsPerSync = 500

func hasTrackingFinalizer(p *v1.Pod) bool {
	return slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer)
}

func isIndexed(j *batchv1.Job) bool {
	return j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
}

func isSuspended(j *batchv1.Job) bool { return j.Spec.Suspend != nil && *j.Spec.Suspend }

// podCensus sorts a Job's pods by what they mean for its status.
type podCensus struct {
	active      []*v1.Pod
	ready       int
	terminating int
	// finished pods still carrying the finalizer: counted (or ignored by
	// the failure policy) and now to be released.
	release []*v1.Pod
	// newly counted pod UIDs, not yet in uncountedTerminatedPods.
	newSucceeded, newFailed []types.UID
	newIndexes              []int
	newFailedIndexes        []int
	failJobMessage          string
}

// takeCensus classifies pods as upstream's job controller does. A pod
// counts as failed when it reached phase Failed, or when it is being
// deleted before succeeding, unless replacements wait for phase Failed.
func takeCensus(j *batchv1.Job, pods []*v1.Pod) podCensus {
	var c podCensus
	uncounted := j.Status.UncountedTerminatedPods
	if uncounted == nil {
		uncounted = &batchv1.UncountedTerminatedPods{}
	}
	onlyFailed := j.Spec.PodReplacementPolicy != nil && *j.Spec.PodReplacementPolicy == batchv1.Failed
	for _, p := range pods {
		tracked := hasTrackingFinalizer(p)
		terminal := p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
		if p.DeletionTimestamp != nil && !terminal {
			c.terminating++
		}
		switch {
		case p.Status.Phase == v1.PodSucceeded:
			if !tracked {
				continue
			}
			if isIndexed(j) {
				if ix := podIndex(p); ix != noIndex && j.Spec.Completions != nil && ix < int(*j.Spec.Completions) {
					c.newIndexes = append(c.newIndexes, ix)
				}
			} else if !slices.Contains(uncounted.Succeeded, p.UID) {
				c.newSucceeded = append(c.newSucceeded, p.UID)
			}
			c.release = append(c.release, p)
		case p.Status.Phase == v1.PodFailed || (p.DeletionTimestamp != nil && !onlyFailed):
			if !tracked {
				continue
			}
			if !slices.Contains(uncounted.Failed, p.UID) {
				verdict := policyVerdict{count: true}
				if p.Status.Phase == v1.PodFailed {
					verdict = matchPodFailurePolicy(j.Spec.PodFailurePolicy, p)
				}
				if verdict.failJob && c.failJobMessage == "" {
					c.failJobMessage = verdict.message
				}
				if verdict.count {
					c.newFailed = append(c.newFailed, p.UID)
				}
				if hasPerIndexBackoff(j) && indexFailed(j, p, verdict) {
					if ix := podIndex(p); ix != noIndex {
						c.newFailedIndexes = append(c.newFailedIndexes, ix)
					}
				}
			}
			c.release = append(c.release, p)
		case p.DeletionTimestamp != nil:
			// Terminating; with podReplacementPolicy Failed it is neither
			// active nor failed until its phase says so.
		default:
			c.active = append(c.active, p)
			if controllerutil.IsPodReady(p) {
				c.ready++
			}
		}
	}
	return c
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	shared, err := c.jobLister.Jobs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	if shared.Spec.ManagedBy != nil && *shared.Spec.ManagedBy != managedBy {
		return nil
	}
	j := shared.DeepCopy()
	// Its own pods and the orphans it may adopt: no other pod concerns it.
	all, err := controllerutil.ControlledPods(c.podIndex, j, true)
	if err != nil {
		return err
	}
	if j.DeletionTimestamp != nil || isFinished(j) {
		return c.releaseAll(ctx, j, all)
	}
	// Read before listing: a creation observed in between then only makes
	// this sync more careful, never less.
	satisfied := c.expectations.Satisfied(key)
	sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
	if err != nil {
		return fmt.Errorf("job %s: selector: %w", key, err)
	}
	fresh := func(ctx context.Context) (metav1.Object, error) {
		return c.client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	}
	pods, err := c.podControl.ClaimPods(ctx, j, controllerKind, sel, all,
		controllerutil.RecheckOwner(fresh), controllerutil.WithFinalizers(batchv1.JobTrackingFinalizer))
	if err != nil {
		return err
	}
	now := c.clock.Now()
	census := takeCensus(j, pods)

	// A FailJob verdict is written with the update that records its pod
	// as uncounted, as upstream: once that pod's finalizer is released
	// no later sync can see the verdict again, so writing it afterwards
	// would lose it to any conflict in between.
	verdictSet := false
	if census.failJobMessage != "" && findInterim(j.Status.Conditions) == nil {
		j.Status.Conditions, _ = setCondition(j.Status.Conditions, batchv1.JobFailureTarget, v1.ConditionTrue,
			batchv1.JobReasonPodFailurePolicy, census.failJobMessage, now)
		verdictSet = true
	}
	j, err = c.flushUncounted(ctx, j, pods, census, verdictSet)
	if err != nil {
		return err
	}
	origStatus := j.Status.DeepCopy()
	st := &j.Status
	failed := st.Failed + int32(len(st.UncountedTerminatedPods.Failed))
	succeeded := st.Succeeded + int32(len(st.UncountedTerminatedPods.Succeeded))
	active := int32(len(census.active))
	terminating := int32(census.terminating)
	ready := int32(census.ready)

	interim := findInterim(st.Conditions)
	if interim == nil {
		var reason, msg string
		ctype := batchv1.JobFailureTarget
		switch {
		case census.failJobMessage != "":
			reason, msg = batchv1.JobReasonPodFailurePolicy, census.failJobMessage
		case failed > *j.Spec.BackoffLimit || pastBackoffLimitOnFailure(j, census.active):
			reason, msg = batchv1.JobReasonBackoffLimitExceeded, msgBackoffLimit
		case pastActiveDeadline(j, now):
			reason, msg = batchv1.JobReasonDeadlineExceeded, msgDeadline
		case hasPerIndexBackoff(j) && j.Spec.MaxFailedIndexes != nil && failedIndexes(j) > int(*j.Spec.MaxFailedIndexes):
			reason, msg = batchv1.JobReasonMaxFailedIndexesExceeded, msgMaxFailedIndexes
		case hasPerIndexBackoff(j) && failedIndexes(j) > 0 && int(succeeded)+failedIndexes(j) >= int(*j.Spec.Completions):
			reason, msg = batchv1.JobReasonFailedIndexes, msgFailedIndexes
		case successPolicyMet(j) != "":
			ctype, reason, msg = batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy, successPolicyMet(j)
		case isComplete(j, succeeded, active):
			ctype, reason, msg = batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached, msgCompletions
		}
		if reason != "" {
			st.Conditions, _ = setCondition(st.Conditions, ctype, v1.ConditionTrue, reason, msg, now)
			interim = findCondition(st.Conditions, ctype)
		} else if left, ok := deadlineLeft(j, now); ok {
			c.queue.AddAfter(key, left)
		}
	}

	var manageErr error
	finished := false
	if interim != nil {
		// The Job's fate is sealed: stop what still runs, keeping the
		// finalizers so failed pods are counted, then end once nothing
		// is left terminating or uncounted.
		if active > 0 {
			removed, err := c.deletePods(ctx, j, key, census.active, interim.Type != batchv1.JobSuccessCriteriaMet)
			manageErr = err
			active -= removed
			terminating += removed
			ready = 0
		}
		if active == 0 && terminating == 0 && uncountedEmpty(st.UncountedTerminatedPods) {
			st.Conditions, _ = setCondition(st.Conditions, terminalFor(interim.Type), v1.ConditionTrue, interim.Reason, interim.Message, now)
			if interim.Type == batchv1.JobSuccessCriteriaMet {
				t := metav1.NewTime(now)
				st.CompletionTime = &t
			}
			finished = true
		}
	} else {
		c.syncSuspension(j, now)
		if satisfied {
			var removed int32
			removed, manageErr = c.manage(ctx, j, key, census, succeeded, pods, now)
			active -= removed
			terminating += removed
		}
	}
	st.Active, st.Ready, st.Terminating = active, &ready, &terminating
	if st.Active < 0 {
		st.Active = 0
	}
	if !equality.Semantic.DeepEqual(origStatus, st) {
		if _, err := c.client.BatchV1().Jobs(ns).UpdateStatus(ctx, j, metav1.UpdateOptions{}); err != nil {
			return errors.Join(manageErr, fmt.Errorf("update status of job %s: %w", key, err))
		}
		if finished {
			c.recordFinished(j, interim)
		}
	}
	return manageErr
}

func ptrDeref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func failedIndexes(j *batchv1.Job) int {
	return len(parseIndexes(ptrDeref(j.Status.FailedIndexes), int(*j.Spec.Completions)))
}

// successPolicyMet returns the message of the first success policy rule
// an Indexed Job meets.
func successPolicyMet(j *batchv1.Job) string {
	if !isIndexed(j) || j.Spec.Completions == nil {
		return ""
	}
	done := parseIndexes(j.Status.CompletedIndexes, int(*j.Spec.Completions))
	msg, _ := matchSuccessPolicy(j.Spec.SuccessPolicy, int(*j.Spec.Completions), done)
	return msg
}

func findInterim(conds []batchv1.JobCondition) *batchv1.JobCondition {
	for _, t := range []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobSuccessCriteriaMet} {
		if c := findCondition(conds, t); c != nil && c.Status == v1.ConditionTrue {
			return c
		}
	}
	return nil
}

func uncountedEmpty(u *batchv1.UncountedTerminatedPods) bool {
	return u == nil || len(u.Succeeded) == 0 && len(u.Failed) == 0
}

func (c *Controller) recordFinished(j *batchv1.Job, interim *batchv1.JobCondition) {
	if interim.Type == batchv1.JobSuccessCriteriaMet {
		if j.Spec.Completions != nil && j.Status.Succeeded > *j.Spec.Completions {
			c.recorder.Event(j, v1.EventTypeWarning, "TooManySucceededPods", "Too many succeeded pods running after completion count reached")
		}
		c.recorder.Event(j, v1.EventTypeNormal, "Completed", "Job completed")
		return
	}
	c.recorder.Event(j, v1.EventTypeWarning, interim.Reason, interim.Message)
}

// isComplete: with completions, enough successes (every index, when
// indexed) and nothing running; without, one success and nothing running.
func isComplete(j *batchv1.Job, succeeded, active int32) bool {
	if j.Spec.Completions == nil {
		return succeeded > 0 && active == 0
	}
	if isIndexed(j) {
		return succeeded >= *j.Spec.Completions
	}
	return succeeded >= *j.Spec.Completions && active == 0
}

// pastBackoffLimitOnFailure counts container restarts of running pods when
// the kubelet, not the controller, retries (restartPolicy OnFailure).
func pastBackoffLimitOnFailure(j *batchv1.Job, active []*v1.Pod) bool {
	if j.Spec.Template.Spec.RestartPolicy != v1.RestartPolicyOnFailure {
		return false
	}
	var restarts int32
	for _, p := range active {
		if p.Status.Phase != v1.PodRunning && p.Status.Phase != v1.PodPending {
			continue
		}
		for _, list := range [][]v1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
			for _, cs := range list {
				restarts += cs.RestartCount
			}
		}
	}
	if *j.Spec.BackoffLimit == 0 {
		return restarts > 0
	}
	return restarts >= *j.Spec.BackoffLimit
}

func pastActiveDeadline(j *batchv1.Job, now time.Time) bool {
	left, ok := deadlineLeft(j, now)
	return ok && left <= 0
}

// deadlineLeft is the time until activeDeadlineSeconds runs out; a
// suspended Job's clock does not run.
func deadlineLeft(j *batchv1.Job, now time.Time) (time.Duration, bool) {
	if j.Spec.ActiveDeadlineSeconds == nil || j.Status.StartTime == nil || isSuspended(j) {
		return 0, false
	}
	d := time.Duration(*j.Spec.ActiveDeadlineSeconds) * time.Second
	return d - now.Sub(j.Status.StartTime.Time), true
}

// syncSuspension keeps the Suspended condition, startTime and events in
// step with spec.suspend, as upstream.
func (c *Controller) syncSuspension(j *batchv1.Job, now time.Time) {
	st := &j.Status
	if isSuspended(j) {
		var changed bool
		st.Conditions, changed = setCondition(st.Conditions, batchv1.JobSuspended, v1.ConditionTrue, "JobSuspended", "Job suspended", now)
		if changed {
			c.recorder.Event(j, v1.EventTypeNormal, "Suspended", "Job suspended")
		}
		// The deadline counts continuous activity; resuming starts anew.
		st.StartTime = nil
		return
	}
	var changed bool
	st.Conditions, changed = setCondition(st.Conditions, batchv1.JobSuspended, v1.ConditionFalse, "JobResumed", "Job resumed", now)
	if changed {
		c.recorder.Event(j, v1.EventTypeNormal, "Resumed", "Job resumed")
		t := metav1.NewTime(now)
		st.StartTime = &t
	}
	if st.StartTime == nil {
		t := metav1.NewTime(now)
		st.StartTime = &t
	}
}

// flushUncounted records newly finished pods in uncountedTerminatedPods
// (and completedIndexes), releases their finalizers, then moves released
// ones into the succeeded/failed counters: a crash between steps never
// counts a pod twice or loses it. dirty asks for the first update even
// with no new pods, for a condition the caller set.
func (c *Controller) flushUncounted(ctx context.Context, j *batchv1.Job, pods []*v1.Pod, census podCensus, dirty bool) (*batchv1.Job, error) {
	st := &j.Status
	if st.UncountedTerminatedPods == nil {
		st.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	u := st.UncountedTerminatedPods
	dirty = dirty || len(census.newSucceeded) > 0 || len(census.newFailed) > 0
	u.Succeeded = append(u.Succeeded, census.newSucceeded...)
	u.Failed = append(u.Failed, census.newFailed...)
	if isIndexed(j) && j.Spec.Completions != nil {
		done := parseIndexes(st.CompletedIndexes, int(*j.Spec.Completions))
		for _, ix := range census.newIndexes {
			done[ix] = true
		}
		if s := done.String(); s != st.CompletedIndexes {
			st.CompletedIndexes = s
			dirty = true
		}
		st.Succeeded = int32(len(done))
		if hasPerIndexBackoff(j) {
			failedIdx := parseIndexes(ptrDeref(st.FailedIndexes), int(*j.Spec.Completions))
			for _, ix := range census.newFailedIndexes {
				failedIdx[ix] = true
			}
			if s := failedIdx.String(); st.FailedIndexes == nil || s != *st.FailedIndexes {
				st.FailedIndexes = &s
				dirty = true
			}
		}
	}
	if dirty {
		updated, err := c.client.BatchV1().Jobs(j.Namespace).UpdateStatus(ctx, j, metav1.UpdateOptions{})
		if err != nil {
			return nil, fmt.Errorf("record finished pods of job %s/%s: %w", j.Namespace, j.Name, err)
		}
		j = updated
		st = &j.Status
		if st.UncountedTerminatedPods == nil {
			st.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
		}
		u = st.UncountedTerminatedPods
	}

	var errs []error
	stillTracked := map[types.UID]bool{}
	released := map[types.UID]bool{}
	for _, p := range census.release {
		if err := c.removeFinalizer(ctx, p); err != nil {
			errs = append(errs, err)
			continue
		}
		released[p.UID] = true
	}
	for _, p := range pods {
		if hasTrackingFinalizer(p) && !released[p.UID] {
			stillTracked[p.UID] = true
		}
	}
	moved := false
	keep := func(uids []types.UID, counter *int32) []types.UID {
		var out []types.UID
		for _, uid := range uids {
			if stillTracked[uid] {
				out = append(out, uid)
				continue
			}
			*counter++
			moved = true
		}
		return out
	}
	u.Succeeded = keep(u.Succeeded, &st.Succeeded)
	u.Failed = keep(u.Failed, &st.Failed)
	if moved {
		updated, err := c.client.BatchV1().Jobs(j.Namespace).UpdateStatus(ctx, j, metav1.UpdateOptions{})
		if err != nil {
			return nil, errors.Join(append(errs, fmt.Errorf("count finished pods of job %s/%s: %w", j.Namespace, j.Name, err))...)
		}
		j = updated
		if j.Status.UncountedTerminatedPods == nil {
			j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
		}
	}
	return j, errors.Join(errs...)
}

// releaseAll removes the finalizer from every pod a finished or deleted
// Job still holds.
func (c *Controller) releaseAll(ctx context.Context, j *batchv1.Job, pods []*v1.Pod) error {
	var errs []error
	for _, p := range pods {
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == j.UID && hasTrackingFinalizer(p) {
			if err := c.removeFinalizer(ctx, p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (c *Controller) removeFinalizer(ctx context.Context, p *v1.Pod) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"$deleteFromPrimitiveList/finalizers": []string{batchv1.JobTrackingFinalizer},
		"uid":                                 p.UID,
	}})
	_, err := c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("remove tracking finalizer from pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// manage creates and deletes pods toward parallelism, or deletes all of
// them for a suspended Job. It returns how many active pods it deleted.
func (c *Controller) manage(ctx context.Context, j *batchv1.Job, key string, census podCensus, succeeded int32, pods []*v1.Pod, now time.Time) (int32, error) {
	active := census.active
	if isSuspended(j) {
		return c.deletePods(ctx, j, key, active, false)
	}
	parallelism := *j.Spec.Parallelism
	onlyFailed := j.Spec.PodReplacementPolicy != nil && *j.Spec.PodReplacementPolicy == batchv1.Failed

	if isIndexed(j) {
		completions := int(*j.Spec.Completions)
		done := parseIndexes(j.Status.CompletedIndexes, completions)
		// A failed index is as finished as a completed one: no more pods.
		finished := parseIndexes(ptrDeref(j.Status.FailedIndexes), completions)
		for ix := range done {
			finished[ix] = true
		}
		surplus, held := indexedSurplus(active, finished, completions)
		if len(surplus) > 0 {
			return c.deletePods(ctx, j, key, surplus, false)
		}
		busy := int32(len(active))
		if onlyFailed {
			busy += int32(census.terminating)
			for _, p := range pods {
				if p.DeletionTimestamp != nil && p.Status.Phase != v1.PodFailed && p.Status.Phase != v1.PodSucceeded {
					held[podIndex(p)] = true
				}
			}
		}
		want := parallelism
		if remaining := int32(completions - len(finished)); remaining < want {
			want = remaining
		}
		if busy > want {
			return c.deletePods(ctx, j, key, podsForRemoval(active, int(busy-want)), false)
		}
		n := int(want - busy)
		if n == 0 {
			return 0, nil
		}
		if !hasPerIndexBackoff(j) {
			if left := remainingBackoff(pods, now); left > 0 {
				c.queue.AddAfter(key, left)
				return 0, nil
			}
			return 0, c.createPods(ctx, j, key, pendingIndexes(min(n, maxPodsPerSync), completions, finished, held), nil)
		}
		// Each index backs off on its own failures.
		histories := indexHistories(j, pods)
		var ready []int
		var wait time.Duration
		for _, ix := range pendingIndexes(completions, completions, finished, held) {
			if len(ready) == min(n, maxPodsPerSync) {
				break
			}
			if left := indexBackoff(histories[ix], now); left > 0 {
				if wait == 0 || left < wait {
					wait = left
				}
				continue
			}
			ready = append(ready, ix)
		}
		if wait > 0 {
			c.queue.AddAfter(key, wait)
		}
		return 0, c.createPods(ctx, j, key, ready, histories)
	}

	var want int32
	if j.Spec.Completions == nil {
		// Work queue: once one pod succeeded, let the rest finish.
		if succeeded > 0 {
			want = int32(len(active))
		} else {
			want = parallelism
		}
	} else {
		want = max(min(*j.Spec.Completions-succeeded, parallelism), 0)
	}
	busy := int32(len(active))
	if busy > want {
		return c.deletePods(ctx, j, key, podsForRemoval(active, int(busy-want)), false)
	}
	if onlyFailed {
		busy += int32(census.terminating)
	}
	if busy >= want {
		return 0, nil
	}
	if left := remainingBackoff(pods, now); left > 0 {
		c.queue.AddAfter(key, left)
		return 0, nil
	}
	n := min(int(want-busy), maxPodsPerSync)
	indexes := make([]int, n)
	for i := range indexes {
		indexes[i] = noIndex
	}
	return 0, c.createPods(ctx, j, key, indexes, nil)
}

// indexedSurplus returns the active pods to delete because their index is
// missing, out of range, already completed or held by another pod, and
// the indexes the remaining active pods hold.
func indexedSurplus(active []*v1.Pod, done indexSet, completions int) ([]*v1.Pod, indexSet) {
	held := indexSet{}
	var surplus []*v1.Pod
	sorted := slices.Clone(active)
	// Keep the oldest pod of an index, as it is the furthest along.
	sort.SliceStable(sorted, func(a, b int) bool {
		return sorted[a].CreationTimestamp.Before(&sorted[b].CreationTimestamp)
	})
	for _, p := range sorted {
		ix := podIndex(p)
		if ix == noIndex || ix >= completions || done[ix] || held[ix] {
			surplus = append(surplus, p)
			continue
		}
		held[ix] = true
	}
	return surplus, held
}

// podsForRemoval picks n pods, least advanced first, as upstream's
// ActivePods ordering: unscheduled, pending, not ready, then newest.
func podsForRemoval(pods []*v1.Pod, n int) []*v1.Pod {
	sorted := slices.Clone(pods)
	rank := func(p *v1.Pod) int {
		switch {
		case p.Spec.NodeName == "":
			return 0
		case p.Status.Phase == v1.PodPending || p.Status.Phase == "":
			return 1
		case !controllerutil.IsPodReady(p):
			return 2
		}
		return 3
	}
	sort.SliceStable(sorted, func(a, b int) bool {
		ra, rb := rank(sorted[a]), rank(sorted[b])
		if ra != rb {
			return ra < rb
		}
		return sorted[b].CreationTimestamp.Before(&sorted[a].CreationTimestamp)
	})
	if n > len(sorted) {
		n = len(sorted)
	}
	return sorted[:n]
}

// deletePods deletes pods; unless keepFinalizers, their finalizers come
// off first so that pods the controller itself removes never count as
// failed. It returns how many deletions were issued.
func (c *Controller) deletePods(ctx context.Context, j *batchv1.Job, key string, pods []*v1.Pod, keepFinalizers bool) (int32, error) {
	if len(pods) > maxPodsPerSync {
		pods = pods[:maxPodsPerSync]
	}
	uids := make([]string, len(pods))
	for i, p := range pods {
		uids[i] = string(p.UID)
	}
	c.expectations.ExpectDeletions(key, uids)
	var (
		mu      sync.Mutex
		errs    []error
		removed int32
		wg      sync.WaitGroup
	)
	for _, p := range pods {
		wg.Add(1)
		go func(p *v1.Pod) {
			defer wg.Done()
			var err error
			if !keepFinalizers && hasTrackingFinalizer(p) {
				err = c.removeFinalizer(ctx, p)
			}
			if err == nil {
				err = c.podControl.Delete(ctx, p, j)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				c.expectations.DeletionObserved(key, string(p.UID))
				errs = append(errs, err)
				return
			}
			removed++
		}(p)
	}
	wg.Wait()
	return removed, errors.Join(errs...)
}

// createPods creates one pod per entry (an index, or noIndex), in batches
// of 1, 2, 4... as upstream's slow start, so a Job whose pods are refused
// does not hammer the API server.
func (c *Controller) createPods(ctx context.Context, j *batchv1.Job, key string, indexes []int, histories map[int]indexHistory) error {
	if len(indexes) == 0 {
		return nil
	}
	c.expectations.ExpectCreations(key, len(indexes))
	ref := controllerutil.OwnerRef(j, controllerKind)
	batch := 1
	for start := 0; start < len(indexes); {
		end := min(start+batch, len(indexes))
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
		)
		for _, ix := range indexes[start:end] {
			wg.Add(1)
			go func(ix int) {
				defer wg.Done()
				pod := podForJob(j, ix, &ref)
				if hasPerIndexBackoff(j) {
					h := histories[ix]
					pod.Annotations[batchv1.JobIndexFailureCountAnnotation] = strconv.Itoa(int(h.failures))
					if h.ignored > 0 {
						pod.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(int(h.ignored))
					}
				}
				if _, err := c.podControl.Create(ctx, pod, j); err != nil {
					c.expectations.CreationObserved(key)
					if apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
						return
					}
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}(ix)
		}
		wg.Wait()
		if len(errs) > 0 {
			// The pods never asked for will never be observed.
			for range indexes[end:] {
				c.expectations.CreationObserved(key)
			}
			return fmt.Errorf("create pods of job %s: %w", key, errors.Join(errs...))
		}
		start = end
		batch *= 2
	}
	return nil
}

// podForJob builds a pod from the Job's template with the tracking
// finalizer and, when indexed, the completion index as upstream gives it:
// annotation, label, hostname NAME-INDEX, JOB_COMPLETION_INDEX in every
// container and a name starting NAME-INDEX-.
func podForJob(j *batchv1.Job, ix int, ref *metav1.OwnerReference) *v1.Pod {
	prefix := j.Name
	if ix != noIndex {
		prefix = j.Name + "-" + strconv.Itoa(ix)
	}
	pod := controllerutil.PodFromTemplate(&j.Spec.Template, j.Namespace, prefix, ref)
	pod.Finalizers = append(pod.Finalizers, batchv1.JobTrackingFinalizer)
	if ix == noIndex {
		return pod
	}
	s := strconv.Itoa(ix)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[batchv1.JobCompletionIndexAnnotation] = s
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[batchv1.JobCompletionIndexAnnotation] = s
	if pod.Spec.Hostname == "" {
		pod.Spec.Hostname = j.Name + "-" + s
	}
	env := v1.EnvVar{Name: "JOB_COMPLETION_INDEX", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{
		FieldPath: fmt.Sprintf("metadata.annotations['%s']", batchv1.JobCompletionIndexAnnotation),
	}}}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if !slices.ContainsFunc(list[i].Env, func(e v1.EnvVar) bool { return e.Name == env.Name }) {
				list[i].Env = append(list[i].Env, env)
			}
		}
	}
	return pod
}
