package statefulset

import (
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// actionKind is what the controller does to one pod.
type actionKind int

const (
	// actCreate creates the ordinal's claims, then its pod.
	actCreate actionKind = iota
	// actRecreate deletes a pod that finished (failed or succeeded); a
	// new one takes its ordinal once it is gone.
	actRecreate
	// actScaleDown deletes a pod beyond the replica count.
	actScaleDown
	// actUpdate deletes a pod of an old revision so it comes back new.
	actUpdate
	// actRepair restores a pod's identity labels, creates its missing
	// claims and sets its claims' owners for the retention policy.
	actRepair
)

func (k actionKind) String() string {
	return [...]string{"create", "recreate", "scale down", "update", "repair"}[k]
}

type action struct {
	Kind actionKind
	Pod  *v1.Pod // the pod to create, or the existing pod
}

// world is what one sync decides from: the set, the two revisions and
// the sets they describe, the pods the set owns and the namespace's claims.
type world struct {
	Set                   *appsv1.StatefulSet
	CurrentSet, UpdateSet *appsv1.StatefulSet
	CurrentRev, UpdateRev string
	Pods                  []*v1.Pod
	Claims                map[string]*v1.PersistentVolumeClaim
	Now                   time.Time
}

// plan is upstream's updateStatefulSet as a pure function: the actions of
// this round, in order, and the status the pods show. With OrderedReady
// it stops at the first pod that is missing, not yet Running and Ready
// (and available), or terminating, so that pods come and go one at a
// time in ordinal order; with Parallel it acts on every pod at once.
// Scale-down precedes updates; a rolling update deletes the highest
// ordinal at or above the partition that is not at the update revision,
// one at a time, waiting for each to come back healthy.
func plan(w world) ([]action, appsv1.StatefulSetStatus) {
	set := w.Set
	start, n := startOrdinal(set), replicaCount(set)
	replicas := make([]*v1.Pod, n)
	var condemned []*v1.Pod
	for _, p := range w.Pods {
		o := ordinalOf(p)
		switch {
		case o < 0:
		case inRange(set, o):
			replicas[o-start] = p
		default:
			condemned = append(condemned, p)
		}
	}
	for i := range replicas {
		if replicas[i] == nil {
			replicas[i] = newVersionedPod(w.CurrentSet, w.UpdateSet, w.CurrentRev, w.UpdateRev, start+i)
		}
	}
	sort.SliceStable(condemned, func(i, j int) bool { return ordinalOf(condemned[i]) > ordinalOf(condemned[j]) })

	// The first unavailable pod in ordinal order, replicas before
	// condemned ones: with OrderedReady it is the only unavailable pod a
	// scale-down may delete, so that while any lower pod is unavailable
	// the set waits rather than delete the ones above it.
	var firstUnhealthy *v1.Pod
	for _, p := range replicas {
		if unavailable(p, set.Spec.MinReadySeconds, w.Now) {
			firstUnhealthy = p
			break
		}
	}
	for i := len(condemned) - 1; i >= 0 && firstUnhealthy == nil; i-- {
		if unavailable(condemned[i], set.Spec.MinReadySeconds, w.Now) {
			firstUnhealthy = condemned[i]
		}
	}

	status := countStatus(set.Spec.MinReadySeconds, w.CurrentRev, w.UpdateRev, w.Now, replicas, condemned)
	if set.DeletionTimestamp != nil {
		return nil, status
	}
	monotonic := set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	minReady := set.Spec.MinReadySeconds
	var acts []action

	for _, p := range replicas {
		if created(p) && (p.Status.Phase == v1.PodFailed || p.Status.Phase == v1.PodSucceeded) {
			// Once deleted, the pod is only waited for: its name is
			// taken again when it is gone.
			if !terminating(p) {
				acts = append(acts, action{Kind: actRecreate, Pod: p})
			}
			if monotonic {
				return acts, status
			}
			continue
		}
		if !created(p) {
			// A claim still owned by a pod of this name that is gone
			// waits for the garbage collector: reusing it would have it
			// deleted under the new pod.
			if claimIsStale(w.UpdateSet, p, w.Claims) {
				return acts, status
			}
			acts = append(acts, action{Kind: actCreate, Pod: p})
			if monotonic {
				return acts, status
			}
			continue
		}
		if monotonic && (terminating(p) || !runningAndReady(p) || !controllerutil.IsPodAvailable(p, minReady, w.Now)) {
			// A pending pod may still lack a claim someone deleted.
			if missingClaims(set, p, w.Claims) {
				acts = append(acts, action{Kind: actRepair, Pod: p})
			}
			return acts, status
		}
		if !identityMatches(set, p) || !storageMatches(set, p) || missingClaims(set, p, w.Claims) || !claimOwnersMatch(w.UpdateSet, p, w.Claims) {
			acts = append(acts, action{Kind: actRepair, Pod: p})
		}
	}

	// Claims of pods about to go get the pod as owner first when the
	// policy deletes claims on scale-down.
	for _, p := range condemned {
		if !claimOwnersMatch(w.UpdateSet, p, w.Claims) {
			acts = append(acts, action{Kind: actRepair, Pod: p})
		}
	}
	for _, p := range condemned {
		if terminating(p) {
			if monotonic {
				return acts, status
			}
			continue
		}
		if monotonic && p != firstUnhealthy && (!runningAndReady(p) || !controllerutil.IsPodAvailable(p, minReady, w.Now)) {
			return acts, status
		}
		acts = append(acts, action{Kind: actScaleDown, Pod: p})
		if monotonic {
			return acts, status
		}
	}

	if set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return acts, status
	}
	for target := len(replicas) - 1; target >= int(partition(set)); target-- {
		p := replicas[target]
		if podRevision(p) != w.UpdateRev && !terminating(p) {
			acts = append(acts, action{Kind: actUpdate, Pod: p})
			return acts, status
		}
		if unavailable(p, minReady, w.Now) {
			return acts, status
		}
	}
	return acts, status
}

