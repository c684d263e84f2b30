package deployment

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
)

// rolloutRolling is one step of a RollingUpdate: scale the new ReplicaSet
// up as far as maxSurge allows, else scale old ones down as far as
// maxUnavailable allows; once complete, trim the history.
func (c *Controller) rolloutRolling(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := c.allReplicaSets(ctx, d, rsList, true)
	if err != nil {
		return err
	}
	allRSs := append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)

	scaledUp, err := c.reconcileNewReplicaSet(ctx, allRSs, newRS, d)
	if err != nil {
		return err
	}
	if scaledUp {
		return c.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	scaledDown, err := c.reconcileOldReplicaSets(ctx, allRSs, FilterActive(oldRSs), newRS, d)
	if err != nil {
		return err
	}
	if scaledDown {
		return c.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	if DeploymentComplete(d, &d.Status) {
		if err := c.cleanup(ctx, d, oldRSs); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, allRSs, newRS, d)
}

func (c *Controller) reconcileNewReplicaSet(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	switch {
	case *newRS.Spec.Replicas == *d.Spec.Replicas:
		return false, nil
	case *newRS.Spec.Replicas > *d.Spec.Replicas:
		scaled, _, err := c.scaleReplicaSet(ctx, newRS, *d.Spec.Replicas, d)
		return scaled, err
	}
	n, err := NewRSNewReplicas(d, allRSs, newRS)
	if err != nil {
		return false, err
	}
	if n == *newRS.Spec.Replicas {
		return false, nil
	}
	scaled, _, err := c.scaleReplicaSet(ctx, newRS, n, d)
	return scaled, err
}

// reconcileOldReplicaSets scales old ReplicaSets down: first by their
// unavailable pods, then by what availability beyond the minimum allows.
func (c *Controller) reconcileOldReplicaSets(ctx context.Context, allRSs, oldRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	if ReplicaCount(oldRSs) == 0 {
		return false, nil
	}
	maxScaledDown := MaxScaledDown(d, allRSs, newRS)
	if maxScaledDown <= 0 {
		return false, nil
	}
	oldRSs = append([]*appsv1.ReplicaSet(nil), oldRSs...)
	var total int32
	for _, s := range PlanUnhealthyCleanup(oldRSs, maxScaledDown) {
		total += *s.RS.Spec.Replicas - s.Replicas
		_, updated, err := c.scaleReplicaSet(ctx, s.RS, s.Replicas, d)
		if err != nil {
			return false, fmt.Errorf("clean up unhealthy replicas: %w", err)
		}
		for i := range oldRSs {
			if oldRSs[i].UID == updated.UID {
				oldRSs[i] = updated
			}
		}
	}
	allRSs = append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	for _, s := range PlanOldScaleDown(d, allRSs, oldRSs) {
		total += *s.RS.Spec.Replicas - s.Replicas
		if _, _, err := c.scaleReplicaSet(ctx, s.RS, s.Replicas, d); err != nil {
			return false, err
		}
	}
	return total > 0, nil
}

// rolloutRecreate scales every old ReplicaSet to zero, waits until none of
// their pods is left, and only then creates and scales up the new one.
func (c *Controller) rolloutRecreate(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	// The new ReplicaSet is not created yet: it would start pods early.
	newRS, oldRSs, err := c.allReplicaSets(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	allRSs := append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)

	scaledDown := false
	for _, rs := range FilterActive(oldRSs) {
		scaled, _, err := c.scaleReplicaSet(ctx, rs, 0, d)
		if err != nil {
			return err
		}
		scaledDown = scaledDown || scaled
	}
	if scaledDown {
		return c.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	pods, err := c.podsByReplicaSet(d, rsList)
	if err != nil {
		return err
	}
	if oldPodsRunning(newRS, oldRSs, pods) {
		return c.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	if newRS == nil {
		newRS, oldRSs, err = c.allReplicaSets(ctx, d, rsList, true)
		if err != nil {
			return err
		}
		allRSs = append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	}
	if _, _, err := c.scaleReplicaSet(ctx, newRS, *d.Spec.Replicas, d); err != nil {
		return err
	}
	if DeploymentComplete(d, &d.Status) {
		if err := c.cleanup(ctx, d, oldRSs); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, allRSs, newRS, d)
}
