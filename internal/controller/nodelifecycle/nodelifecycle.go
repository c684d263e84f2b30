// Package nodelifecycle watches every Node's heartbeats (its Lease and
// the Ready condition the kubelet posts) and acts when a node goes
// silent, as upstream's node lifecycle controller: after the grace period
// its kubelet-owned conditions become Unknown, its pods are marked not
// Ready so that Services stop sending them traffic, and it is tainted
// NoExecute (node.kubernetes.io/unreachable, or not-ready for a kubelet
// that reports NotReady) at a rate limited per zone, which is what makes
// the taint eviction controller move its pods. When every zone has lost
// every node the fault is more likely the control plane's than the
// nodes', so evictions stop altogether (upstream's full-disruption rule).
// It also keeps the NoSchedule taints that mirror node conditions and
// spec.unschedulable (upstream's TaintNodesByCondition).
//
// Time is measured on the controller's clock only: a node is alive when
// what it posted changed since the last pass, never by comparing its
// timestamps with ours.
package nodelifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Config holds upstream's node lifecycle settings, under upstream's flag
// names; zero fields take upstream's defaults.
type Config struct {
	MonitorPeriod      time.Duration
	MonitorGracePeriod time.Duration
	StartupGracePeriod time.Duration
	// NodeEvictionRate is how many nodes per second of a healthy zone
	// are tainted for eviction; SecondaryNodeEvictionRate the same in a
	// partially disrupted zone of a large cluster.
	NodeEvictionRate          float32
	SecondaryNodeEvictionRate float32
	LargeClusterSizeThreshold int32
	UnhealthyZoneThreshold    float32
}

// DefaultConfig is upstream's defaults.
func DefaultConfig() Config {
	return Config{
		MonitorPeriod: 5 * time.Second, MonitorGracePeriod: 50 * time.Second, StartupGracePeriod: time.Minute,
		NodeEvictionRate: 0.1, SecondaryNodeEvictionRate: 0.01, LargeClusterSizeThreshold: 50, UnhealthyZoneThreshold: 0.55,
	}
}

// AddFlags registers the settings under kube-controller-manager's names.
func (c *Config) AddFlags(f *pflag.FlagSet) {
	d := DefaultConfig()
	f.DurationVar(&c.MonitorPeriod, "node-monitor-period", d.MonitorPeriod, "how often node health is checked")
	f.DurationVar(&c.MonitorGracePeriod, "node-monitor-grace-period", d.MonitorGracePeriod, "how long a running node may go without a heartbeat before it is marked Unknown and tainted unreachable")
	f.DurationVar(&c.StartupGracePeriod, "node-startup-grace-period", d.StartupGracePeriod, "how long a registered node may take to post its first status before it is marked Unknown")
	f.Float32Var(&c.NodeEvictionRate, "node-eviction-rate", d.NodeEvictionRate, "nodes per second whose pods are evicted when a zone is healthy")
	f.Float32Var(&c.SecondaryNodeEvictionRate, "secondary-node-eviction-rate", d.SecondaryNodeEvictionRate, "nodes per second whose pods are evicted when a zone is unhealthy (0 in clusters up to --large-cluster-size-threshold nodes)")
	f.Int32Var(&c.LargeClusterSizeThreshold, "large-cluster-size-threshold", d.LargeClusterSizeThreshold, "zones with more nodes than this are evicted at the secondary rate when unhealthy, smaller ones not at all")
	f.Float32Var(&c.UnhealthyZoneThreshold, "unhealthy-zone-threshold", d.UnhealthyZoneThreshold, "share of nodes not Ready (at least three) that makes a zone unhealthy")
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.MonitorPeriod <= 0 {
		c.MonitorPeriod = d.MonitorPeriod
	}
	if c.MonitorGracePeriod <= 0 {
		c.MonitorGracePeriod = d.MonitorGracePeriod
	}
	if c.StartupGracePeriod <= 0 {
		c.StartupGracePeriod = d.StartupGracePeriod
	}
	// A secondary rate of 0 is a choice (never evict in an unhealthy
	// zone); it is taken for unset only along with the primary rate.
	if c.NodeEvictionRate <= 0 {
		c.NodeEvictionRate, c.SecondaryNodeEvictionRate = d.NodeEvictionRate, d.SecondaryNodeEvictionRate
	}
	if c.LargeClusterSizeThreshold <= 0 {
		c.LargeClusterSizeThreshold = d.LargeClusterSizeThreshold
	}
	if c.UnhealthyZoneThreshold <= 0 {
		c.UnhealthyZoneThreshold = d.UnhealthyZoneThreshold
	}
	return c
}

