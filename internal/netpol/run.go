package netpol

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/knftables"

	"github.com/orca-project/orca/internal/nftplan"
)

// Options configure the enforcer.
type Options struct {
	// Client reads pods, namespaces and policies of the whole cluster.
	Client   kubernetes.Interface
	NodeName string
	// DNS are the cluster DNS service's addresses.
	DNS []string
	// NFT reaches the table; the real nft when nil.
	NFT knftables.Interface
	// MinSyncPeriod coalesces bursts of changes (100 ms when zero);
	// FullSyncPeriod rewrites the table now and then (5 minutes when
	// zero).
	MinSyncPeriod, FullSyncPeriod time.Duration
	Metrics                       prometheus.Registerer
	Log                           *slog.Logger
}

// Enforcer keeps the node's network policy table current.
type Enforcer struct {
	o       Options
	pods    cache.SharedIndexInformer
	nss     cache.SharedIndexInformer
	pols    cache.SharedIndexInformer
	trigger nftplan.Trigger
	syncer  *nftplan.Syncer
	m       *metrics
	log     *slog.Logger

	mu sync.Mutex
	// early are pods of this node the kubelet announced (Admit) before
	// the pod informer shows their address, by key.
	early map[string]earlyPod
	// requested counts Admit calls; applied is the count the last
	// successful sync had seen when it began, and appliedCh is closed
	// (and replaced) whenever applied moves on.
	requested, applied uint64
	appliedCh          chan struct{}
}

// earlyPod is a pod announced by the kubelet, and when: one the informer
// never shows (its sandbox failed, it was deleted at once) is forgotten
// after earlyTTL.
type earlyPod struct {
	pod   Pod
	since time.Time
}

const earlyTTL = 2 * time.Minute

// New builds the enforcer; Run starts it.
func New(o Options) (*Enforcer, error) {
	if o.MinSyncPeriod == 0 {
		o.MinSyncPeriod = 100 * time.Millisecond
	}
	if o.FullSyncPeriod == 0 {
		o.FullSyncPeriod = 5 * time.Minute
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.NFT == nil {
		nft, err := knftables.New(Family, Table)
		if err != nil {
			return nil, fmt.Errorf("network policies: nftables: %w", err)
		}
		o.NFT = nft
	}
	factory := informers.NewSharedInformerFactory(o.Client, 0)
	e := &Enforcer{
		o: o, pods: factory.Core().V1().Pods().Informer(), nss: factory.Core().V1().Namespaces().Informer(),
		pols: factory.Networking().V1().NetworkPolicies().Informer(), trigger: nftplan.NewTrigger(),
		syncer: &nftplan.Syncer{NFT: o.NFT, Comment: tableComment}, m: newMetrics(o.Metrics),
		log: o.Log.With("component", "netpol"), early: map[string]earlyPod{}, appliedCh: make(chan struct{}),
	}
	// The pods' cache keeps what the rules read and nothing else: a
	// node holds every pod of the cluster in it.
	if err := e.pods.SetTransform(slimPod); err != nil {
		return nil, fmt.Errorf("network policies: %w", err)
	}
	h := cache.ResourceEventHandlerFuncs{AddFunc: func(any) { e.trigger.Poke() }, UpdateFunc: func(any, any) { e.trigger.Poke() }, DeleteFunc: func(any) { e.trigger.Poke() }}
	for _, inf := range []cache.SharedIndexInformer{e.pods, e.nss, e.pols} {
		if _, err := inf.AddEventHandler(h); err != nil {
			return nil, fmt.Errorf("network policies: %w", err)
		}
	}
	return e, nil
}

// slimPod drops what the rules never read from a cached pod.
func slimPod(obj any) (any, error) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return obj, nil
	}
	slim := &v1.Pod{}
	slim.Namespace, slim.Name, slim.Labels, slim.UID, slim.ResourceVersion = p.Namespace, p.Name, p.Labels, p.UID, p.ResourceVersion
	slim.Spec.NodeName, slim.Spec.HostNetwork = p.Spec.NodeName, p.Spec.HostNetwork
	for _, cs := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range cs {
			var ports []v1.ContainerPort
			for _, cp := range c.Ports {
				if cp.Name != "" {
					ports = append(ports, cp)
				}
			}
			if len(ports) > 0 {
				slim.Spec.Containers = append(slim.Spec.Containers, v1.Container{Ports: ports})
			}
		}
	}
	slim.Status.PodIP, slim.Status.Phase = p.Status.PodIP, p.Status.Phase
	return slim, nil
}

