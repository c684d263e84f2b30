package deployment

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// sync reconciles one Deployment, as upstream's syncDeployment.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.dLister.Deployments(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	d := cached.DeepCopy()
	if d.Spec.Selector == nil || (len(d.Spec.Selector.MatchLabels) == 0 && len(d.Spec.Selector.MatchExpressions) == 0) {
		c.recorder.Eventf(d, corev1.EventTypeWarning, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			_, err := c.client.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
			return err
		}
		return nil
	}
	rsList, err := c.replicaSetsFor(ctx, d)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		newRS, oldRSs, err := c.allReplicaSets(ctx, d, rsList, false)
		if err != nil {
			return err
		}
		return c.syncStatus(ctx, append(oldRSs, newRS), newRS, d)
	}
	if err := c.checkPausedConditions(ctx, d); err != nil {
		return err
	}
	if d.Spec.Paused {
		return c.syncScale(ctx, d, rsList)
	}
	if IsScalingEvent(d, rsList) {
		return c.syncScale(ctx, d, rsList)
	}
	switch d.Spec.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		return c.rolloutRecreate(ctx, d, rsList)
	case appsv1.RollingUpdateDeploymentStrategyType:
		return c.rolloutRolling(ctx, d, rsList)
	}
	return fmt.Errorf("unexpected deployment strategy type: %s", d.Spec.Strategy.Type)
}

// IsScalingEvent reports that the Deployment's replicas differ from what
// an active ReplicaSet last recorded: the user resized the Deployment,
// which is handled by scaling rather than by rolling out.
func IsScalingEvent(d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet) bool {
	for _, rs := range FilterActive(allRSs) {
		desired, err := strconv.Atoi(rs.Annotations[DesiredReplicasAnnotation])
		if err != nil {
			continue
		}
		if int32(desired) != *d.Spec.Replicas {
			return true
		}
	}
	return false
}

// replicaSetsFor lists the namespace's ReplicaSets and claims those the
// Deployment's selector matches (adopting orphans, releasing strays).
func (c *Controller) replicaSetsFor(ctx context.Context, d *appsv1.Deployment) ([]*appsv1.ReplicaSet, error) {
	all, err := c.rsLister.ReplicaSets(d.Namespace).List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list replica sets: %w", err)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %s/%s has invalid label selector: %w", d.Namespace, d.Name, err)
	}
	var out []*appsv1.ReplicaSet
	fresh := false
	for _, rs := range all {
		switch claimAction(d, sel, rs) {
		case claimKeep:
			out = append(out, rs)
		case claimAdopt:
			if !fresh {
				// Adopt only for a Deployment that still exists as cached
				// and is not being deleted, as upstream's canAdopt.
				cur, err := c.client.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
				if err != nil {
					return nil, fmt.Errorf("recheck deployment before adoption: %w", err)
				}
				if cur.UID != d.UID || cur.DeletionTimestamp != nil {
					return nil, fmt.Errorf("deployment %s/%s changed (UID or deletion) before adoption", d.Namespace, d.Name)
				}
				fresh = true
			}
			adopted, err := c.patchOwner(ctx, rs, adoptPatch(d, rs))
			if err != nil {
				return nil, fmt.Errorf("adopt replica set %s: %w", rs.Name, err)
			}
			if adopted != nil {
				out = append(out, adopted)
			}
		case claimRelease:
			if _, err := c.patchOwner(ctx, rs, releasePatch(d, rs)); err != nil && !apierrors.IsInvalid(err) {
				return nil, fmt.Errorf("release replica set %s: %w", rs.Name, err)
			}
		}
	}
	return out, nil
}

type claim int

const (
	claimIgnore claim = iota
	claimKeep
	claimAdopt
	claimRelease
)

// claimAction decides, as upstream's ControllerRefManager, what the
// Deployment does with a ReplicaSet of its namespace.
func claimAction(d *appsv1.Deployment, sel labels.Selector, rs *appsv1.ReplicaSet) claim {
	ref := metav1.GetControllerOf(rs)
	matches := sel.Matches(labels.Set(rs.Labels))
	switch {
	case ref != nil && ref.UID == d.UID:
		if matches {
			return claimKeep
		}
		if d.DeletionTimestamp != nil {
			return claimIgnore
		}
		return claimRelease
	case ref == nil && matches && d.DeletionTimestamp == nil && rs.DeletionTimestamp == nil:
		return claimAdopt
	}
	return claimIgnore
}