// taintPassPeriod is how often the zones' taint queues are worked,
// upstream's nodeEvictionPeriod.
const taintPassPeriod = 100 * time.Millisecond

// zone is a failure domain's taint queue and its rate.
type zone struct {
	state   zoneState
	rate    float32
	limiter flowcontrol.RateLimiter
	queue   []string
	queued  map[string]bool
	clock   flowcontrol.Clock
}

func newZone(rate float32, clk flowcontrol.Clock) *zone {
	z := &zone{state: stateInitial, queued: map[string]bool{}, clock: clk}
	z.setRate(rate)
	return z
}

func (z *zone) setRate(rate float32) {
	z.rate = rate
	if rate <= 0 {
		z.limiter = flowcontrol.NewFakeNeverRateLimiter()
		return
	}
	z.limiter = flowcontrol.NewTokenBucketRateLimiterWithClock(rate, 1, z.clock)
}

func (z *zone) add(name string) {
	if !z.queued[name] {
		z.queued[name] = true
		z.queue = append(z.queue, name)
	}
}

func (z *zone) remove(name string) {
	if !z.queued[name] {
		return
	}
	delete(z.queued, name)
	for i, n := range z.queue {
		if n == name {
			z.queue = append(z.queue[:i], z.queue[i+1:]...)
			return
		}
	}
}

// Controller is the node lifecycle controller.
type Controller struct {
	client   kubernetes.Interface
	nodes    corelisters.NodeLister
	leases   coordinationlisters.LeaseLister
	pods     cache.Indexer
	synced   []cache.InformerSynced
	noSched  workqueue.TypedRateLimitingInterface[string]
	events   record.EventBroadcaster
	recorder record.EventRecorder
	clock    clock.Clock
	cfg      Config
	log      *slog.Logger

	// health and known belong to the monitor pass alone.
	health map[string]*health
	known  map[string]bool

	// zonesMu guards zones, shared by the monitor and the taint pass.
	zonesMu sync.Mutex
	zones   map[string]*zone
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, cfg Config, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	events := record.NewBroadcaster()
	recorder := events.NewRecorder(scheme.Scheme, v1.EventSource{Component: "node-controller"})
	return newController(client, factory, cfg, metrics, log, clock.RealClock{}, events, recorder)
}

func newController(client kubernetes.Interface, factory informers.SharedInformerFactory, cfg Config, metrics workqueue.MetricsProvider, log *slog.Logger,
	clk clock.Clock, events record.EventBroadcaster, recorder record.EventRecorder) (*Controller, error) {
	nodeInf := factory.Core().V1().Nodes()
	leaseInf := factory.Coordination().V1().Leases()
	podInf := factory.Core().V1().Pods()
	if err := controllerutil.AddPodNodeIndex(podInf.Informer()); err != nil {
		return nil, fmt.Errorf("node lifecycle: pod index: %w", err)
	}
	c := &Controller{
		client: client, nodes: nodeInf.Lister(), leases: leaseInf.Lister(), pods: podInf.Informer().GetIndexer(),
		synced:  []cache.InformerSynced{nodeInf.Informer().HasSynced, leaseInf.Informer().HasSynced, podInf.Informer().HasSynced},
		noSched: controllerutil.NewQueue[string]("node_lifecycle_controller", metrics),
		events:  events, recorder: recorder, clock: clk, cfg: cfg.withDefaults(),
		log:    log.With("controller", "node-lifecycle"),
		health: map[string]*health{}, known: map[string]bool{}, zones: map[string]*zone{},
	}
	enqueue := func(obj any) {
		if n, ok := obj.(*v1.Node); ok {
			c.noSched.Add(n.Name)
		}
	}
	if _, err := nodeInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, cur any) { enqueue(cur) },
	}); err != nil {
		return nil, fmt.Errorf("node lifecycle: node handler: %w", err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "node-lifecycle" }

// Run monitors nodes until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "node lifecycle", Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.noSched, c.syncNoSchedule, c.log, "node")},
		Alongside: []func(context.Context){
			controllerutil.Every(taintPassPeriod, c.taintPass),
			controllerutil.Every(c.cfg.MonitorPeriod, c.monitor),
		},
	}.Run(ctx)
}

