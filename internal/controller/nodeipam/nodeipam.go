// Package nodeipam gives every Node a pod range (spec.podCIDR) out of the
// cluster CIDR, one fixed-size block per node, as upstream's range
// allocator does: blocks already assigned are marked used when the
// controller starts, a deleted Node's block is freed, and a Node that asks
// for none gets the lowest free one.
package nodeipam

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Blocks is the arithmetic of a cluster CIDR cut into equal blocks.
type Blocks struct {
	base   *net.IPNet
	size   int // prefix length of a block
	count  int
	mu     sync.Mutex
	used   map[int]string // block index → node
	byNode map[string]int
}

// NewBlocks cuts cidr (IPv4) into blocks of prefix length size.
func NewBlocks(cidr string, size int) (*Blocks, error) {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, fmt.Errorf("cluster CIDR %q: %w", cidr, err)
	}
	ones, bits := n.Mask.Size()
	if bits != 32 {
		return nil, fmt.Errorf("cluster CIDR %q: only IPv4 is supported", cidr)
	}
	if size < ones || size > 30 {
		return nil, fmt.Errorf("node CIDR size /%d does not fit in %s", size, cidr)
	}
	return &Blocks{base: n, size: size, count: 1 << (size - ones), used: map[int]string{}, byNode: map[string]int{}}, nil
}

// index is the block number of a node CIDR, or -1 when it is not one of ours.
func (b *Blocks) index(cidr string) int {
	ip, n, err := net.ParseCIDR(cidr)
	if err != nil || ip.To4() == nil || !b.base.Contains(ip) {
		return -1
	}
	if ones, _ := n.Mask.Size(); ones != b.size {
		return -1
	}
	off := new(big.Int).Sub(new(big.Int).SetBytes(n.IP.To4()), new(big.Int).SetBytes(b.base.IP.To4()))
	return int(off.Int64() >> (32 - b.size))
}

// cidr is block i.
func (b *Blocks) cidr(i int) string {
	start := new(big.Int).SetBytes(b.base.IP.To4())
	start.Add(start, big.NewInt(int64(i)<<(32-b.size)))
	ip := make(net.IP, 4)
	start.FillBytes(ip)
	return fmt.Sprintf("%s/%d", ip, b.size)
}

// Occupy records that node holds cidr (from its spec). It reports false
// when the range is outside the cluster CIDR or held by another node.
func (b *Blocks) Occupy(node, cidr string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := b.index(cidr)
	if i < 0 {
		return false
	}
	if owner, ok := b.used[i]; ok && owner != node {
		return false
	}
	b.used[i], b.byNode[node] = node, i
	return true
}

// Allocate returns node's block, taking the lowest free one if it has none.
func (b *Blocks) Allocate(node string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i, ok := b.byNode[node]; ok {
		return b.cidr(i), nil
	}
	for i := 0; i < b.count; i++ {
		if _, ok := b.used[i]; !ok {
			b.used[i], b.byNode[node] = node, i
			return b.cidr(i), nil
		}
	}
	return "", fmt.Errorf("no remaining CIDRs left to allocate in %s", b.base)
}

// Release frees node's block.
func (b *Blocks) Release(node string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i, ok := b.byNode[node]; ok {
		delete(b.used, i)
		delete(b.byNode, node)
	}
}

// Controller assigns pod ranges to Nodes.
type Controller struct {
	client kubernetes.Interface
	nodes  corelisters.NodeLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
	blocks *Blocks
	rec    record.EventRecorder
	bc     record.EventBroadcaster
	log    *slog.Logger
}

// New builds the controller for cluster CIDR cidr with blocks of /size.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, cidr string, size int, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	blocks, err := NewBlocks(cidr, size)
	if err != nil {
		return nil, err
	}
	inf := factory.Core().V1().Nodes()
	bc := record.NewBroadcaster()
	c := &Controller{
		client: client, nodes: inf.Lister(), synced: inf.Informer().HasSynced, blocks: blocks,
		queue: controllerutil.NewQueue[string]("nodeipam", metrics),
		bc:    bc, rec: bc.NewRecorder(scheme.Scheme, v1.EventSource{Component: "cidrAllocator"}),
		log: log.With("controller", "nodeipam"),
	}
	_, err = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(obj) },
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if n, ok := obj.(*v1.Node); ok {
				c.blocks.Release(n.Name)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("nodeipam: node handler: %w", err)
	}
	return c, nil
}

// Name implements controllermanager.Controller.
func (c *Controller) Name() string { return "nodeipam" }

func (c *Controller) enqueue(obj any) {
	if n, ok := obj.(*v1.Node); ok && n.Spec.PodCIDR == "" {
		c.queue.Add(n.Name)
	}
}

// Run marks the ranges Nodes hold, then assigns ranges until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "nodeipam", Events: c.bc, Client: c.client, Synced: []cache.InformerSynced{c.synced},
		Start:   c.takeStock,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "node")},
	}.Run(ctx)
}

// takeStock occupies the ranges Nodes already hold before anything new is
// handed out, and queues the Nodes without one.
func (c *Controller) takeStock(context.Context) error {
	nodes, err := c.nodes.List(everything())
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if n.Spec.PodCIDR != "" && !c.blocks.Occupy(n.Name, n.Spec.PodCIDR) {
			c.log.Warn("node's pod CIDR is outside the cluster CIDR or taken", "node", n.Name, "podCIDR", n.Spec.PodCIDR)
		}
	}
	for _, n := range nodes {
		if n.Spec.PodCIDR == "" {
			c.queue.Add(n.Name)
		}
	}
	return nil
}

func (c *Controller) sync(ctx context.Context, name string) error {
	n, err := c.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		c.blocks.Release(name)
		return nil
	}
	if err != nil {
		return err
	}
	if n.Spec.PodCIDR != "" {
		c.blocks.Occupy(name, n.Spec.PodCIDR)
		return nil
	}
	cidr, err := c.blocks.Allocate(name)
	if err != nil {
		c.rec.Eventf(&v1.ObjectReference{Kind: "Node", Name: name, UID: types.UID(name)}, v1.EventTypeNormal, "CIDRNotAvailable", "Node %s status is now: CIDRNotAvailable", name)
		return err
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"podCIDR": cidr, "podCIDRs": []string{cidr}}})
	if _, err := c.client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		c.blocks.Release(name)
		return fmt.Errorf("set pod CIDR of node %s: %w", name, err)
	}
	c.log.Info("assigned pod CIDR", "node", name, "podCIDR", cidr)
	return nil
}
