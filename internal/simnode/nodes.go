package simnode

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/kubelet/nodestatus"
)

// simNode is one simulated node's state between API calls.
type simNode struct {
	index   int
	profile Profile

	mu         sync.Mutex
	uid        types.UID
	lease      *coordinationv1.Lease // as last written, so a renewal is one Update
	lastReport time.Time
	pool       *Pool // pod addresses; nil until the node has a podCIDR
	waitLogged bool
}

// startNodes starts a Node informer over simulated nodes and registers
// every node of this simulator (or adopts it, when it exists).
func (s *Simulator) startNodes(ctx context.Context) (corelisters.NodeLister, error) {
	factory := informers.NewSharedInformerFactoryWithOptions(s.opts.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = SimulatedLabel + "=true" }),
		informers.WithTransform(func(obj any) (any, error) {
			if n, ok := obj.(*v1.Node); ok {
				n.ManagedFields = nil
			}
			return obj, nil
		}))
	inf := factory.Core().V1().Nodes()
	lister := inf.Lister()
	inf.Informer()
	factory.Start(ctx.Done())
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("simnode: node cache did not sync: %w", ctx.Err())
		}
	}
	err := parallel(ctx, len(s.nodes), HeartbeatWidth(s.opts.Workers, len(s.nodes)), func(i int) error {
		n := s.nodes[i]
		for {
			err := s.register(ctx, lister, n)
			if err == nil {
				err = s.renew(ctx, n)
			}
			if err == nil {
				// The periodic reports are spread over the report period
				// too, rather than all falling due together.
				n.mu.Lock()
				n.lastReport = time.Now().Add(-Offset(i, len(s.nodes), s.opts.ReportFrequency))
				n.mu.Unlock()
			}
			if err == nil || ctx.Err() != nil {
				return ctx.Err()
			}
			s.opts.Log.Warn("register simulated node; retrying", "err", err)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return lister, nil
}

// register creates the Node, or takes over an existing one: the
// simulator's labels and taints are applied, others are kept. Its status
// is sent at once.
func (s *Simulator) register(ctx context.Context, lister corelisters.NodeLister, n *simNode) error {
	spec := n.profile.Spec
	nodes := s.opts.Client.CoreV1().Nodes()
	cur, err := lister.Get(spec.Name)
	if apierrors.IsNotFound(err) {
		cur, err = nodes.Create(ctx, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: spec.Name, Labels: spec.Labels},
			Spec:       v1.NodeSpec{Taints: spec.Taints},
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			cur, err = nodes.Get(ctx, spec.Name, metav1.GetOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("register node %s: %w", spec.Name, err)
	}
	if patch := adoptPatch(cur, spec); patch != nil {
		if cur, err = nodes.Patch(ctx, spec.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("adopt node %s: %w", spec.Name, err)
		}
	}
	n.mu.Lock()
	n.uid = cur.UID
	n.mu.Unlock()
	return s.report(ctx, n, cur, true)
}

// adoptPatch is the patch that gives an existing node the simulator's
// labels and taints; nil when it has them.
func adoptPatch(cur *v1.Node, spec nodestatus.Spec) []byte {
	labels := map[string]string{}
	for k, v := range spec.Labels {
		if cur.Labels[k] != v {
			labels[k] = v
		}
	}
	taints := cur.Spec.Taints
	for _, want := range spec.Taints {
		found := false
		for _, t := range cur.Spec.Taints {
			found = found || t.Key == want.Key && t.Effect == want.Effect
		}
		if !found {
			taints = append(taints, want)
		}
	}
	if len(labels) == 0 && len(taints) == len(cur.Spec.Taints) {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}, "spec": map[string]any{"taints": taints}})
	return b
}

// report sends the node's status when it changed, when forced, or when
// the report period passed since the last one.
func (s *Simulator) report(ctx context.Context, n *simNode, cur *v1.Node, force bool) error {
	now := time.Now()
	st := nodestatus.Status(n.profile.Machine, n.profile.Spec, cur.Status, now)
	n.mu.Lock()
	last := n.lastReport
	n.mu.Unlock()
	if !force && !StatusDue(nodestatus.Significant(st, cur.Status), last, now, s.opts.ReportFrequency) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		return err
	}
	if _, err := s.opts.Client.CoreV1().Nodes().Patch(ctx, cur.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("node %s status: %w", cur.Name, err)
	}
	s.nodeStatuses.Add(1)
	n.mu.Lock()
	n.lastReport = now
	n.mu.Unlock()
	return nil
}