// syncNoSchedule makes a node's condition taints match its conditions.
func (c *Controller) syncNoSchedule(ctx context.Context, name string) error {
	node, err := c.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, changed := reconcileNoSchedule(node.Spec.Taints, noScheduleTaints(node)); !changed {
		return nil
	}
	return c.updateTaints(ctx, node, func(n *v1.Node) ([]v1.Taint, bool) {
		return reconcileNoSchedule(n.Spec.Taints, noScheduleTaints(n))
	})
}

// updateTaints writes the taints f computes from the node, starting from
// the cached copy and retrying on the live one after a conflict; the
// resourceVersion in the patch makes the write conditional.
func (c *Controller) updateTaints(ctx context.Context, node *v1.Node, f func(*v1.Node) ([]v1.Taint, bool)) error {
	first := true
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first {
			live, err := c.client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			node = live
		}
		first = false
		taints, changed := f(node)
		if !changed {
			return nil
		}
		if taints == nil {
			taints = []v1.Taint{}
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": node.ResourceVersion},
			"spec":     map[string]any{"taints": taints},
		})
		if err != nil {
			return err
		}
		_, err = c.client.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// monitor is one pass over every node's health.
func (c *Controller) monitor(ctx context.Context) {
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return
	}
	now := c.clock.Now()
	seen := map[string]bool{}
	zoneConds := map[string][]*v1.NodeCondition{}
	for _, n := range nodes {
		seen[n.Name] = true
		if !c.known[n.Name] {
			c.known[n.Name] = true
			c.nodeEvent(n, v1.EventTypeNormal, "RegisteredNode", fmt.Sprintf("Registered Node %s in Controller", n.Name))
		}
		node, observed, current, err := c.checkHealth(ctx, n, now)
		if err != nil {
			c.log.Warn("update node health; no pods will be evicted", "node", n.Name, "err", err)
			continue
		}
		if _, excluded := node.Labels[excludeDisruptionLabel]; !excluded {
			z := zoneKey(node)
			zoneConds[z] = append(zoneConds[z], current)
		}
		if current == nil {
			continue
		}
		c.processNoExecute(ctx, node, current)
		if current.Status != v1.ConditionTrue {
			if observed.Status == v1.ConditionTrue {
				c.nodeEvent(node, v1.EventTypeNormal, "NodeNotReady", fmt.Sprintf("Node %s status is now: NodeNotReady", node.Name))
			}
			c.markPodsNotReady(ctx, node.Name, now)
		}
	}
	for name := range c.known {
		if seen[name] {
			continue
		}
		delete(c.known, name)
		delete(c.health, name)
		c.nodeEvent(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, v1.EventTypeNormal, "RemovingNode", fmt.Sprintf("Removing Node %s from Controller", name))
		c.zonesMu.Lock()
		for _, z := range c.zones {
			z.remove(name)
		}
		c.zonesMu.Unlock()
	}
	c.handleDisruption(ctx, zoneConds, nodes, now)
}

