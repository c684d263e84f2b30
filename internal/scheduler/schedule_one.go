package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/scheduler/explain"
	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/preemption"
	"github.com/orca-project/orca/internal/scheduler/queue"
)

// apiTimeout bounds each API call the scheduler makes for one pod.
const apiTimeout = 30 * time.Second

// scheduleOne decides for one pod and hands the bind to a goroutine, so
// the next pod is considered while this one's bind is in flight.
func (s *Scheduler) scheduleOne(ctx context.Context, qp *queue.QueuedPod) {
	pod := qp.Pod
	if pod.DeletionTimestamp != nil || s.cache.IsAssumed(pod.UID) {
		s.queue.Done(qp)
		return
	}
	start := time.Now()
	pi := framework.NewPodInfo(pod)
	ask := s.explainAsk(pod)
	var (
		res  framework.Result
		tr   *framework.Trace
		err  error
		cand *preemption.Candidate
		// preempted: preemption looked for a candidate (and found cand).
		preempted bool
	)
	s.cache.WithSnapshot(func(snap *framework.Snapshot) {
		res, tr, err = s.decide(ctx, ask, pi, snap, s.rng)
		var fe *framework.FitError
		if errors.As(err, &fe) && s.preemptionFor(pod) && fe.NumAllNodes > 0 {
			ok, msg := preemption.Eligible(pi, snap, fe.Diagnosis)
			if ok {
				preempted = true
				cand, msg = preemption.Find(ctx, s.frameworkFor(pod), pi, snap, fe.Diagnosis, s.budgets())
			}
			fe.Diagnosis.PostFilterMsg = msg
		}
	})
	elapsed := time.Since(start).Seconds()
	if err != nil {
		var fe *framework.FitError
		result := "error"
		if errors.As(err, &fe) {
			result = "unschedulable"
		}
		s.metrics.attempts.WithLabelValues(result).Inc()
		s.metrics.attempt.WithLabelValues(result).Observe(elapsed)
		s.fail(ctx, qp, err, cand, preempted, s.explanation(ask, pod, tr, "", err))
		return
	}
	s.metrics.attempts.WithLabelValues("scheduled").Inc()
	s.metrics.attempt.WithLabelValues("scheduled").Observe(elapsed)

	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = res.Node
	pi.Pod = assumed
	if err := s.cache.AssumePod(pi); err != nil {
		s.log.Error("assume pod", "pod", klogKey(pod), "err", err)
		s.queue.AddBackoff(qp)
		return
	}
	// Placed: the room it may have been promised elsewhere is free again.
	s.cache.RemoveNomination(pod.UID)
	s.queue.Done(qp)
	go s.bind(ctx, qp, pod, res, s.explanation(ask, pod, tr, res.Node, nil))
}

func klogKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// A requested explanation is written to the pod before the bind, so it is
// there when the pod is seen bound.
func (s *Scheduler) bind(ctx context.Context, qp *queue.QueuedPod, pod *v1.Pod, res framework.Result, explanation []byte) {
	node := res.Node
	if explanation != nil {
		if err := s.writeExplanation(ctx, pod, explanation); err != nil && ctx.Err() == nil {
			s.log.Warn("write scheduling explanation", "pod", klogKey(pod), "err", err)
		}
	}
	err := s.bindVolumes(ctx, pod, node)
	if err == nil {
		bctx, cancel := context.WithTimeout(ctx, apiTimeout)
		err = s.client.CoreV1().Pods(pod.Namespace).Bind(bctx, &v1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
			Target:     v1.ObjectReference{Kind: "Node", Name: node},
		}, metav1.CreateOptions{})
		cancel()
	}
	if err != nil {
		s.cache.ForgetPod(pod.UID)
		// The room the pod held in the cache is free again.
		s.queue.MoveAllUnschedulable()
		s.metrics.attempts.WithLabelValues("error").Inc()
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("binding rejected", "pod", klogKey(pod), "node", node, "err", err)
		s.recorderFor(pod).Eventf(pod, v1.EventTypeWarning, "FailedScheduling", "Binding rejected: %v", err)
		// Retry only a pod that still exists and still waits for a node.
		if cur, gerr := s.pods.Pods(pod.Namespace).Get(pod.Name); gerr == nil && cur.UID == pod.UID && s.responsible(cur) && !apierrors.IsNotFound(err) {
			qp.Pod = cur
			s.queue.AddBackoff(qp)
		}
		return
	}
	s.metrics.e2e.Observe(time.Since(qp.Added).Seconds())
	s.log.Debug("pod bound", "pod", klogKey(pod), "node", node, "attempts", qp.Attempts)
	// Upstream's message, then the ranking: matchers test the prefix.
	s.recorderFor(pod).Eventf(pod, v1.EventTypeNormal, "Scheduled", "Successfully assigned %s/%s to %s%s", pod.Namespace, pod.Name, node, explain.TopSuffix(res.Top))
}

