package ingress

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/orca-project/orca/internal/ingress/proxy"
	"github.com/orca-project/orca/internal/ingress/route"
)

// NodeOptions configure the ingress of one node.
type NodeOptions struct {
	// Client reads as the ingress controller's identity
	// (system:orca:ingress); Gateway, when set, reads the Gateway API's
	// objects as the same.
	Client  kubernetes.Interface
	Gateway gwclient.Interface
	// Address is where the ports are bound: all of the node's addresses
	// when empty.
	Address string
	// Metrics receives the proxy's request metrics when set.
	Metrics prometheus.Registerer
	// Serving, when set, is called once both ports listen.
	Serving func()
	Log     *slog.Logger
}

// RunNode runs the node's ingress until ctx ends: the controller keeps
// the routing table current and the proxy serves it on HTTPPort and
// HTTPSPort.
func RunNode(ctx context.Context, o NodeOptions) error {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	log := o.Log.With("component", "ingress")
	h := proxy.New(log)
	if o.Metrics != nil {
		if err := h.Register(o.Metrics); err != nil {
			return fmt.Errorf("ingress metrics: %w", err)
		}
	}
	// The ports open once the first table is in, so that a node does
	// not answer 404 for the routes it has not read yet.
	first := make(chan struct{})
	var once sync.Once
	set := func(t *route.Table) {
		h.Set(t)
		once.Do(func() { close(first) })
	}
	c, err := New(Config{Client: o.Client, Set: set, Gateway: o.Gateway, SetGateways: h.SetGateways, Log: log})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	select {
	case <-first:
	case err := <-done:
		if err == nil {
			err = ctx.Err()
		}
		return err
	}
	l := proxy.Listeners{
		HTTP:  net.JoinHostPort(o.Address, strconv.Itoa(HTTPPort)),
		HTTPS: net.JoinHostPort(o.Address, strconv.Itoa(HTTPSPort)),
		Bound: o.Serving, Log: log,
	}
	err = l.Serve(ctx, h)
	cancel()
	if cerr := <-done; err == nil {
		err = cerr
	}
	return err
}
