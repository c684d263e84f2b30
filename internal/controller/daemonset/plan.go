package daemonset

import (
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// podTemplateGenerationLabel is upstream's deprecated label that older
// DaemonSet pods carry instead of the revision hash.
const podTemplateGenerationLabel = "pod-template-generation"

// isPodUpdated reports whether pod runs the DaemonSet's current template:
// its revision hash matches, or (for pods created before hashes) its
// template generation does.
func isPodUpdated(pod *v1.Pod, hash string, ds *appsv1.DaemonSet) bool {
	if hash != "" && pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == hash {
		return true
	}
	gen, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	return ok && pod.Labels[podTemplateGenerationLabel] == gen
}

// byCreation orders pods scheduled first, then oldest first, then by name
// (upstream's podByCreationTimestampAndPhase): the first is the one kept.
func byCreation(pods []*v1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if (a.Spec.NodeName != "") != (b.Spec.NodeName != "") {
			return a.Spec.NodeName != ""
		}
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.Name < b.Name
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	})
}

// surgeCount and unavailableCount scale the rolling update's limits to
// the number of nodes that should run the pod, rounding up as upstream.
func surgeCount(ds *appsv1.DaemonSet, desired int) (int, error) {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru == nil || ru.MaxSurge == nil {
		return 0, nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, desired, true)
	if err != nil {
		return 0, fmt.Errorf("invalid maxSurge: %w", err)
	}
	return n, nil
}

func unavailableCount(ds *appsv1.DaemonSet, desired int) (int, error) {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru == nil || ru.MaxUnavailable == nil {
		return 0, nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, desired, true)
	if err != nil {
		return 0, fmt.Errorf("invalid maxUnavailable: %w", err)
	}
	return n, nil
}

func allowsSurge(ds *appsv1.DaemonSet) bool {
	n, err := surgeCount(ds, 1)
	return err == nil && n != 0
}

// nodeAction is what the DaemonSet needs on one node.
type nodeAction struct {
	create bool
	delete []*v1.Pod
	// failed pods are deleted unless the node is in back-off; the caller
	// decides, since back-off is state.
	failed []*v1.Pod
}

// podsShouldBeOnNode is upstream's per-node decision: create the pod where
// it should run and is missing; where it may stay, delete finished pods
// and keep one (or, while surging, the oldest old and the oldest new);
// where it may not stay, delete every pod.
func podsShouldBeOnNode(pods []*v1.Pod, shouldRun, shouldContinueRunning bool, ds *appsv1.DaemonSet, hash string) nodeAction {
	var a nodeAction
	switch {
	case shouldRun && len(pods) == 0:
		a.create = true
	case shouldContinueRunning:
		var running []*v1.Pod
		for _, p := range pods {
			switch {
			case p.DeletionTimestamp != nil:
			case p.Status.Phase == v1.PodFailed:
				a.failed = append(a.failed, p)
			case p.Status.Phase == v1.PodSucceeded:
				// A daemon is not meant to exit; replace it.
				a.delete = append(a.delete, p)
			default:
				running = append(running, p)
			}
		}
		byCreation(running)
		if !allowsSurge(ds) {
			if len(running) > 1 {
				a.delete = append(a.delete, running[1:]...)
			}
			break
		}
		var newest, oldest *v1.Pod
		for _, p := range running {
			if isPodUpdated(p, hash, ds) {
				if newest == nil {
					newest = p
					continue
				}
			} else if oldest == nil {
				oldest = p
				continue
			}
			a.delete = append(a.delete, p)
		}
	default:
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				a.delete = append(a.delete, p)
			}
		}
	}
	return a
}

// updatedPodsOnNode splits a node's live pods into the one on the current
// revision and the one on an older revision; ok is false when there is
// more than one of either (the per-node loop cleans that up first).
func updatedPodsOnNode(ds *appsv1.DaemonSet, pods []*v1.Pod, hash string) (newPod, oldPod *v1.Pod, ok bool) {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if isPodUpdated(p, hash, ds) {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = p
		} else {
			if oldPod != nil {
				return nil, nil, false
			}
			oldPod = p
		}
	}
	return newPod, oldPod, true
}

