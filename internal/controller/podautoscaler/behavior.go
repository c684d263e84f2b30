package podautoscaler

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// defaultDownscaleStabilization is
// --horizontal-pod-autoscaler-downscale-stabilization, the scale-down
// window of an HPA that sets none.
const defaultDownscaleStabilization = 5 * time.Minute

// Without a behavior, a scale up is limited to double the replicas or 4,
// whichever is more, as upstream's legacy rule.
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

// recommendation is one past desired replica count.
type recommendation struct {
	replicas int32
	at       time.Time
}

// scaleEvent is one past change of the replica count, by how much.
type scaleEvent struct {
	change   int32
	at       time.Time
	outdated bool
}

// history is what the controller remembers of one HPA between syncs.
type history struct {
	recommendations []recommendation
	scaleUps        []scaleEvent
	scaleDowns      []scaleEvent
}

// limit is the result of normalizing a recommendation: the replica count
// and the AbleToScale and ScalingLimited reasons and messages.
type limit struct {
	replicas                  int32
	ableReason, ableMessage   string
	limitReason, limitMessage string
	limited                   bool
}

const (
	msgReadyForNewScale = "recommended size matches current size"
	msgUpStabilized     = "recent recommendations were lower than current one, applying the lowest recent recommendation"
	msgDownStabilized   = "recent recommendations were higher than current one, applying the highest recent recommendation"
	msgWithinRange      = "the desired count is within the acceptable range"
	msgScaleUpLimit     = "the desired replica count is increasing faster than the maximum scale rate"
	msgScaleDownLimit   = "the desired replica count is decreasing faster than the maximum scale rate"
	msgTooMany          = "the desired replica count is more than the maximum replica count"
	msgTooFew           = "the desired replica count is less than the minimum replica count"
)

// record adds a recommendation made at now, reusing the slot of one older
// than every window that still matters, as upstream does.
func (h *history) record(desired int32, now time.Time, stale func(time.Time) bool) {
	for i, r := range h.recommendations {
		if stale(r.at) {
			h.recommendations[i] = recommendation{desired, now}
			return
		}
	}
	h.recommendations = append(h.recommendations, recommendation{desired, now})
}

// normalizeLegacy is upstream's normalizeDesiredReplicas, for an HPA
// without behavior: the highest recommendation of the downscale window,
// then min/max replicas and the legacy scale-up limit.
func (h *history) normalizeLegacy(current, desired, minReplicas, maxReplicas int32, now time.Time) limit {
	cutoff := now.Add(-defaultDownscaleStabilization)
	stabilized := desired
	for _, r := range h.recommendations {
		if !r.at.Before(cutoff) && r.replicas > stabilized {
			stabilized = r.replicas
		}
	}
	h.record(desired, now, func(at time.Time) bool { return at.Before(cutoff) })
	l := limit{ableReason: "ReadyForNewScale", ableMessage: msgReadyForNewScale}
	if stabilized != desired {
		l.ableReason, l.ableMessage = "ScaleDownStabilized", msgDownStabilized
	}
	maxAllowed, reason, message := maxReplicas, "TooManyReplicas", msgTooMany
	if upLimit := int32(math.Max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum)); maxReplicas > upLimit {
		maxAllowed, reason, message = upLimit, "ScaleUpLimit", msgScaleUpLimit
	}
	l.replicas, l.limitReason, l.limitMessage = stabilized, "DesiredWithinRange", msgWithinRange
	switch {
	case stabilized < minReplicas:
		l.replicas, l.limitReason, l.limitMessage = minReplicas, "TooFewReplicas", msgTooFew
	case stabilized > maxAllowed:
		l.replicas, l.limitReason, l.limitMessage = maxAllowed, reason, message
	}
	l.limited = l.replicas != stabilized
	return l
}