// checkHealth folds the node's heartbeats into its health and, when it
// has gone silent, writes its conditions as Unknown. It returns the node
// as now stored, the Ready condition as it was observed and as it is now.
func (c *Controller) checkHealth(ctx context.Context, n *v1.Node, now time.Time) (*v1.Node, v1.NodeCondition, *v1.NodeCondition, error) {
	lease, _ := c.leases.Leases(v1.NamespaceNodeLease).Get(n.Name)
	h, grace := observe(c.health[n.Name], n, lease, now, c.cfg)
	c.health[n.Name] = &h
	observed := v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionUnknown}
	if r := readyCondition(&n.Status); r != nil {
		observed = *r
	}
	if !silent(h, grace, now) {
		return n, observed, readyCondition(&n.Status), nil
	}
	node := n.DeepCopy()
	if !markUnknown(node, now) {
		return n, observed, readyCondition(&n.Status), nil
	}
	for attempt := 0; ; attempt++ {
		updated, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		if err == nil {
			c.log.Info("node stopped posting status; marked Unknown", "node", n.Name, "silentFor", now.Sub(h.probe).Round(time.Second))
			h.status = &updated.Status
			return updated, observed, readyCondition(&updated.Status), nil
		}
		if !apierrors.IsConflict(err) || attempt >= 4 {
			return n, observed, nil, err
		}
		live, err := c.client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			return n, observed, nil, err
		}
		// The node wrote in between: that is a heartbeat, judged next pass.
		if r := readyCondition(&live.Status); r != nil && !r.LastHeartbeatTime.Equal(&observed.LastHeartbeatTime) {
			return live, observed, readyCondition(&live.Status), nil
		}
		node = live.DeepCopy()
		if !markUnknown(node, now) {
			return live, observed, readyCondition(&live.Status), nil
		}
	}
}

// processNoExecute queues a node that is not Ready for its NoExecute
// taint, swaps the taint at once when the kind of failure changed, and
// takes it off a Ready node.
func (c *Controller) processNoExecute(ctx context.Context, node *v1.Node, ready *v1.NodeCondition) {
	key := noExecuteKey(ready)
	z := zoneKey(node)
	if key == "" {
		c.zonesMu.Lock()
		if zn := c.zones[z]; zn != nil {
			zn.remove(node.Name)
		}
		c.zonesMu.Unlock()
		if hasNoExecute(node.Spec.Taints, v1.TaintNodeUnreachable) || hasNoExecute(node.Spec.Taints, v1.TaintNodeNotReady) {
			if err := c.setNoExecute(ctx, node); err != nil {
				c.log.Warn("remove NoExecute taints; retrying next pass", "node", node.Name, "err", err)
			} else {
				c.log.Info("node is healthy again; removed its NoExecute taint", "node", node.Name)
			}
		}
		return
	}
	if hasNoExecute(node.Spec.Taints, key) {
		return
	}
	other := v1.TaintNodeUnreachable
	if key == v1.TaintNodeUnreachable {
		other = v1.TaintNodeNotReady
	}
	if hasNoExecute(node.Spec.Taints, other) {
		if err := c.setNoExecute(ctx, node); err != nil {
			c.log.Warn("swap NoExecute taint; retrying next pass", "node", node.Name, "err", err)
		}
		return
	}
	c.zonesMu.Lock()
	zn := c.zones[z]
	if zn == nil {
		zn = newZone(c.cfg.NodeEvictionRate, c.clock)
		c.zones[z] = zn
	}
	zn.add(node.Name)
	c.zonesMu.Unlock()
}

// setNoExecute gives the node the NoExecute taint its Ready condition
// calls for, and no other health NoExecute taint.
func (c *Controller) setNoExecute(ctx context.Context, node *v1.Node) error {
	return c.updateTaints(ctx, node, func(n *v1.Node) ([]v1.Taint, bool) {
		return withNoExecute(n.Spec.Taints, noExecuteKey(readyCondition(&n.Status)), c.clock.Now())
	})
}

// taintPass taints the queued nodes as fast as each zone's rate allows.
func (c *Controller) taintPass(ctx context.Context) {
	c.zonesMu.Lock()
	var due []string
	for _, z := range c.zones {
		for len(z.queue) > 0 && z.limiter.TryAccept() {
			name := z.queue[0]
			z.queue = z.queue[1:]
			delete(z.queued, name)
			due = append(due, name)
		}
	}
	c.zonesMu.Unlock()
	for _, name := range due {
		node, err := c.nodes.Get(name)
		if err != nil {
			continue
		}
		key := noExecuteKey(readyCondition(&node.Status))
		if key == "" {
			continue
		}
		if err := c.setNoExecute(ctx, node); err != nil {
			// The next monitor pass queues it again.
			c.log.Warn("taint node NoExecute", "node", name, "err", err)
			continue
		}
		c.log.Info("tainted node for eviction", "node", name, "taint", key)
	}
}