// rollingUpdatePlan is upstream's rollingUpdate decision. nodePods holds
// the pods of every node that has some or should run one (nil when
// none); shouldRun tells which nodes should run one. Without surge, old
// pods are deleted while the unavailable count stays within
// maxUnavailable and the per-node loop recreates them; with surge, new
// pods are created beside old ones (at most maxSurge at a time) and an
// old pod goes once its replacement is available.
func rollingUpdatePlan(ds *appsv1.DaemonSet, hash string, nodePods map[string][]*v1.Pod, shouldRun map[string]bool, now time.Time) (toDelete []*v1.Pod, createOn []string, err error) {
	desired := 0
	for _, run := range shouldRun {
		if run {
			desired++
		}
	}
	maxSurge, err := surgeCount(ds, desired)
	if err != nil {
		return nil, nil, err
	}
	maxUnavailable, err := unavailableCount(ds, desired)
	if err != nil {
		return nil, nil, err
	}
	if desired > 0 && maxSurge == 0 && maxUnavailable == 0 {
		// An impossible configuration: fall back to the default.
		maxUnavailable = 1
	}
	names := make([]string, 0, len(nodePods))
	for n := range nodePods {
		names = append(names, n)
	}
	sort.Strings(names)
	available := func(p *v1.Pod) bool {
		return controllerutil.IsPodAvailable(p, ds.Spec.MinReadySeconds, now)
	}

	if maxSurge == 0 {
		numUnavailable := 0
		var replace, candidates []*v1.Pod
		for _, n := range names {
			newPod, oldPod, ok := updatedPodsOnNode(ds, nodePods[n], hash)
			switch {
			case !ok:
				numUnavailable++
			case (oldPod == nil) == (newPod == nil):
				// Nothing, or both: the per-node loop acts here.
				numUnavailable++
			case newPod != nil:
				if !available(newPod) {
					numUnavailable++
				}
			case !available(oldPod):
				replace = append(replace, oldPod)
			case numUnavailable >= maxUnavailable:
			default:
				candidates = append(candidates, oldPod)
			}
		}
		remaining := min(max(maxUnavailable-numUnavailable, 0), len(candidates))
		return append(replace, candidates[:remaining]...), nil, nil
	}

	var candidateNodes, allowedNodes []string
	var shouldNotRunPods []*v1.Pod
	numSurge, numAvailable := 0, 0
	for _, n := range names {
		newPod, oldPod, ok := updatedPodsOnNode(ds, nodePods[n], hash)
		if !ok {
			numSurge++
			continue
		}
		if oldPod != nil {
			if available(oldPod) {
				numAvailable++
			}
		} else if newPod != nil && available(newPod) {
			numAvailable++
		}
		switch {
		case oldPod == nil:
		case newPod == nil:
			switch {
			case !available(oldPod):
				if !shouldRun[n] {
					toDelete = append(toDelete, oldPod)
					continue
				}
				allowedNodes = append(allowedNodes, n)
			default:
				if !shouldRun[n] {
					shouldNotRunPods = append(shouldNotRunPods, oldPod)
					continue
				}
				if numSurge >= maxSurge {
					continue
				}
				candidateNodes = append(candidateNodes, n)
			}
		default:
			if !available(newPod) {
				numSurge++
				continue
			}
			toDelete = append(toDelete, oldPod)
		}
	}
	// With surge the owner expects full availability: a pod on a node
	// that no longer qualifies goes only once enough pods are available
	// elsewhere.
	if deletable := min(numAvailable-desired, len(shouldNotRunPods)); deletable > 0 {
		toDelete = append(toDelete, shouldNotRunPods[:deletable]...)
	}
	remaining := min(max(maxSurge-numSurge, 0), len(candidateNodes))
	return toDelete, append(allowedNodes, candidateNodes[:remaining]...), nil
}
