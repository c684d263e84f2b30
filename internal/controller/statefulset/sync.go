package statefulset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// sync brings one StatefulSet one step closer to its spec.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.sets.StatefulSets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	set := cached.DeepCopy()
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		// Validation forbids it; nothing can be done until the set changes.
		c.log.Warn("invalid selector", "statefulset", key, "err", err)
		return nil
	}
	if !c.expectations.Satisfied(key) {
		// The pods just created or deleted are not in the cache yet; their
		// events queue the set again.
		return nil
	}

	revisions, err := c.ownedRevisions(ctx, set, selector)
	if err != nil {
		return err
	}
	pods, err := c.ownedPods(ctx, set, selector)
	if err != nil {
		return err
	}
	current, update, collisions, err := c.revisionsFor(ctx, set, revisions)
	if err != nil {
		return err
	}
	currentSet, err := applyRevision(set, current)
	if err != nil {
		return err
	}
	updateSet, err := applyRevision(set, update)
	if err != nil {
		return err
	}
	claims := map[string]*v1.PersistentVolumeClaim{}
	if len(set.Spec.VolumeClaimTemplates) > 0 {
		list, err := c.claims.PersistentVolumeClaims(ns).List(labels.Everything())
		if err != nil {
			return err
		}
		for _, pvc := range list {
			claims[pvc.Name] = pvc
		}
	}

	acts, status := plan(world{
		Set: set, CurrentSet: currentSet, UpdateSet: updateSet,
		CurrentRev: current.Name, UpdateRev: update.Name,
		Pods: pods, Claims: claims, Now: c.now(),
	})
	actErr := c.execute(ctx, key, set, updateSet, acts, claims)

	status.ObservedGeneration = set.Generation
	status.CollisionCount = &collisions
	status.Conditions = set.Status.Conditions
	completeRollingUpdate(set, &status)
	if statusChanged(set, &status) {
		out := set.DeepCopy()
		out.Status = status
		if _, err := c.client.AppsV1().StatefulSets(ns).UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return errors.Join(actErr, fmt.Errorf("update status of statefulset %s: %w", key, err))
		}
	}
	if actErr != nil {
		return actErr
	}
	if err := c.truncateHistory(ctx, set, pods, revisions, current, update); err != nil {
		return err
	}
	if set.Spec.MinReadySeconds > 0 && status.ReadyReplicas != status.AvailableReplicas {
		c.queue.AddAfter(key, time.Duration(set.Spec.MinReadySeconds)*time.Second)
	}
	return nil
}

// ownedPods are the pods set controls, after adopting orphans that carry
// one of its ordinals and match its selector, and releasing pods that no
// longer match.
func (c *Controller) ownedPods(ctx context.Context, set *appsv1.StatefulSet, selector labels.Selector) ([]*v1.Pod, error) {
	all, err := controllerutil.ControlledPods(c.podIndex, set, true)
	if err != nil {
		return nil, err
	}
	var candidates []*v1.Pod
	for _, p := range all {
		if ref := metav1.GetControllerOf(p); (ref != nil && ref.UID == set.UID) || (ref == nil && isMemberOf(set, p)) {
			candidates = append(candidates, p)
		}
	}
	fresh := func(ctx context.Context) (metav1.Object, error) {
		return c.client.AppsV1().StatefulSets(set.Namespace).Get(ctx, set.Name, metav1.GetOptions{})
	}
	return c.podControl.ClaimPods(ctx, set, controllerKind, selector, candidates, controllerutil.RecheckOwner(fresh))
}

// ownedRevisions are set's ControllerRevisions, orphans matching its
// selector adopted, sorted oldest first.
func (c *Controller) ownedRevisions(ctx context.Context, set *appsv1.StatefulSet, selector labels.Selector) ([]*appsv1.ControllerRevision, error) {
	all, err := c.revisions.ControllerRevisions(set.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []*appsv1.ControllerRevision
	for _, r := range all {
		ref := metav1.GetControllerOf(r)
		switch {
		case ref != nil && ref.UID == set.UID:
			out = append(out, r)
		case ref == nil && set.DeletionTimestamp == nil && !selector.Empty() && selector.Matches(labels.Set(r.Labels)):
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
				"ownerReferences": []metav1.OwnerReference{controllerutil.OwnerRef(set, controllerKind)},
				"uid":             r.UID,
			}})
			adopted, err := c.client.AppsV1().ControllerRevisions(set.Namespace).Patch(ctx, r.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("adopt controller revision %s: %w", r.Name, err)
			}
			out = append(out, adopted)
		}
	}
	sortRevisions(out)
	return out, nil
}

