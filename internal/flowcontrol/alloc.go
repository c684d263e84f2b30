package flowcontrol

import (
	"errors"
	"math"
	"time"
)

// Borrowing, as upstream's: every adjustment period each level's demand
// (seats in use plus seats waiting) is summarised, and the server's
// seats are shared out again in proportion to the smoothed demand, each
// level staying between what it may not lend and what it may borrow.

const (
	// adjustPeriod is how often seats move between levels.
	adjustPeriod = 10 * time.Second
	// demandSmoothing is how slowly a level's smoothed demand decays.
	demandSmoothing = 0.977
	// minTarget stands in for a zero demand, which has no proportion.
	minTarget = 0.001
)

// demand integrates a level's seat demand over time: its time-weighted
// mean and deviation, and its peak, since the last reset.
type demand struct {
	last          time.Time
	x             float64
	dt, ix, ixx   float64
	peak          float64
	smoothed      float64
	highWatermark int
}

func newDemand(now time.Time) *demand { return &demand{last: now} }

// set records that demand is x from now on.
func (d *demand) set(now time.Time, x float64) {
	d.accumulate(now)
	d.x = x
	d.peak = math.Max(d.peak, x)
}

func (d *demand) accumulate(now time.Time) {
	if dt := now.Sub(d.last).Seconds(); dt > 0 {
		d.dt += dt
		d.ix += d.x * dt
		d.ixx += d.x * d.x * dt
	}
	d.last = now
}

// period closes the period ending now: the peak becomes the high
// watermark, and mean plus deviation pulls the smoothed demand up at once
// or lets it decay slowly.
func (d *demand) period(now time.Time) {
	d.accumulate(now)
	d.highWatermark = int(math.Round(d.peak))
	if d.dt > 0 {
		avg := d.ix / d.dt
		dev := math.Sqrt(math.Max(0, d.ixx/d.dt-avg*avg))
		envelope := avg + dev
		d.smoothed = math.Max(envelope, demandSmoothing*d.smoothed+(1-demandSmoothing)*envelope)
	}
	d.dt, d.ix, d.ixx, d.peak = 0, 0, 0, d.x
}

// share is one level in an allocation: it gets a share of the seats in
// proportion to target, within its bounds.
type share struct {
	target, lower, upper float64
}

// allocate splits total among the shares: each gets fair×target clamped
// to its bounds, for the one fair proportion that makes them add up to
// total. Upstream computes the same (computeConcurrencyAllocation); the
// sum is monotonic in the proportion, so a bisection finds it.
func allocate(total float64, shares []share) ([]float64, error) {
	var lowSum, highSum, top float64
	for _, s := range shares {
		if s.lower < 0 || s.upper < s.lower || s.target < s.lower {
			return nil, errors.New("flowcontrol: inconsistent bounds")
		}
		lowSum += s.lower
		highSum += s.upper
		top = math.Max(top, s.upper/math.Max(s.target, minTarget))
	}
	const epsilon = 1e-7
	if lowSum-total > epsilon || total-highSum > epsilon {
		return nil, errors.New("flowcontrol: bounds cannot add up to the total")
	}
	sum := func(fair float64) float64 {
		var t float64
		for _, s := range shares {
			t += clamp(fair*math.Max(s.target, minTarget), s.lower, s.upper)
		}
		return t
	}
	lo, hi := 0.0, top
	for range 200 {
		mid := (lo + hi) / 2
		if sum(mid) < total {
			lo = mid
		} else {
			hi = mid
		}
	}
	out := make([]float64, len(shares))
	for i, s := range shares {
		out[i] = clamp(hi*math.Max(s.target, minTarget), s.lower, s.upper)
	}
	return out, nil
}

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }

// borrowingLevel is what an adjustment reads of a level.
type borrowingLevel struct {
	exempt                  bool
	nominalCL, minCL, maxCL int
	highWatermark           int
	smoothed                float64
	currentCL               int
}

// adjust computes every level's current limit from its demand, as
// upstream's updateBorrowing: exempt levels first keep what they used;
// if what remains cannot give every other level its demand up to its
// nominal share, the others are scaled between their minimum and that;
// otherwise the seats are shared out in proportion to smoothed demand.
func adjust(nominalSum int, levels []borrowingLevel) []int {
	remaining := nominalSum
	var minSum, minCurrentSum int
	var shares []share
	var idx []int
	minCurrent := make([]int, len(levels))
	for i, l := range levels {
		if l.exempt {
			minCurrent[i] = max(l.minCL, l.highWatermark)
			remaining -= minCurrent[i]
			continue
		}
		minCurrent[i] = max(l.minCL, min(l.nominalCL, l.highWatermark))
		idx = append(idx, i)
		shares = append(shares, share{lower: float64(minCurrent[i]), upper: float64(l.maxCL), target: math.Max(float64(minCurrent[i]), l.smoothed)})
		minSum += l.minCL
		minCurrentSum += minCurrent[i]
	}
	out := make([]int, len(levels))
	for i, l := range levels {
		if l.exempt {
			out[i] = minCurrent[i]
		}
	}
	switch {
	case remaining <= minSum:
		for _, i := range idx {
			out[i] = levels[i].minCL
		}
	case remaining <= minCurrentSum:
		frac := float64(remaining-minSum) / float64(minCurrentSum-minSum)
		for _, i := range idx {
			out[i] = levels[i].minCL + int(math.Round(float64(minCurrent[i]-levels[i].minCL)*frac))
		}
	default:
		// Upstream shares out the nominal sum here, not what the exempt
		// levels left.
		allocs, err := allocate(float64(nominalSum), shares)
		for k, i := range idx {
			if err != nil {
				out[i] = levels[i].currentCL
				continue
			}
			out[i] = int(math.Round(allocs[k]))
		}
	}
	return out
}
