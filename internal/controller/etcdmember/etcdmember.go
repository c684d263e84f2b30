// Package etcdmember removes a server's embedded etcd member from its
// cluster when the server's Node is deleted or annotated for removal, as
// k3s's etcd member management does: the server marks its own Node with
// its member's name and a finalizer, and every other server, seeing that
// Node go, takes the member out and lets the Node go.
package etcdmember

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// The annotations and finalizer, k3s's under Orca's domain.
const (
	// NameAnnotation names the etcd member of the server on the Node.
	NameAnnotation = "etcd.orca.io/node-name"
	// AddressAnnotation is that member's peer address.
	AddressAnnotation = "etcd.orca.io/node-address"
	// RemoveAnnotation, "true", asks for the member's removal while the
	// Node stays.
	RemoveAnnotation = "etcd.orca.io/remove"
	// RemovedAnnotation records the member removed for the Node.
	RemovedAnnotation = "etcd.orca.io/removed-node-name"
	// Finalizer holds a server's Node until its member is removed.
	Finalizer = "etcd.orca.io/member"
)

// Membership is the etcd cluster as the controller needs it.
type Membership interface {
	// Names lists the names of the cluster's members.
	Names(ctx context.Context) ([]string, error)
	// Remove takes the named member out; a member not there is not an
	// error.
	Remove(ctx context.Context, name string) error
}

// Config of the controller of one server.
type Config struct {
	Client  kubernetes.Interface
	Members Membership
	// Self is this server's member name; OwnNode its Node's name (empty
	// without an agent in the server) and Address its peer address.
	Self, OwnNode, Address string
	Log                    *slog.Logger
}

// Controller reconciles Nodes of servers with the etcd membership.
type Controller struct {
	cfg    Config
	nodes  corelisters.NodeLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
	inf    informers.SharedInformerFactory
	log    *slog.Logger
}

// New builds the controller.
func New(cfg Config) (*Controller, error) {
	inf := informers.NewSharedInformerFactory(cfg.Client, 0)
	n := inf.Core().V1().Nodes()
	c := &Controller{
		cfg: cfg, nodes: n.Lister(), synced: n.Informer().HasSynced, inf: inf,
		queue: controllerutil.NewQueue[string]("etcd_member", nil),
		log:   cfg.Log.With("controller", "etcd-member"),
	}
	add := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	if _, err := n.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: add, UpdateFunc: func(_, obj any) { add(obj) }, DeleteFunc: add,
	}); err != nil {
		return nil, fmt.Errorf("etcd member controller: %w", err)
	}
	return c, nil
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	c.inf.Start(ctx.Done())
	defer c.inf.Shutdown()
	err := controllerutil.Loop{
		Name: "etcd-member", Synced: []cache.InformerSynced{c.synced},
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(1, c.queue, c.sync, c.log, "node")},
	}.Run(ctx)
	if ctx.Err() != nil {
		// Stopped before the caches synced: nothing went wrong.
		return nil
	}
	return err
}

// Action is what a Node asks of this server.
type Action struct {
	// Mark puts this server's annotations and finalizer on its Node.
	Mark bool
	// Remove takes the named member out of the cluster.
	Remove string
	// Release drops the finalizer; Record sets RemovedAnnotation.
	Release, Record bool
}

// Decide is the controller's whole judgement over a Node. A server never
// removes its own member (it would stop its own etcd mid-request): the
// other servers do. The cluster's last member is never removed; a Node
// being deleted is let go anyway.
func Decide(n *v1.Node, self, ownNode string, members []string) Action {
	member := n.Annotations[NameAnnotation]
	deleting := n.DeletionTimestamp != nil
	held := slices.Contains(n.Finalizers, Finalizer)
	if member == "" {
		if n.Name == ownNode && !deleting {
			return Action{Mark: true}
		}
		return Action{}
	}
	if n.Name == ownNode && !deleting && (!held || member != self) && n.Annotations[RemoveAnnotation] != "true" {
		return Action{Mark: true}
	}
	switch {
	case deleting && held:
		if member == self {
			if len(members) < 2 {
				// The last server: nobody else will let its Node go.
				return Action{Release: true}
			}
			return Action{}
		}
		a := Action{Release: true}
		if slices.Contains(members, member) && len(members) > 1 {
			a.Remove = member
		}
		return a
	case !deleting && n.Annotations[RemoveAnnotation] == "true" && n.Annotations[RemovedAnnotation] != member:
		if member == self || len(members) < 2 {
			return Action{}
		}
		a := Action{Record: true}
		if slices.Contains(members, member) {
			a.Remove = member
		}
		return a
	}
	return Action{}
}

func (c *Controller) sync(ctx context.Context, name string) error {
	n, err := c.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var members []string
	if n.Annotations[NameAnnotation] != "" && (n.DeletionTimestamp != nil || n.Annotations[RemoveAnnotation] == "true") {
		if members, err = c.cfg.Members.Names(ctx); err != nil {
			return err
		}
	}
	a := Decide(n, c.cfg.Self, c.cfg.OwnNode, members)
	if a.Remove != "" {
		if err := c.cfg.Members.Remove(ctx, a.Remove); err != nil {
			return fmt.Errorf("remove etcd member %s of node %s: %w", a.Remove, name, err)
		}
		c.log.Info("removed the etcd member of a server's node", "node", name, "member", a.Remove)
	}
	if !a.Mark && !a.Release && !a.Record {
		return nil
	}
	n = n.DeepCopy()
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	switch {
	case a.Mark:
		n.Annotations[NameAnnotation], n.Annotations[AddressAnnotation] = c.cfg.Self, c.cfg.Address
		if !slices.Contains(n.Finalizers, Finalizer) {
			n.Finalizers = append(n.Finalizers, Finalizer)
		}
	case a.Release:
		n.Finalizers = slices.DeleteFunc(n.Finalizers, func(f string) bool { return f == Finalizer })
	case a.Record:
		n.Annotations[RemovedAnnotation] = n.Annotations[NameAnnotation]
	}
	_, err = c.cfg.Client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
