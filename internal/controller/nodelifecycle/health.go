package nodelifecycle

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// health is what the controller remembers of a node between passes: when
// it last heard from the node by the controller's own clock. A kubelet's
// clock is never compared with ours; only a change in what it posted
// (the Ready condition's heartbeat, the Lease's renew time) counts.
type health struct {
	status *v1.NodeStatus
	// probe is when the node last showed a sign of life.
	probe time.Time
	// renew is the Lease renew time seen last.
	renew *metav1.MicroTime
}

func readyCondition(st *v1.NodeStatus) *v1.NodeCondition {
	if st == nil {
		return nil
	}
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1.NodeReady {
			return &st.Conditions[i]
		}
	}
	return nil
}

// observe folds what the node and its Lease show now into what was known
// (nil for a node not seen before), as upstream's tryUpdateNodeHealth: a
// node first seen, or whose Ready condition appeared, disappeared or got
// a new heartbeat, or whose Lease was renewed, was alive now. It returns
// the grace period the node is entitled to: the startup grace while the
// kubelet has never posted a Ready condition.
func observe(prev *health, node *v1.Node, lease *coordinationv1.Lease, now time.Time, c Config) (health, time.Duration) {
	cur := readyCondition(&node.Status)
	grace := c.MonitorGracePeriod
	var h health
	if prev != nil {
		h = *prev
	}
	h.status = &node.Status
	if cur == nil {
		grace = c.StartupGracePeriod
		if prev == nil {
			h.probe = node.CreationTimestamp.Time
		}
	}
	var saved *v1.NodeCondition
	if prev != nil {
		saved = readyCondition(prev.status)
	}
	switch {
	case prev == nil && cur != nil,
		saved == nil && cur != nil,
		saved != nil && cur == nil,
		saved != nil && cur != nil && !saved.LastHeartbeatTime.Equal(&cur.LastHeartbeatTime):
		h.probe = now
	}
	if lease != nil && lease.Spec.RenewTime != nil && (h.renew == nil || h.renew.Before(lease.Spec.RenewTime)) {
		h.renew = lease.Spec.RenewTime
		h.probe = now
	}
	return h, grace
}

// silent reports whether a node has given no sign of life for longer
// than its grace period.
func silent(h health, grace time.Duration, now time.Time) bool {
	return now.After(h.probe.Add(grace))
}

// markUnknown sets the conditions a kubelet owns to Unknown, with
// upstream's reasons and messages, on a node that has gone silent. It
// reports whether the Ready condition changed, the only change worth a
// write (upstream writes on that alone).
func markUnknown(node *v1.Node, now time.Time) bool {
	before := readyCondition(&node.Status)
	var was *v1.NodeCondition
	if before != nil {
		c := *before
		was = &c
	}
	ts := metav1.NewTime(now)
	for _, t := range []v1.NodeConditionType{v1.NodeReady, v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure} {
		found := false
		for i := range node.Status.Conditions {
			c := &node.Status.Conditions[i]
			if c.Type != t {
				continue
			}
			found = true
			if c.Status != v1.ConditionUnknown {
				c.Status = v1.ConditionUnknown
				c.Reason = "NodeStatusUnknown"
				c.Message = "Kubelet stopped posting node status."
				c.LastTransitionTime = ts
			}
		}
		if !found {
			node.Status.Conditions = append(node.Status.Conditions, v1.NodeCondition{
				Type: t, Status: v1.ConditionUnknown,
				Reason: "NodeStatusNeverUpdated", Message: "Kubelet never posted node status.",
				LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: ts,
			})
		}
	}
	after := readyCondition(&node.Status)
	return was == nil || was.Status != after.Status || was.Reason != after.Reason
}