// fail records why the pod was not placed (condition and event), carries
// out a preemption if one was found, and parks the pod. A preemption
// nominates the pod to the candidate's node at once, in the cache, so the
// pods scheduled next already leave that room alone; a preemption that
// found nothing withdraws an earlier nomination, as upstream does.
// A requested explanation whose verdict changed is written to the pod.
func (s *Scheduler) fail(ctx context.Context, qp *queue.QueuedPod, err error, cand *preemption.Candidate, preempted bool, explanation []byte) {
	pod := qp.Pod
	var fe *framework.FitError
	unschedulable := errors.As(err, &fe)
	msg := err.Error()
	if unschedulable {
		s.log.Debug("pod unschedulable", "pod", klogKey(pod), "reason", msg)
		s.queue.AddUnschedulable(qp)
	} else {
		s.log.Error("scheduling attempt failed", "pod", klogKey(pod), "err", err)
		s.queue.AddBackoff(qp)
	}
	s.recorderFor(pod).Event(pod, v1.EventTypeWarning, "FailedScheduling", msg)
	reason := v1.PodReasonUnschedulable
	if !unschedulable {
		reason = v1.PodReasonSchedulerError
	}
	nom := keepNomination
	switch {
	case cand != nil:
		nom = nominate(cand.Node)
		s.cache.Nominate(pod, cand.Node)
	case preempted:
		nom = clearNomination
		s.cache.RemoveNomination(pod.UID)
	}
	go func() {
		if explanation != nil {
			if err := s.writeExplanation(ctx, pod, explanation); err != nil && ctx.Err() == nil {
				s.log.Warn("write scheduling explanation", "pod", klogKey(pod), "err", err)
			}
		}
		if cand != nil {
			s.preempt(ctx, pod, cand)
		}
		if err := s.updateStatus(ctx, pod, reason, msg, nom); err != nil && ctx.Err() == nil {
			s.log.Warn("update pod status", "pod", klogKey(pod), "err", err)
		}
	}()
}

// preempt deletes the victims gracefully; the preemptor is retried when
// their deletion shows up as pod delete events.
func (s *Scheduler) preempt(ctx context.Context, pod *v1.Pod, cand *preemption.Candidate) {
	s.metrics.preempt.Inc()
	for _, v := range cand.Victims {
		dctx, cancel := context.WithTimeout(ctx, apiTimeout)
		// The victim learns why it goes before it goes: controllers
		// (a Job's pod failure policy) read DisruptionTarget from the
		// terminating pod.
		if patch := disruptionPatch(v, time.Now()); patch != nil {
			_, err := s.client.CoreV1().Pods(v.Namespace).Patch(dctx, v.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
			if apierrors.IsNotFound(err) {
				cancel()
				continue
			}
			if err != nil {
				cancel()
				s.log.Warn("mark preemption victim", "victim", klogKey(v), "preemptor", klogKey(pod), "err", err)
				continue
			}
		}
		err := s.client.CoreV1().Pods(v.Namespace).Delete(dctx, v.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &v.UID}})
		cancel()
		if err != nil && !apierrors.IsNotFound(err) {
			s.log.Warn("preempt victim", "victim", klogKey(v), "preemptor", klogKey(pod), "err", err)
			continue
		}
		s.log.Info("preempted pod", "victim", klogKey(v), "node", cand.Node, "preemptor", klogKey(pod))
		s.recorderFor(pod).Eventf(v, v1.EventTypeNormal, "Preempted", "Preempted by pod %s on node %s", pod.UID, cand.Node)
	}
}

// disruptionPatch is the strategic merge patch of pods/status that gives a
// preemption victim upstream's DisruptionTarget condition, or nil when the
// pod already has it.
func disruptionPatch(victim *v1.Pod, now time.Time) []byte {
	for _, c := range victim.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler {
			return nil
		}
	}
	cond := map[string]any{
		"type": v1.DisruptionTarget, "status": v1.ConditionTrue,
		"reason":             v1.PodReasonPreemptionByScheduler,
		"message":            SchedulerName + ": preempting to accommodate a higher priority pod",
		"lastTransitionTime": metav1.NewTime(now).UTC().Format(time.RFC3339),
	}
	if victim.Generation > 0 {
		cond["observedGeneration"] = victim.Generation
	}
	b, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []any{cond}}})
	return b
}

// nomination says what a failed attempt does to status.nominatedNodeName.
type nomination struct {
	set  bool
	node string // "" with set clears it
}

var (
	keepNomination  = nomination{}
	clearNomination = nomination{set: true}
)

func nominate(node string) nomination { return nomination{set: true, node: node} }

// updateStatus sets PodScheduled=False (and nominatedNodeName) with a
// strategic merge patch on pods/status, skipping a patch that would
// change nothing.
func (s *Scheduler) updateStatus(ctx context.Context, pod *v1.Pod, reason, msg string, nom nomination) error {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == reason && c.Message == msg &&
			(!nom.set || nom.node == pod.Status.NominatedNodeName) {
			return nil
		}
	}
	status := map[string]any{
		"conditions": []map[string]any{{
			"type": v1.PodScheduled, "status": v1.ConditionFalse, "reason": reason, "message": msg,
			"lastProbeTime": nil, "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339),
		}},
	}
	switch {
	case nom.set && nom.node != "":
		status["nominatedNodeName"] = nom.node
	case nom.set:
		// null deletes the field; sent even when the queued copy shows no
		// nomination, as that copy's status may be older than the server's.
		status["nominatedNodeName"] = nil
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("encode status patch: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	_, err = s.client.CoreV1().Pods(pod.Namespace).Patch(pctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// budgets are the disruption budgets preemption tries not to break; with
// none readable it preempts as if there were none.
func (s *Scheduler) budgets() []*policyv1.PodDisruptionBudget {
	pdbs, err := s.pdbs.List(labels.Everything())
	if err != nil {
		s.log.Warn("listing disruption budgets for preemption", "err", err)
	}
	return pdbs
}