func adoptPatch(d *appsv1.Deployment, rs *appsv1.ReplicaSet) []byte {
	t := true
	p, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": []metav1.OwnerReference{{
			APIVersion: controllerKind.GroupVersion().String(), Kind: controllerKind.Kind,
			Name: d.Name, UID: d.UID, Controller: &t, BlockOwnerDeletion: &t,
		}},
		"uid": rs.UID,
	}})
	return p
}

func releasePatch(d *appsv1.Deployment, rs *appsv1.ReplicaSet) []byte {
	return fmt.Appendf(nil, `{"metadata":{"ownerReferences":[{"$patch":"delete","uid":%q}],"uid":%q}}`, d.UID, rs.UID)
}

func (c *Controller) patchOwner(ctx context.Context, rs *appsv1.ReplicaSet, patch []byte) (*appsv1.ReplicaSet, error) {
	out, err := c.client.AppsV1().ReplicaSets(rs.Namespace).Patch(ctx, rs.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return out, err
}

// podsByReplicaSet groups the Deployment's pods by the UID of the
// ReplicaSet controlling them; Recreate waits on them.
func (c *Controller) podsByReplicaSet(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) (map[string][]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, err
	}
	pods, err := c.podLister.Pods(d.Namespace).List(sel)
	if err != nil {
		return nil, err
	}
	m := make(map[string][]*corev1.Pod, len(rsList))
	for _, rs := range rsList {
		m[string(rs.UID)] = nil
	}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			continue
		}
		if _, ok := m[string(ref.UID)]; ok {
			m[string(ref.UID)] = append(m[string(ref.UID)], p)
		}
	}
	return m, nil
}

// allReplicaSets finds the new ReplicaSet (creating it when asked) and
// the old ones, syncing the revision annotations.
func (c *Controller) allReplicaSets(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	oldRSs := FindOldReplicaSets(d, rsList)
	newRS, err := c.newReplicaSet(ctx, d, rsList, oldRSs, create)
	if err != nil {
		return nil, nil, err
	}
	return newRS, oldRSs, nil
}

