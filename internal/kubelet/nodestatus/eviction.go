package nodestatus

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Thresholds are the hard eviction thresholds (upstream's --eviction-hard):
// allocatable is capacity minus reservations minus these, and crossing
// one is pressure, which the node lifecycle controller turns into a
// NoSchedule taint.
type Thresholds struct {
	Memory threshold // memory.available
	Nodefs threshold // nodefs.available
	PID    threshold // pid.available
}

// threshold is an amount or a share of capacity.
type threshold struct {
	quantity *resource.Quantity
	percent  float64
}

// of is the threshold for a capacity.
func (t threshold) of(capacity int64) int64 {
	if t.quantity != nil {
		return t.quantity.Value()
	}
	return int64(float64(capacity) * t.percent / 100)
}

// DefaultThresholds are upstream's kubelet defaults for the signals Orca
// observes.
func DefaultThresholds() Thresholds {
	mem := resource.MustParse("100Mi")
	return Thresholds{Memory: threshold{quantity: &mem}, Nodefs: threshold{percent: 10}, PID: threshold{percent: 5}}
}

// ParseThresholds reads upstream's --eviction-hard syntax,
// "memory.available<100Mi,nodefs.available<10%": signals not named keep
// their defaults; imagefs signals are accepted and ignored, as the image
// store shares the node's file system here.
func ParseThresholds(s string) (Thresholds, error) {
	t := DefaultThresholds()
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		signal, value, ok := strings.Cut(item, "<")
		if !ok {
			return t, fmt.Errorf("eviction threshold %q: want SIGNAL<VALUE, e.g. nodefs.available<10%%", item)
		}
		var th threshold
		if p, isPercent := strings.CutSuffix(value, "%"); isPercent {
			f, err := strconv.ParseFloat(p, 64)
			if err != nil || f < 0 || f > 100 {
				return t, fmt.Errorf("eviction threshold %q: percentage must be between 0%% and 100%%", item)
			}
			th.percent = f
		} else {
			q, err := resource.ParseQuantity(value)
			if err != nil || q.Sign() < 0 {
				return t, fmt.Errorf("eviction threshold %q: %q is neither a quantity nor a percentage", item, value)
			}
			th.quantity = &q
		}
		switch signal {
		case "memory.available":
			t.Memory = th
		case "nodefs.available":
			t.Nodefs = th
		case "pid.available":
			t.PID = th
		case "imagefs.available", "imagefs.inodesFree", "nodefs.inodesFree", "containerfs.available", "containerfs.inodesFree":
		default:
			return t, fmt.Errorf("eviction threshold %q: unknown signal %q", item, signal)
		}
	}
	return t, nil
}
