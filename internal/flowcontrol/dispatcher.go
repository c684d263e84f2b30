package flowcontrol

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/flowcontrol/fairqueue"
)

// Classification is where a request was put: the FlowSchema that matched
// it and its priority level. The UIDs are what upstream's response
// headers carry; an imagined mandatory object has none.
type Classification struct {
	FlowSchema, PriorityLevel       string
	FlowSchemaUID, PriorityLevelUID types.UID
}

// Work is what admitting a request needs besides its classification.
type Work struct {
	// Seats is the request's estimated width, at least 1; the level caps
	// it.
	Seats int
	// Queued, when set, is told when the request joins its queue (true)
	// and when it leaves it (false).
	Queued func(inQueue bool)
}

// Dispatcher admits requests under API Priority and Fairness. It is safe
// for concurrent use; until Run gives it the cluster's configuration, it
// has only the mandatory exempt and catch-all levels.
type Dispatcher struct {
	serverCL int
	now      func() time.Time
	log      *slog.Logger
	m        *metrics
	retry    *retryAfter

	// mu serializes configuration changes and borrowing adjustments;
	// admission reads the current snapshot without it.
	mu  sync.Mutex
	cur atomic.Pointer[snapshot]

	syncOnce sync.Once
	synced   chan struct{}
}

// snapshot is one configuration: schemas in matching order and the levels
// by name.
type snapshot struct {
	schemas    []*flowcontrolv1.FlowSchema
	levels     map[string]*level
	nominalSum int
}

// level is a priority level and its queues. A level survives
// configuration changes that keep its name, so its queues and waiting
// requests carry over.
type level struct {
	name string

	mu        sync.Mutex
	spec      levelSpec
	currentCL int
	qs        *fairqueue.QueueSet[*waiter]
	demand    *demand
}

// waiter is a queued request's handle: ready is closed when it may run.
type waiter struct{ ready chan struct{} }

// New returns a dispatcher sharing serverConcurrencyLimit seats (the sum
// of the two max-in-flight limits, as upstream) and registering its
// metrics with reg.
func New(serverConcurrencyLimit int, reg prometheus.Registerer, log *slog.Logger) (*Dispatcher, error) {
	return newDispatcher(serverConcurrencyLimit, reg, log, time.Now)
}