// newReplicaSet is upstream's getNewReplicaSet: the existing ReplicaSet of
// the current template gets the latest revision; without one, a new
// ReplicaSet NAME-HASH is created (a name taken by a different template is
// a hash collision: collisionCount goes up and the next sync retries).
func (c *Controller) newReplicaSet(ctx context.Context, d *appsv1.Deployment, rsList, oldRSs []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, error) {
	existing := FindNewReplicaSet(d, rsList)
	newRevision := strconv.FormatInt(MaxRevision(oldRSs)+1, 10)
	now := c.now()

	if existing != nil {
		rsCopy := existing.DeepCopy()
		annotationsChanged := SetNewReplicaSetAnnotations(d, rsCopy, newRevision, true, maxRevHistoryLengthInChars)
		if annotationsChanged || rsCopy.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			rsCopy.Spec.MinReadySeconds = d.Spec.MinReadySeconds
			return c.client.AppsV1().ReplicaSets(rsCopy.Namespace).Update(ctx, rsCopy, metav1.UpdateOptions{})
		}
		revChanged := setDeploymentRevision(d, rsCopy.Annotations[RevisionAnnotation])
		statusChanged := false
		if HasProgressDeadline(d) && GetCondition(d.Status, appsv1.DeploymentProgressing) == nil {
			SetCondition(&d.Status, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, FoundNewRSReason,
				fmt.Sprintf("Found new replica set %q", rsCopy.Name), now))
			statusChanged = true
		}
		if err := c.persist(ctx, d, revChanged, statusChanged); err != nil {
			return nil, err
		}
		return rsCopy, nil
	}
	if !create {
		return nil, nil
	}

	template := *d.Spec.Template.DeepCopy()
	hash := ComputeHash(&template, d.Status.CollisionCount)
	template.Labels = withLabel(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	selector := d.Spec.Selector.DeepCopy()
	if selector.MatchLabels == nil {
		selector.MatchLabels = map[string]string{}
	}
	selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	isController := true
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			// A deterministic name makes a create after a stale cache fail
			// rather than duplicate the ReplicaSet.
			Name:      d.Name + "-" + hash,
			Namespace: d.Namespace,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: controllerKind.GroupVersion().String(), Kind: controllerKind.Kind,
				Name: d.Name, UID: d.UID, Controller: &isController, BlockOwnerDeletion: &isController,
			}},
			Labels: template.Labels,
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        new(int32),
			MinReadySeconds: d.Spec.MinReadySeconds,
			Selector:        selector,
			Template:        template,
		},
	}
	n, err := NewRSNewReplicas(d, append(append([]*appsv1.ReplicaSet(nil), oldRSs...), rs), rs)
	if err != nil {
		return nil, err
	}
	*rs.Spec.Replicas = n
	SetNewReplicaSetAnnotations(d, rs, newRevision, false, maxRevHistoryLengthInChars)

	created, err := c.client.AppsV1().ReplicaSets(d.Namespace).Create(ctx, rs, metav1.CreateOptions{})
	alreadyExists := false
	switch {
	case apierrors.IsAlreadyExists(err):
		alreadyExists = true
		cur, getErr := c.rsLister.ReplicaSets(d.Namespace).Get(rs.Name)
		if getErr != nil {
			return nil, getErr
		}
		if ref := metav1.GetControllerOf(cur); ref != nil && ref.UID == d.UID && EqualIgnoreHash(&d.Spec.Template, &cur.Spec.Template) {
			created, err = cur, nil
			break
		}
		if d.Status.CollisionCount == nil {
			d.Status.CollisionCount = new(int32)
		}
		*d.Status.CollisionCount++
		if _, uErr := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{}); uErr == nil {
			c.log.Info("hash collision; bumped collisionCount", "deployment", d.Namespace+"/"+d.Name, "collisionCount", *d.Status.CollisionCount)
		}
		return nil, err
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil, err
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", rs.Name, err)
		if HasProgressDeadline(d) {
			SetCondition(&d.Status, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, FailedRSCreateReason, msg, now))
			// The create error is what matters; a failed status write is
			// retried with it.
			_, _ = c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
		}
		c.recorder.Event(d, corev1.EventTypeWarning, FailedRSCreateReason, msg)
		return nil, err
	}
	if !alreadyExists && n > 0 {
		c.recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", created.Name, n)
	}
	revChanged := setDeploymentRevision(d, newRevision)
	statusChanged := false
	if !alreadyExists && HasProgressDeadline(d) {
		SetCondition(&d.Status, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, NewReplicaSetReason,
			fmt.Sprintf("Created new replica set %q", created.Name), now))
		statusChanged = true
	}
	return created, c.persist(ctx, d, revChanged, statusChanged)
}

