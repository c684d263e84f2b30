package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/scheduler/explain"
	"github.com/orca-project/orca/internal/scheduler/framework"
)

// DefaultExplanations is how many pods' explanations a scheduler keeps
// unless told otherwise.
const DefaultExplanations = 1000

// StoreListCap bounds the rejected and scored lists of the explanations
// kept in memory, so the store's size is bounded by the number of pods.
const StoreListCap = 20

// explainAsk is what one attempt records: nothing (the common case, which
// runs the untraced algorithm), a trace for the in-memory store, or a
// full trace over every node whose explanation goes into the pod's
// annotation.
type explainAsk struct {
	trace    bool
	annotate bool
	listCap  int
}

func (s *Scheduler) explainAsk(pod *v1.Pod) explainAsk {
	if listCap, ok := explain.ListCap(pod.Annotations); ok {
		return explainAsk{trace: true, annotate: true, listCap: listCap}
	}
	return explainAsk{trace: s.explanations != nil, listCap: StoreListCap}
}

// decide runs the algorithm, traced when asked.
func (s *Scheduler) decide(ctx context.Context, ask explainAsk, pi *framework.PodInfo, snap *framework.Snapshot, rng *rand.Rand) (framework.Result, *framework.Trace, error) {
	if !ask.trace {
		res, err := s.frameworkFor(pi.Pod).Schedule(ctx, framework.NewCycleState(), pi, snap, rng)
		return res, nil, err
	}
	return s.frameworkFor(pi.Pod).ScheduleTraced(ctx, framework.NewCycleState(), pi, snap, rng, ask.annotate)
}

// explanation builds the attempt's explanation, keeps it in the store and
// returns the annotation to write, if one was asked for and the verdict is
// news (nil otherwise).
func (s *Scheduler) explanation(ask explainAsk, pod *v1.Pod, tr *framework.Trace, node string, err error) []byte {
	if tr == nil {
		return nil
	}
	var fe *framework.FitError
	e := explain.Build(explain.Input{
		Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), Time: time.Now(),
		Node: node, Err: err, Unschedulable: errors.As(err, &fe), Trace: tr, ListCap: ask.listCap,
	})
	if !ask.annotate {
		s.explanations.Put(e)
		return nil
	}
	// The store keeps the same bound as for any other pod.
	kept := *e
	kept.Rejected, kept.RejectedOmitted = capped(e.Rejected, e.RejectedOmitted)
	kept.Scored, kept.ScoredOmitted = capped(e.Scored, e.ScoredOmitted)
	s.explanations.Put(&kept)
	// The queued copy of a Pending pod predates the annotations written
	// since; the informer's copy has them.
	cur, ok := pod.Annotations[explain.Annotation]
	if s.pods != nil {
		if p, err := s.pods.Pods(pod.Namespace).Get(pod.Name); err == nil && p.UID == pod.UID {
			cur, ok = p.Annotations[explain.Annotation]
		}
	}
	if ok && explain.SameVerdict(cur, e) {
		return nil
	}
	b, encErr := explain.Encode(e, explain.MaxBytes)
	if encErr != nil {
		s.log.Warn("explain scheduling decision", "pod", klogKey(pod), "err", encErr)
		return nil
	}
	return b
}

func capped[T any](l []T, omitted int) ([]T, int) {
	if len(l) <= StoreListCap {
		return l, omitted
	}
	return l[:StoreListCap:StoreListCap], omitted + len(l) - StoreListCap
}

// writeExplanation sets the explanation annotation with a merge patch on
// the pod (not pods/status: annotations are metadata).
func (s *Scheduler) writeExplanation(ctx context.Context, pod *v1.Pod, value []byte) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         pod.UID,
		"annotations": map[string]string{explain.Annotation: string(value)},
	}})
	if err != nil {
		return fmt.Errorf("encode explanation patch: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	_, err = s.client.CoreV1().Pods(pod.Namespace).Patch(pctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Gone, or replaced by a pod of the same name: nothing to explain.
		return nil
	}
	return err
}

// ExplanationJSON returns the latest explanation the store keeps for the
// pod namespace/name with uid, as the annotation's JSON.
func (s *Scheduler) ExplanationJSON(namespace, name, uid string) ([]byte, bool) {
	e, ok := s.explanations.Get(namespace, name)
	if !ok || e.UID != uid {
		return nil, false
	}
	b, err := explain.Encode(e, explain.MaxBytes)
	return b, err == nil
}