func newDispatcher(serverCL int, reg prometheus.Registerer, log *slog.Logger, now func() time.Time) (*Dispatcher, error) {
	if serverCL <= 0 {
		return nil, fmt.Errorf("flowcontrol: the server's concurrency limit must be positive, not %d", serverCL)
	}
	if log == nil {
		log = slog.Default()
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	d := &Dispatcher{serverCL: serverCL, now: now, log: log.With("component", "flowcontrol"), m: m, retry: newRetryAfter(), synced: make(chan struct{})}
	d.cur.Store(&snapshot{levels: map[string]*level{}})
	d.update(nil, nil)
	return d, nil
}

// Synced is closed once the dispatcher has had the cluster's
// configuration.
func (d *Dispatcher) Synced() <-chan struct{} { return d.synced }

// RetryAfter is the Retry-After, in seconds, for a request the level
// refused.
func (d *Dispatcher) RetryAfter(level string) int64 { return d.retry.get(level) }

// Admit classifies r and waits, until ctx ends, for it to be allowed to
// run. It returns a ticket to Finish when the request is done, or why
// it was refused; the classification either way.
func (d *Dispatcher) Admit(ctx context.Context, r Request, w Work) (Classification, *Ticket, fairqueue.Reason) {
	snap := d.cur.Load()
	fs := classify(snap.schemas, &r)
	lvl := snap.levels[fs.Spec.PriorityLevelConfiguration.Name]
	cls := Classification{FlowSchema: fs.Name, FlowSchemaUID: fs.UID, PriorityLevel: lvl.name}

	wt := &waiter{ready: make(chan struct{})}
	fr := &fairqueue.Request[*waiter]{Item: wt, Seats: max(1, w.Seats)}

	lvl.mu.Lock()
	spec := lvl.spec
	cls.PriorityLevelUID = spec.pl.UID
	if q := spec.queuing; !q.Exempt && q.Queues > 1 {
		fr.Hash = flowHash(fs.Name, distinguisher(fs, &r))
	}
	if spec.maxSeats > 0 {
		fr.Seats = min(fr.Seats, spec.maxSeats)
	}
	now := d.now()
	started, refused := lvl.qs.Arrive(now, fr)
	lvl.wake(started, fr)
	runNow := fr.Executing()
	lvl.noteDemand(now)
	lvl.mu.Unlock()

	flow := []string{cls.PriorityLevel, cls.FlowSchema}
	d.m.estimatedSeats.WithLabelValues(flow...).Observe(float64(fr.Seats))
	exempt := spec.queuing.Exempt
	if refused != "" {
		d.m.waitDuration.WithLabelValues(cls.PriorityLevel, cls.FlowSchema, "false").Observe(0)
		d.refuse(cls, refused, now)
		return cls, nil, refused
	}
	if !runNow {
		d.m.inqueue.WithLabelValues(flow...).Inc()
		d.m.inqueueSeats.WithLabelValues(flow...).Add(float64(fr.Seats))
		if w.Queued != nil {
			w.Queued(true)
		}
		leave := func(executed bool) {
			d.m.inqueue.WithLabelValues(flow...).Dec()
			d.m.inqueueSeats.WithLabelValues(flow...).Sub(float64(fr.Seats))
			if w.Queued != nil {
				w.Queued(false)
			}
			d.m.waitDuration.WithLabelValues(cls.PriorityLevel, cls.FlowSchema, strconv.FormatBool(executed)).Observe(d.now().Sub(now).Seconds())
		}
		select {
		case <-wt.ready:
		case <-ctx.Done():
			lvl.mu.Lock()
			t := d.now()
			removed, started := lvl.qs.Cancel(t, fr)
			lvl.wake(started, nil)
			lvl.noteDemand(t)
			lvl.mu.Unlock()
			if removed {
				leave(false)
				d.refuse(cls, fairqueue.TimeOut, t)
				return cls, nil, fairqueue.TimeOut
			}
			// It was started while its wait ended: it runs after all.
		}
		leave(true)
	} else if !exempt {
		d.m.waitDuration.WithLabelValues(cls.PriorityLevel, cls.FlowSchema, "true").Observe(0)
	}
	d.m.dispatched.WithLabelValues(flow...).Inc()
	d.m.executing.WithLabelValues(flow...).Inc()
	d.m.executingSeats.WithLabelValues(flow...).Add(float64(fr.Seats))
	kind := "regular"
	if r.ResourceRequest && r.Verb == "watch" {
		kind = "watch"
	}
	return cls, &Ticket{d: d, lvl: lvl, req: fr, cls: cls, kind: kind, started: d.now()}, ""
}

func (d *Dispatcher) refuse(cls Classification, reason fairqueue.Reason, now time.Time) {
	d.m.rejected.WithLabelValues(cls.PriorityLevel, cls.FlowSchema, string(reason)).Inc()
	d.retry.record(cls.PriorityLevel, now.Unix())
}

// Ticket is an admitted request's seats; Finish gives them back.
type Ticket struct {
	d       *Dispatcher
	lvl     *level
	req     *fairqueue.Request[*waiter]
	cls     Classification
	kind    string
	started time.Time
	once    sync.Once
}

// Finish ends the request's execution, from flow control's point of view,
// and lets the next requests run. Calls after the first do nothing.
func (t *Ticket) Finish() {
	t.once.Do(func() {
		t.lvl.mu.Lock()
		now := t.d.now()
		started := t.lvl.qs.Finish(now, t.req)
		t.lvl.wake(started, nil)
		t.lvl.noteDemand(now)
		t.lvl.mu.Unlock()
		flow := []string{t.cls.PriorityLevel, t.cls.FlowSchema}
		t.d.m.executing.WithLabelValues(flow...).Dec()
		t.d.m.executingSeats.WithLabelValues(flow...).Sub(float64(t.req.Seats))
		t.d.m.execution.WithLabelValues(t.cls.PriorityLevel, t.cls.FlowSchema, t.kind).Observe(now.Sub(t.started).Seconds())
	})
}

// wake lets the started requests run, except self, whose caller knows.
// Called with the level locked.
func (l *level) wake(started []*fairqueue.Request[*waiter], self *fairqueue.Request[*waiter]) {
	for _, s := range started {
		if s != self {
			close(s.Item.ready)
		}
	}
}

// noteDemand records the level's seat demand for borrowing. Called with
// the level locked.
func (l *level) noteDemand(now time.Time) {
	st := l.qs.Stats()
	l.demand.set(now, float64(st.SeatsInUse+st.SeatsWaiting))
}

// update digests a configuration, the levels' objects and the schemas',
// and returns the Dangling conditions the schemas should get.
func (d *Dispatcher) update(pls []*flowcontrolv1.PriorityLevelConfiguration, fss []*flowcontrolv1.FlowSchema) []conditionUpdate {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	p := makePlan(pls, fss, d.serverCL, now)
	old := d.cur.Load()
	next := &snapshot{schemas: p.schemas, levels: map[string]*level{}, nominalSum: p.nominalSum}
	for name, spec := range p.levels {
		lvl := old.levels[name]
		if lvl == nil {
			// A new level starts with half of what it may lend lent out,
			// until the first adjustment knows its demand.
			lvl = &level{name: name, demand: newDemand(now), currentCL: spec.nominalCL - (spec.nominalCL-spec.minCL)/2}
			lvl.qs = fairqueue.New[*waiter](fairqueue.Config{}, now)
		}
		lvl.mu.Lock()
		lvl.spec = spec
		lvl.mu.Unlock()
		next.levels[name] = lvl
		d.m.nominal.WithLabelValues(name).Set(float64(spec.nominalCL))
		d.m.lower.WithLabelValues(name).Set(float64(spec.minCL))
		d.m.upper.WithLabelValues(name).Set(float64(spec.maxCL))
	}
	// A removed level keeps serving what it already admitted; nothing new
	// reaches it.
	for name := range old.levels {
		if _, ok := next.levels[name]; !ok {
			for _, v := range []*prometheus.GaugeVec{d.m.nominal, d.m.lower, d.m.upper, d.m.current} {
				v.DeleteLabelValues(name)
			}
		}
	}
	d.adjustLocked(now, next)
	d.cur.Store(next)
	return p.conditions
}

// adjust moves seats between levels by their recent demand.
func (d *Dispatcher) adjust() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.adjustLocked(d.now(), d.cur.Load())
}

func (d *Dispatcher) adjustLocked(now time.Time, snap *snapshot) {
	names := make([]string, 0, len(snap.levels))
	in := make([]borrowingLevel, 0, len(snap.levels))
	for name, lvl := range snap.levels {
		lvl.mu.Lock()
		lvl.demand.period(now)
		in = append(in, borrowingLevel{
			exempt:    lvl.spec.queuing.Exempt,
			nominalCL: lvl.spec.nominalCL, minCL: lvl.spec.minCL, maxCL: lvl.spec.maxCL,
			highWatermark: lvl.demand.highWatermark, smoothed: lvl.demand.smoothed,
			currentCL: lvl.currentCL,
		})
		lvl.mu.Unlock()
		names = append(names, name)
	}
	out := adjust(snap.nominalSum, in)
	for i, name := range names {
		lvl := snap.levels[name]
		lvl.mu.Lock()
		lvl.currentCL = out[i]
		cfg := lvl.spec.queuing
		cfg.ConcurrencyLimit = out[i]
		started := lvl.qs.Reconfigure(now, cfg)
		lvl.wake(started, nil)
		lvl.noteDemand(now)
		lvl.mu.Unlock()
		d.m.current.WithLabelValues(name).Set(float64(out[i]))
	}
}