// revisionsFor returns the current and update revisions, creating the
// update revision (or renumbering an older equal one, a rollback) as
// upstream, and the collision count it took to name it.
func (c *Controller) revisionsFor(ctx context.Context, set *appsv1.StatefulSet, history []*appsv1.ControllerRevision) (current, update *appsv1.ControllerRevision, collisions int32, err error) {
	if set.Status.CollisionCount != nil {
		collisions = *set.Status.CollisionCount
	}
	candidate, err := newRevision(set, nextRevision(history), &collisions)
	if err != nil {
		return nil, nil, 0, err
	}
	api := c.client.AppsV1().ControllerRevisions(set.Namespace)
	choice := chooseUpdateRevision(history, candidate)
	switch {
	case choice.Create:
		for {
			created, err := api.Create(ctx, candidate, metav1.CreateOptions{})
			if err == nil {
				update = created
				break
			}
			if !apierrors.IsAlreadyExists(err) {
				return nil, nil, 0, fmt.Errorf("create controller revision %s: %w", candidate.Name, err)
			}
			exists, err := api.Get(ctx, candidate.Name, metav1.GetOptions{})
			if err != nil {
				return nil, nil, 0, fmt.Errorf("get controller revision %s: %w", candidate.Name, err)
			}
			if equalData(exists.Data.Raw, candidate.Data.Raw) {
				update = exists
				break
			}
			// Another template hashed to the same name: the collision
			// count changes the hash, and is kept in status.
			collisions++
			hash := HashRevision(candidate.Data.Raw, &collisions)
			candidate.Name = RevisionName(set.Name, hash)
			candidate.Labels[RevisionHashLabel] = hash
		}
	case choice.Renumber:
		r := choice.Existing.DeepCopy()
		r.Revision = candidate.Revision
		update, err = api.Update(ctx, r, metav1.UpdateOptions{})
		if err != nil {
			return nil, nil, 0, fmt.Errorf("renumber controller revision %s: %w", r.Name, err)
		}
	default:
		update = choice.Existing
	}
	for _, r := range history {
		if r.Name == set.Status.CurrentRevision {
			current = r
			break
		}
	}
	if current == nil {
		current = update
	}
	return current, update, collisions, nil
}

// truncateHistory deletes the oldest revisions beyond revisionHistoryLimit
// that no pod uses.
func (c *Controller) truncateHistory(ctx context.Context, set *appsv1.StatefulSet, pods []*v1.Pod, history []*appsv1.ControllerRevision, current, update *appsv1.ControllerRevision) error {
	live := map[string]bool{current.Name: true, update.Name: true}
	for _, p := range pods {
		live[podRevision(p)] = true
	}
	limit := 10
	if set.Spec.RevisionHistoryLimit != nil {
		limit = int(*set.Spec.RevisionHistoryLimit)
	}
	for _, r := range revisionsToDelete(history, live, limit) {
		err := c.client.AppsV1().ControllerRevisions(set.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &r.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete controller revision %s: %w", r.Name, err)
		}
	}
	return nil
}

// execute carries out the actions of one round, stopping at the first
// error (the round is retried).
func (c *Controller) execute(ctx context.Context, key string, set, updateSet *appsv1.StatefulSet, acts []action, claims map[string]*v1.PersistentVolumeClaim) error {
	var creates int
	var deletes []string
	for _, a := range acts {
		switch a.Kind {
		case actCreate:
			creates++
		case actRecreate, actScaleDown, actUpdate:
			deletes = append(deletes, string(a.Pod.UID))
		}
	}
	// One expectation per round: Expectations holds either kind, and a
	// round that creates is held back by its creations.
	if creates > 0 {
		c.expectations.ExpectCreations(key, creates)
	} else if len(deletes) > 0 {
		c.expectations.ExpectDeletions(key, deletes)
	}
	for i, a := range acts {
		var err error
		switch a.Kind {
		case actCreate:
			err = c.createPod(ctx, set, updateSet, a.Pod, claims)
		case actRecreate:
			if a.Pod.Status.Phase == v1.PodFailed {
				c.recorder.Eventf(set, v1.EventTypeWarning, "RecreatingFailedPod", "StatefulSet %s/%s is recreating failed Pod %s", set.Namespace, set.Name, a.Pod.Name)
			} else {
				c.recorder.Eventf(set, v1.EventTypeNormal, "RecreatingTerminatedPod", "StatefulSet %s/%s is recreating terminated Pod %s", set.Namespace, set.Name, a.Pod.Name)
			}
			err = c.deletePod(ctx, set, a.Pod, a.Kind)
		case actScaleDown, actUpdate:
			err = c.deletePod(ctx, set, a.Pod, a.Kind)
		case actRepair:
			err = c.repairPod(ctx, set, updateSet, a.Pod, claims)
		}
		if err != nil {
			// The creations not attempted will never be observed.
			for _, rest := range acts[i+1:] {
				if rest.Kind == actCreate {
					c.expectations.CreationObserved(key)
				}
			}
			if a.Kind == actCreate {
				c.expectations.CreationObserved(key)
			}
			return err
		}
	}
	return nil
}