func withLabel(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// setDeploymentRevision sets the Deployment's revision annotation.
func setDeploymentRevision(d *appsv1.Deployment, revision string) bool {
	if d.Annotations[RevisionAnnotation] == revision {
		return false
	}
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[RevisionAnnotation] = revision
	return true
}

// persist writes the Deployment's revision annotation and its status.
// The annotation goes through an update of the object (which leaves the
// generation alone: the spec is unchanged), the one write besides /status
// that upstream's deployment-controller role allows. d is updated to what
// the server returned.
func (c *Controller) persist(ctx context.Context, d *appsv1.Deployment, revision, status bool) error {
	if revision {
		out, err := c.client.AppsV1().Deployments(d.Namespace).Update(ctx, d, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("set revision of deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
		st := d.Status
		*d = *out
		d.Status = st
		status = true
	}
	if !status {
		return nil
	}
	out, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update status of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	*d = *out
	return nil
}

// checkPausedConditions records pausing and resuming in the Progressing
// condition, so that time spent paused never counts toward the deadline.
func (c *Controller) checkPausedConditions(ctx context.Context, d *appsv1.Deployment) error {
	if !HasProgressDeadline(d) {
		return nil
	}
	cond := GetCondition(d.Status, appsv1.DeploymentProgressing)
	if cond != nil && cond.Reason == TimedOutReason {
		return nil
	}
	pausedCond := cond != nil && cond.Reason == PausedDeployReason
	switch {
	case d.Spec.Paused && !pausedCond:
		SetCondition(&d.Status, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, PausedDeployReason, "Deployment is paused", c.now()))
	case !d.Spec.Paused && pausedCond:
		SetCondition(&d.Status, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ResumedDeployReason, "Deployment is resumed", c.now()))
	default:
		return nil
	}
	return c.persist(ctx, d, false, true)
}

// syncScale handles a resize or a paused Deployment: scale, clean up
// history when paused, report status; never roll out.
func (c *Controller) syncScale(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := c.allReplicaSets(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	if err := c.scale(ctx, d, newRS, oldRSs); err != nil {
		return err
	}
	if d.Spec.Paused {
		if err := c.cleanup(ctx, d, oldRSs); err != nil {
			return err
		}
	}
	return c.syncStatus(ctx, append(oldRSs, newRS), newRS, d)
}

// scale is upstream's scale: one active ReplicaSet takes the whole size;
// a saturated new one means the old go to zero; otherwise the change is
// spread in proportion (RollingUpdate only).
func (c *Controller) scale(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) error {
	if rs := FindActiveOrLatest(newRS, oldRSs); rs != nil {
		if *rs.Spec.Replicas == *d.Spec.Replicas {
			return nil
		}
		_, _, err := c.scaleReplicaSet(ctx, rs, *d.Spec.Replicas, d)
		return err
	}
	if IsSaturated(d, newRS) {
		for _, old := range FilterActive(oldRSs) {
			if _, _, err := c.scaleReplicaSet(ctx, old, 0, d); err != nil {
				return err
			}
		}
		return nil
	}
	if !IsRollingUpdate(d) {
		return nil
	}
	for _, s := range ProportionalSizes(d, FilterActive(append(oldRSs, newRS))) {
		if _, _, err := c.scaleReplicaSet(ctx, s.RS, s.Replicas, d); err != nil {
			return err
		}
	}
	return nil
}

// scaleReplicaSet sets rs's size and replicas annotations, recording
// ScalingReplicaSet when the size changed.
func (c *Controller) scaleReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, size int32, d *appsv1.Deployment) (bool, *appsv1.ReplicaSet, error) {
	maxReplicas := *d.Spec.Replicas + MaxSurge(d)
	sizeChanged := *rs.Spec.Replicas != size
	if !sizeChanged && !ReplicasAnnotationsNeedUpdate(rs, *d.Spec.Replicas, maxReplicas) {
		return false, rs, nil
	}
	from := *rs.Spec.Replicas
	cp := rs.DeepCopy()
	*cp.Spec.Replicas = size
	SetReplicasAnnotations(cp, *d.Spec.Replicas, maxReplicas)
	out, err := c.client.AppsV1().ReplicaSets(cp.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
	if err != nil {
		return false, rs, fmt.Errorf("scale replica set %s/%s to %d: %w", rs.Namespace, rs.Name, size, err)
	}
	if sizeChanged {
		op := "down"
		if from < size {
			op = "up"
		}
		c.recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d", op, out.Name, from, size)
	}
	return sizeChanged, out, nil
}

// cleanup deletes old ReplicaSets beyond revisionHistoryLimit.
func (c *Controller) cleanup(ctx context.Context, d *appsv1.Deployment, oldRSs []*appsv1.ReplicaSet) error {
	for _, rs := range CleanupCandidates(d, oldRSs) {
		err := c.client.AppsV1().ReplicaSets(rs.Namespace).Delete(ctx, rs.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &rs.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete old replica set %s/%s: %w", rs.Namespace, rs.Name, err)
		}
	}
	return nil
}

// syncStatus writes the status computed from the ReplicaSets, keeping
// the conditions other than Available as they are.
func (c *Controller) syncStatus(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	st := CalculateStatus(allRSs, newRS, d, c.now())
	if reflect.DeepEqual(d.Status, st) {
		return nil
	}
	d.Status = st
	return c.persist(ctx, d, false, true)
}

// syncRolloutStatus writes the status with the Progressing condition
// brought up to date, and when nothing changed, schedules a look at the
// deadline.
func (c *Controller) syncRolloutStatus(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	now := c.now()
	st := CalculateStatus(allRSs, newRS, d, now)
	RolloutConditions(d, &st, allRSs, newRS, now)
	if reflect.DeepEqual(d.Status, st) {
		c.requeueStuck(d, &st, now)
		return nil
	}
	d.Status = st
	return c.persist(ctx, d, false, true)
}

func (c *Controller) requeueStuck(d *appsv1.Deployment, st *appsv1.DeploymentStatus, now time.Time) {
	after := StuckRequeueAfter(d, st, now)
	key, err := cache.MetaNamespaceKeyFunc(d)
	if after < 0 || err != nil {
		return
	}
	if after < time.Second {
		c.queue.AddRateLimited(key)
		return
	}
	// The extra second keeps a timer firing a hair early from finding the
	// deadline not yet passed.
	c.queue.AddAfter(key, after+time.Second)
}