// handleDisruption sets the zones' eviction rates from their health, as
// upstream's handleDisruption.
func (c *Controller) handleDisruption(ctx context.Context, zoneConds map[string][]*v1.NodeCondition, nodes []*v1.Node, now time.Time) {
	c.zonesMu.Lock()
	cur := map[string]zoneState{}
	for z, conds := range zoneConds {
		cur[z] = computeZoneState(conds, c.cfg.UnhealthyZoneThreshold)
		if c.zones[z] == nil {
			c.zones[z] = newZone(c.cfg.NodeEvictionRate, c.clock)
		}
	}
	old := map[string]zoneState{}
	for z, zn := range c.zones {
		if _, ok := zoneConds[z]; !ok {
			delete(c.zones, z)
			continue
		}
		old[z] = zn.state
	}
	decision := decideDisruption(old, cur)
	switch decision {
	case enterMaster:
		for _, zn := range c.zones {
			zn.setRate(0)
			zn.state = stateFullDisruption
		}
	case exitMaster:
		for z, zn := range c.zones {
			zn.setRate(zoneRate(cur[z], len(zoneConds[z]), c.cfg))
			zn.state = cur[z]
		}
	case perZone:
		for z, zn := range c.zones {
			if zn.state == cur[z] {
				continue
			}
			c.log.Info("zone changed state", "zone", z, "state", cur[z])
			zn.setRate(zoneRate(cur[z], len(zoneConds[z]), c.cfg))
			zn.state = cur[z]
		}
	}
	c.zonesMu.Unlock()
	switch decision {
	case enterMaster:
		c.log.Warn("every node is not Ready: entering full disruption mode, no pods are evicted")
		for _, n := range nodes {
			if hasNoExecute(n.Spec.Taints, v1.TaintNodeUnreachable) || hasNoExecute(n.Spec.Taints, v1.TaintNodeNotReady) {
				if err := c.updateTaints(ctx, n, func(n *v1.Node) ([]v1.Taint, bool) { return withNoExecute(n.Spec.Taints, "", now) }); err != nil {
					c.log.Warn("remove NoExecute taints", "node", n.Name, "err", err)
				}
			}
		}
	case exitMaster:
		c.log.Info("some nodes are Ready again: leaving full disruption mode")
		// Every node gets a whole grace period from now.
		for _, h := range c.health {
			h.probe = now
		}
	}
}

// markPodsNotReady sets the Ready condition of the node's pods to False,
// so that endpoints drop them while nobody can vouch for them.
func (c *Controller) markPodsNotReady(ctx context.Context, nodeName string, now time.Time) {
	objs, err := c.pods.ByIndex(controllerutil.PodNodeIndex, nodeName)
	if err != nil {
		return
	}
	for _, o := range objs {
		p, ok := o.(*v1.Pod)
		if !ok || p.Spec.NodeName != nodeName {
			continue
		}
		i := podReadyIndex(p)
		if i < 0 || p.Status.Conditions[i].Status == v1.ConditionFalse {
			continue
		}
		pod := p.DeepCopy()
		pod.Status.Conditions[i].Status = v1.ConditionFalse
		pod.Status.Conditions[i].LastTransitionTime = metav1.NewTime(now)
		if _, err := c.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			if !apierrors.IsNotFound(err) {
				c.log.Warn("mark pod not ready; retrying next pass", "pod", pod.Namespace+"/"+pod.Name, "err", err)
			}
			continue
		}
		c.recorder.Event(pod, v1.EventTypeWarning, "NodeNotReady", "Node is not ready")
	}
}

func podReadyIndex(p *v1.Pod) int {
	for i, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return i
		}
	}
	return -1
}

// nodeEvent records an event on a node, cluster-scoped as the node.
func (c *Controller) nodeEvent(n *v1.Node, typ, reason, msg string) {
	ref := &v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID}
	c.recorder.Event(ref, typ, reason, msg)
}