func (c *Controller) createPod(ctx context.Context, set, updateSet *appsv1.StatefulSet, pod *v1.Pod, claims map[string]*v1.PersistentVolumeClaim) error {
	if err := c.createClaims(ctx, set, pod, claims); err != nil {
		c.podEvent("create", set, pod, err)
		return err
	}
	created, err := c.podControl.Create(ctx, pod, set)
	if apierrors.IsAlreadyExists(err) {
		// Either the cache lags (the round is retried once it catches
		// up) or a pod the set does not own holds the name; upstream
		// records no event for either.
		return fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if err == nil {
		err = c.setClaimOwners(ctx, updateSet, created)
	}
	c.podEvent("create", set, pod, err)
	return err
}

func (c *Controller) deletePod(ctx context.Context, set *appsv1.StatefulSet, pod *v1.Pod, why actionKind) error {
	c.log.Info("deleting pod", "statefulset", set.Namespace+"/"+set.Name, "pod", pod.Name, "reason", why.String())
	err := c.podControl.Delete(ctx, pod, set)
	c.podEvent("delete", set, pod, err)
	return err
}

// repairPod restores what the pod's ordinal implies: its claims, their
// owners and its identity labels.
func (c *Controller) repairPod(ctx context.Context, set, updateSet *appsv1.StatefulSet, pod *v1.Pod, claims map[string]*v1.PersistentVolumeClaim) error {
	if inRange(set, ordinalOf(pod)) {
		if err := c.createClaims(ctx, set, pod, claims); err != nil {
			return err
		}
	}
	if err := c.setClaimOwners(ctx, updateSet, pod); err != nil {
		return err
	}
	if identityMatches(set, pod) {
		return nil
	}
	p := pod.DeepCopy()
	setIdentityLabels(set, p, ordinalOf(p))
	_, err := c.client.CoreV1().Pods(p.Namespace).Update(ctx, p, metav1.UpdateOptions{})
	c.podEvent("update", set, p, err)
	if err != nil {
		return fmt.Errorf("update pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// createClaims creates the pod's missing claims. A claim being deleted
// fails the round: the pod must not start on storage about to vanish.
func (c *Controller) createClaims(ctx context.Context, set *appsv1.StatefulSet, pod *v1.Pod, claims map[string]*v1.PersistentVolumeClaim) error {
	var errs []string
	for _, claim := range claimsFor(set, ordinalOf(pod)) {
		if cur, ok := claims[claim.Name]; ok {
			if cur.DeletionTimestamp != nil {
				errs = append(errs, fmt.Sprintf("pvc %s is being deleted", claim.Name))
			}
			continue
		}
		_, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Create(ctx, &claim, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, fmt.Sprintf("failed to create PVC %s: %s", claim.Name, err))
		}
		if err == nil || !apierrors.IsAlreadyExists(err) {
			c.claimEvent("create", set, pod, &claim, err)
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, ", "))
	}
	return nil
}

// setClaimOwners updates the pod's claims' owner references for the
// retention policy. A claim not yet in the cache is fixed on a later round.
func (c *Controller) setClaimOwners(ctx context.Context, set *appsv1.StatefulSet, pod *v1.Pod) error {
	o := ordinalOf(pod)
	for _, t := range set.Spec.VolumeClaimTemplates {
		name := ClaimName(set, t.Name, o)
		cur, err := c.claims.PersistentVolumeClaims(set.Namespace).Get(name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("get pvc %s: %w", name, err)
		}
		pvc := cur.DeepCopy()
		if !setClaimOwners(pvc, set, pod) {
			continue
		}
		if _, err := c.client.CoreV1().PersistentVolumeClaims(set.Namespace).Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("set owners of pvc %s: %w", name, err)
		}
	}
	return nil
}

// podEvent records upstream's StatefulSet pod events: "create Pod web-0
// in StatefulSet web successful".
func (c *Controller) podEvent(verb string, set *appsv1.StatefulSet, pod *v1.Pod, err error) {
	if err == nil {
		c.recorder.Event(set, v1.EventTypeNormal, "Successful"+title(verb),
			fmt.Sprintf("%s Pod %s in StatefulSet %s successful", verb, pod.Name, set.Name))
		return
	}
	c.recorder.Event(set, v1.EventTypeWarning, "Failed"+title(verb),
		fmt.Sprintf("%s Pod %s in StatefulSet %s failed error: %s", verb, pod.Name, set.Name, err))
}

func (c *Controller) claimEvent(verb string, set *appsv1.StatefulSet, pod *v1.Pod, claim *v1.PersistentVolumeClaim, err error) {
	if err == nil {
		c.recorder.Event(set, v1.EventTypeNormal, "Successful"+title(verb),
			fmt.Sprintf("%s Claim %s Pod %s in StatefulSet %s success", verb, claim.Name, pod.Name, set.Name))
		return
	}
	c.recorder.Event(set, v1.EventTypeWarning, "Failed"+title(verb),
		fmt.Sprintf("%s Claim %s for Pod %s in StatefulSet %s failed error: %s", verb, claim.Name, pod.Name, set.Name, err))
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