func created(p *v1.Pod) bool     { return p.Status.Phase != "" }
func terminating(p *v1.Pod) bool { return p.DeletionTimestamp != nil }
func runningAndReady(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodRunning && controllerutil.IsPodReady(p)
}
func healthy(p *v1.Pod) bool { return runningAndReady(p) && !terminating(p) }

// unavailable is upstream's isUnavailable: not healthy, or ready for less
// than minReadySeconds.
func unavailable(p *v1.Pod, minReady int32, now time.Time) bool {
	return !healthy(p) || !controllerutil.IsPodAvailable(p, minReady, now)
}

// countStatus is upstream's computeReplicaStatus over both lists.
func countStatus(minReady int32, currentRev, updateRev string, now time.Time, lists ...[]*v1.Pod) appsv1.StatefulSetStatus {
	var st appsv1.StatefulSetStatus
	for _, list := range lists {
		for _, p := range list {
			if created(p) {
				st.Replicas++
			}
			if runningAndReady(p) {
				st.ReadyReplicas++
				if controllerutil.IsPodAvailable(p, minReady, now) {
					st.AvailableReplicas++
				}
			}
			if created(p) && !terminating(p) {
				if podRevision(p) == currentRev {
					st.CurrentReplicas++
				}
				if podRevision(p) == updateRev {
					st.UpdatedReplicas++
				}
			}
		}
	}
	st.CurrentRevision, st.UpdateRevision = currentRev, updateRev
	return st
}

// completeRollingUpdate makes the update revision current once every pod
// runs it and is ready.
func completeRollingUpdate(set *appsv1.StatefulSet, st *appsv1.StatefulSetStatus) {
	if set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
		st.UpdatedReplicas == st.Replicas && st.ReadyReplicas == st.Replicas {
		st.CurrentReplicas = st.UpdatedReplicas
		st.CurrentRevision = st.UpdateRevision
	}
}

// statusChanged reports whether st differs from what set shows.
func statusChanged(set *appsv1.StatefulSet, st *appsv1.StatefulSetStatus) bool {
	old := set.Status
	cc := func(p *int32) int32 {
		if p == nil {
			return 0
		}
		return *p
	}
	return st.ObservedGeneration > old.ObservedGeneration ||
		st.Replicas != old.Replicas || st.CurrentReplicas != old.CurrentReplicas ||
		st.ReadyReplicas != old.ReadyReplicas || st.UpdatedReplicas != old.UpdatedReplicas ||
		st.AvailableReplicas != old.AvailableReplicas ||
		st.CurrentRevision != old.CurrentRevision || st.UpdateRevision != old.UpdateRevision ||
		cc(st.CollisionCount) != cc(old.CollisionCount)
}