// normalize is upstream's normalizeDesiredReplicasWithBehaviors: the
// recommendation is held between the lowest of the scale-up window and
// the highest of the scale-down window, then limited by the policies
// over the replicas changed within their periods, and min/max replicas.
// Behavior must have both rules defaulted; an unset scale-down window is
// the controller's default.
func (h *history) normalize(b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired, minReplicas, maxReplicas int32, now time.Time) limit {
	up, down := b.ScaleUp, b.ScaleDown
	downWindow := defaultDownscaleStabilization
	if down.StabilizationWindowSeconds != nil {
		downWindow = time.Duration(*down.StabilizationWindowSeconds) * time.Second
	}
	upCutoff := now.Add(-time.Duration(*up.StabilizationWindowSeconds) * time.Second)
	downCutoff := now.Add(-downWindow)

	upRec, downRec := desired, desired
	for _, r := range h.recommendations {
		if r.at.After(upCutoff) {
			upRec = min(upRec, r.replicas)
		}
		if r.at.After(downCutoff) {
			downRec = max(downRec, r.replicas)
		}
	}
	stabilized := max(current, upRec)
	stabilized = min(stabilized, downRec)
	h.record(desired, now, func(at time.Time) bool { return at.Before(upCutoff) && at.Before(downCutoff) })

	l := limit{ableReason: "ReadyForNewScale", ableMessage: msgReadyForNewScale}
	if stabilized != desired {
		if desired >= current {
			l.ableReason, l.ableMessage = "ScaleUpStabilized", msgUpStabilized
		} else {
			l.ableReason, l.ableMessage = "ScaleDownStabilized", msgDownStabilized
		}
	}

	l.replicas, l.limitReason, l.limitMessage = stabilized, "DesiredWithinRange", msgWithinRange
	switch {
	case stabilized > current:
		upLimit := max(scaleUpLimit(current, h.scaleUps, h.scaleDowns, up, now), current)
		maxAllowed, reason, message := maxReplicas, "TooManyReplicas", msgTooMany
		if maxReplicas > upLimit {
			maxAllowed, reason, message = upLimit, "ScaleUpLimit", msgScaleUpLimit
		}
		if stabilized > maxAllowed {
			l.replicas, l.limitReason, l.limitMessage = maxAllowed, reason, message
		}
	case stabilized < current:
		downLimit := min(scaleDownLimit(current, h.scaleUps, h.scaleDowns, down, now), current)
		minAllowed, reason, message := minReplicas, "TooFewReplicas", msgTooFew
		if minReplicas < downLimit {
			minAllowed, reason, message = downLimit, "ScaleDownLimit", msgScaleDownLimit
		}
		if stabilized < minAllowed {
			l.replicas, l.limitReason, l.limitMessage = minAllowed, reason, message
		}
	}
	l.limited = l.replicas != stabilized
	return l
}

// changedWithin sums the changes of the events within period before now.
func changedWithin(periodSeconds int32, events []scaleEvent, now time.Time) int32 {
	cutoff := now.Add(-time.Duration(periodSeconds) * time.Second)
	var n int32
	for _, e := range events {
		if e.at.After(cutoff) {
			n += e.change
		}
	}
	return n
}

// scaleUpLimit is the most replicas the scale-up policies allow now.
func scaleUpLimit(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	return policyLimit(current, ups, downs, rules, now, true)
}

// scaleDownLimit is the fewest replicas the scale-down policies allow now.
func scaleDownLimit(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	return policyLimit(current, ups, downs, rules, now, false)
}

// policyLimit is the replica count the policies allow in one direction,
// each policy counted from the replicas at the start of its period. Max
// picks the policy allowing the largest change, Min the smallest.
func policyLimit(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time, up bool) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	highest := (*rules.SelectPolicy != autoscalingv2.MinChangePolicySelect) == up
	pick, result := minInt32, int32(math.MaxInt32)
	if highest {
		pick, result = maxInt32, math.MinInt32
	}
	for _, p := range rules.Policies {
		start := current - changedWithin(p.PeriodSeconds, ups, now) + changedWithin(p.PeriodSeconds, downs, now)
		var proposed int32
		switch {
		case p.Type == autoscalingv2.PodsScalingPolicy && up:
			proposed = start + p.Value
		case p.Type == autoscalingv2.PodsScalingPolicy:
			proposed = start - p.Value
		case p.Type == autoscalingv2.PercentScalingPolicy && up:
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		case p.Type == autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

// recordScale remembers a change of the replica count for the policies'
// periods, reusing the slot of an event older than the longest of them.
func (h *history) recordScale(b *autoscalingv2.HorizontalPodAutoscalerBehavior, from, to int32, now time.Time) {
	if b == nil {
		return
	}
	events, rules, change := &h.scaleDowns, b.ScaleDown, from-to
	if to > from {
		events, rules, change = &h.scaleUps, b.ScaleUp, to-from
	}
	var longest int32
	for _, p := range rules.Policies {
		longest = max(longest, p.PeriodSeconds)
	}
	cutoff := now.Add(-time.Duration(longest) * time.Second)
	slot := -1
	for i := range *events {
		if (*events)[i].at.Before(cutoff) {
			(*events)[i].outdated = true
		}
		if (*events)[i].outdated {
			slot = i
		}
	}
	e := scaleEvent{change: change, at: now}
	if slot >= 0 {
		(*events)[slot] = e
	} else {
		*events = append(*events, e)
	}
}

func minInt32(a, b int32) int32 { return min(a, b) }
func maxInt32(a, b int32) int32 { return max(a, b) }
