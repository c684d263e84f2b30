package nftplan

import (
	"context"
	"log/slog"
	"time"
)

// Trigger asks a Loop for a sync; pokes that come while one is pending
// are one poke.
type Trigger chan struct{}

// NewTrigger is a Trigger with nothing pending.
func NewTrigger() Trigger { return make(Trigger, 1) }

// Poke asks for a sync without waiting.
func (t Trigger) Poke() {
	select {
	case t <- struct{}{}:
	default:
	}
}

// Loop is how a node's nftables program keeps its table current.
type Loop struct {
	// MinSync coalesces bursts of changes into one sync: whatever
	// arrives within it of the last sync joins the next.
	MinSync time.Duration
	// FullSync rewrites the whole table now and then, repairing what was
	// changed behind the program's back.
	FullSync time.Duration
	Log      *slog.Logger
	// What names the rules in the log.
	What string
}

// Run calls sync once at the start (full) and then for every poke of t,
// with full true every FullSync, until ctx ends. A failed sync is tried
// again after a second, in full: the table's content is unknown then.
func (l Loop) Run(ctx context.Context, t Trigger, sync func(full bool) error) {
	full := time.NewTicker(l.FullSync)
	defer full.Stop()
	var retry <-chan time.Time
	var last time.Time
	wantFull := true
	t.Poke()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t:
		case <-full.C:
			wantFull = true
		case <-retry:
		}
		if wait := l.MinSync - time.Since(last); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		select {
		case <-t:
		default:
		}
		last = time.Now()
		retry = nil
		if err := sync(wantFull); err != nil {
			if ctx.Err() != nil {
				return
			}
			l.Log.Error("sync "+l.What, "err", err)
			retry = time.After(time.Second)
			wantFull = true
			continue
		}
		wantFull = false
	}
}