// Run programs the table until ctx ends.
func (e *Enforcer) Run(ctx context.Context) error {
	go e.pods.Run(ctx.Done())
	go e.nss.Run(ctx.Done())
	go e.pols.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), e.pods.HasSynced, e.nss.HasSynced, e.pols.HasSynced) {
		return ctx.Err()
	}
	nftplan.Loop{MinSync: e.o.MinSyncPeriod, FullSync: e.o.FullSyncPeriod, Log: e.log, What: "network policy rules"}.Run(ctx, e.trigger, e.sync)
	return nil
}

func (e *Enforcer) sync(full bool) error {
	start := time.Now()
	e.mu.Lock()
	seen := e.requested
	e.mu.Unlock()
	in, err := e.input()
	if err != nil {
		return err
	}
	rs := Build(in)
	if _, err := e.syncer.Sync(context.Background(), rs.Ruleset, full); err != nil {
		return err
	}
	e.mu.Lock()
	if seen > e.applied {
		e.applied = seen
		close(e.appliedCh)
		e.appliedCh = make(chan struct{})
	}
	e.mu.Unlock()
	e.m.observe(start, rs)
	for _, p := range rs.Problems {
		e.log.Warn("network policy not enforced as written", "problem", p)
	}
	return nil
}

// input reads the caches, with the pods the kubelet announced early.
func (e *Enforcer) input() (Input, error) {
	in := Input{Namespaces: map[string]map[string]string{}, DNS: e.o.DNS}
	seen := map[string]bool{}
	for _, obj := range e.pods.GetStore().List() {
		p, ok := obj.(*v1.Pod)
		if !ok {
			continue
		}
		if pod, ok := PodOf(p, e.o.NodeName); ok {
			in.Pods = append(in.Pods, pod)
			seen[pod.Key()] = true
		}
	}
	e.mu.Lock()
	for key, p := range e.early {
		if seen[key] || time.Since(p.since) > earlyTTL {
			delete(e.early, key)
			continue
		}
		in.Pods = append(in.Pods, p.pod)
	}
	e.mu.Unlock()
	for _, obj := range e.nss.GetStore().List() {
		if ns, ok := obj.(*v1.Namespace); ok {
			in.Namespaces[ns.Name] = ns.Labels
		}
	}
	for _, obj := range e.pols.GetStore().List() {
		if np, ok := obj.(*networkingv1.NetworkPolicy); ok {
			in.Policies = append(in.Policies, np)
		}
	}
	return in, nil
}

// Admit makes the rules count a pod of this node whose sandbox has its
// address, and waits until they are in the kernel: the kubelet calls it
// before starting the pod's containers, so that a pod the policies
// isolate is isolated from its first instant, as the API requires, and
// not only once its address has gone round through the API server.
func (e *Enforcer) Admit(ctx context.Context, pod *v1.Pod, ip string) error {
	p := pod.DeepCopy()
	p.Status.PodIP = ip
	p.Spec.NodeName = e.o.NodeName
	if p.Status.Phase == "" {
		p.Status.Phase = v1.PodPending
	}
	slim, ok := PodOf(p, e.o.NodeName)
	if !ok {
		return nil
	}
	e.mu.Lock()
	e.early[slim.Key()] = earlyPod{pod: slim, since: time.Now()}
	e.requested++
	mine := e.requested
	e.mu.Unlock()
	e.trigger.Poke()
	for {
		e.mu.Lock()
		done, next := e.applied >= mine, e.appliedCh
		e.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

type metrics struct {
	duration           prometheus.Histogram
	policies, isolated prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "orca_network_policy_sync_duration_seconds", Help: "Time to build and apply the node's network policy rules.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}),
		policies: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "orca_network_policy_policies", Help: "Network policies selecting a pod of this node, at the last sync.",
		}),
		isolated: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "orca_network_policy_isolated_pods", Help: "Pods of this node isolated in at least one direction, at the last sync.",
		}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.duration, m.policies, m.isolated} {
			if err := reg.Register(c); err != nil && !errors.As(err, &prometheus.AlreadyRegisteredError{}) {
				slog.Default().Warn("network policy metrics", "err", err)
			}
		}
	}
	return m
}

func (m *metrics) observe(start time.Time, rs *Ruleset) {
	m.duration.Observe(time.Since(start).Seconds())
	m.policies.Set(float64(rs.Policies))
	m.isolated.Set(float64(rs.Isolated))
}