// renew renews the node's Lease: one Update of the copy last written,
// and a Get (or Create) only when that fails, as upstream's kubelet does.
func (s *Simulator) renew(ctx context.Context, n *simNode) error {
	leases := s.opts.Client.CoordinationV1().Leases(v1.NamespaceNodeLease)
	name := n.profile.Spec.Name
	n.mu.Lock()
	l, uid := n.lease, n.uid
	n.mu.Unlock()
	now := metav1.NewMicroTime(time.Now())
	var err error
	if l != nil {
		l = l.DeepCopy()
		l.Spec.RenewTime = &now
		l, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	}
	if l == nil || err != nil {
		l, err = leases.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			l, err = leases.Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: v1.NamespaceNodeLease,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: uid}}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name),
					LeaseDurationSeconds: ptr.To(int32(s.opts.LeaseDuration / time.Second)), RenewTime: &now},
			}, metav1.CreateOptions{})
		case err == nil:
			l.Spec.RenewTime = &now
			l.Spec.HolderIdentity = ptr.To(name)
			l.Spec.LeaseDurationSeconds = ptr.To(int32(s.opts.LeaseDuration / time.Second))
			l, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		n.mu.Lock()
		n.lease = nil
		n.mu.Unlock()
		return fmt.Errorf("node %s lease: %w", name, err)
	}
	s.leases.Add(1)
	n.mu.Lock()
	n.lease = l
	n.mu.Unlock()
	return nil
}

// runHeartbeats renews every node's lease each RenewInterval and checks
// its status each StatusFrequency, node i at its own offset in the
// period, from one agenda served by HeartbeatWidth goroutines.
func (s *Simulator) runHeartbeats(ctx context.Context, lister corelisters.NodeLister) {
	var a agenda
	start := time.Now()
	for i := range s.nodes {
		a.add(task{node: i, kind: renewLease, due: start.Add(s.opts.RenewInterval + Offset(i, len(s.nodes), s.opts.RenewInterval))})
		// Status checks fall between the renewals.
		a.add(task{node: i, kind: checkStatus, due: start.Add(s.opts.StatusFrequency/2 + Offset(i, len(s.nodes), s.opts.StatusFrequency))})
	}
	width := HeartbeatWidth(s.opts.Workers, len(s.nodes))
	work := make(chan task, width)
	var wg sync.WaitGroup
	for range width {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				if err := s.heartbeat(ctx, lister, t); err != nil && ctx.Err() == nil {
					s.opts.Log.Warn("simulated node heartbeat", "err", err)
				}
			}
		}()
	}
	defer wg.Wait()
	defer close(work)
	timer := time.NewTimer(time.Until(a.next()))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		for _, t := range a.due(time.Now()) {
			select {
			case work <- t:
			case <-ctx.Done():
				return
			}
			period := s.opts.RenewInterval
			if t.kind == checkStatus {
				period = s.opts.StatusFrequency
			}
			t.due = t.due.Add(period)
			a.add(t)
		}
		timer.Reset(time.Until(a.next()))
	}
}

func (s *Simulator) heartbeat(ctx context.Context, lister corelisters.NodeLister, t task) error {
	n := s.nodes[t.node]
	if t.kind == renewLease {
		return s.renew(ctx, n)
	}
	cur, err := lister.Get(n.profile.Spec.Name)
	if apierrors.IsNotFound(err) {
		// Deleted under us: register again, as a kubelet does.
		return s.register(ctx, lister, n)
	}
	if err != nil {
		return err
	}
	return s.report(ctx, n, cur, false)
}

// parallel runs f(0..n-1) on at most width goroutines and returns the
// first error.
func parallel(ctx context.Context, n, width int, f func(int) error) error {
	next := make(chan int)
	errs := make(chan error, width)
	var wg sync.WaitGroup
	for range width {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
feed:
	for i := range n {
		select {
		case next <- i:
		case err = <-errs:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	if err == nil {
		err = <-errs
	}
	return err
}
