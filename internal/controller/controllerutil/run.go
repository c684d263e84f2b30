package controllerutil

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// Loop is what every controller's Run does, in one place so that a fix
// to start-up, shutdown or retries reaches them all: record events while
// it runs, wait for the informers' caches, start the workers of each
// queue and whatever runs beside them, and when ctx ends shut the queues
// down and wait for all of it to return.
type Loop struct {
	// Name begins the error returned when the caches never sync.
	Name string
	// Events, when set, writes the controller's events through Client
	// for as long as the loop runs.
	Events record.EventBroadcaster
	Client kubernetes.Interface
	// Synced are the informers the controller reads; nothing starts
	// before they hold a full list, since acting on a partial cache
	// takes present objects for absent ones.
	Synced []cache.InformerSynced
	// Start, when set, runs once the caches synced and before any
	// worker: seeding a queue, taking stock of what is already
	// assigned. Its error ends the loop.
	Start func(context.Context) error
	// Workers are the queues and the goroutines that drain them.
	Workers []Workers
	// Alongside run beside the workers until ctx ends (periodic
	// resyncs, a second loop of the controller's own).
	Alongside []func(context.Context)
}

// Workers is n goroutines running ProcessQueue over one queue.
type Workers struct {
	n        int
	work     func(context.Context)
	shutDown func()
}

// NewWorkers is n workers handing q's keys to sync; what names the key
// in the log. Fewer than one worker is one.
func NewWorkers[K comparable](n int, q workqueue.TypedRateLimitingInterface[K], sync func(context.Context, K) error, log *slog.Logger, what string, opts ...Option) Workers {
	return Workers{
		n:        max(n, 1),
		work:     func(ctx context.Context) { ProcessQueue(ctx, q, sync, log, what, opts...) },
		shutDown: q.ShutDown,
	}
}

// Every runs f at once and then period after each run ends, until ctx
// ends: a periodic resync to put in Loop.Alongside.
func Every(period time.Duration, f func(context.Context)) func(context.Context) {
	return func(ctx context.Context) { wait.UntilWithContext(ctx, f, period) }
}

// Run runs the loop until ctx ends. It returns an error only when the
// controller cannot work at all: its caches never synced or Start
// failed.
func (l Loop) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	// Queues shut down on every way out, so that nothing blocked on
	// one outlives the controller.
	defer func() {
		for _, w := range l.Workers {
			w.shutDown()
		}
	}()
	if l.Events != nil && l.Client != nil {
		l.Events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: l.Client.CoreV1().Events("")})
		defer l.Events.Shutdown()
	}
	if !cache.WaitForCacheSync(ctx.Done(), l.Synced...) {
		return fmt.Errorf("%s: caches did not sync", l.Name)
	}
	if l.Start != nil {
		if err := l.Start(ctx); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	spawn := func(f func(context.Context)) {
		wg.Add(1)
		go func() {
			defer utilruntime.HandleCrash()
			defer wg.Done()
			f(ctx)
		}()
	}
	for _, w := range l.Workers {
		for range w.n {
			spawn(w.work)
		}
	}
	for _, f := range l.Alongside {
		spawn(f)
	}
	<-ctx.Done()
	// A worker blocked in Get wakes only when its queue shuts down; one
	// busy with a key returns once that sync does, since ctx has ended.
	for _, w := range l.Workers {
		w.shutDown()
	}
	wg.Wait()
	return nil
}
