// Package controllermanager runs Orca's controllers: inside `orca server`
// over a loopback client, or on its own as `orca controller-manager`. One
// leader-election Lease gates every controller, so several servers can run
// side by side and exactly one of them reconciles at a time.
//
// A controller is a level-triggered loop (informer → workqueue →
// sync(key)) in its own package under internal/controller. It talks to the
// API server only, is idempotent, and may be stopped and restarted at any
// moment; the manager builds every controller afresh each time it becomes
// leader.
package controllermanager

import (
	"context"
	"log/slog"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
)

// Controller is the contract every controller follows. Run starts its
// workers, blocks until ctx ends, and returns an error only when the
// controller cannot work at all (its caches never synced, say).
type Controller interface {
	Name() string
	Run(ctx context.Context, workers int) error
}

// Context is what controllers are built from. Informers is shared: a
// controller asks it for the informers it needs while being built, and the
// manager starts them once every controller has been built.
type Context struct {
	// REST is the configuration the clients were made from, for a
	// controller that needs a client of its own kind (the Gateway API's).
	REST      *rest.Config
	Client    kubernetes.Interface
	Metadata  metadata.Interface
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	Informers informers.SharedInformerFactory
	// QueueMetrics feeds the controllers' workqueue metrics into the
	// manager's Prometheus registry.
	QueueMetrics workqueue.MetricsProvider
	Log          *slog.Logger
}

// Descriptor names a controller, its worker count and how to build it.
type Descriptor struct {
	Name    string
	Workers int
	New     func(*Context) (Controller, error)
}

// funcController adapts a controller whose package does not name itself
// (a Run method alone) to Controller.
type funcController struct {
	name string
	run  func(ctx context.Context, workers int) error
}

func (f funcController) Name() string                               { return f.name }
func (f funcController) Run(ctx context.Context, workers int) error { return f.run(ctx, workers) }
