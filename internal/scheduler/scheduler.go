// Package scheduler runs the scheduler: it watches pods that have no
// node and whose spec.schedulerName is one of its profiles
// ("default-scheduler" unless configured otherwise), decides where each
// goes with that profile's framework over an informer-fed snapshot, and
// binds them through the pods/binding subresource. Several instances may
// run; the one holding the Lease (kube-system/kube-scheduler unless
// configured otherwise) schedules, the others wait with warm caches.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/orca-project/orca/internal/scheduler/explain"
	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/queue"
)

// SchedulerName is the spec.schedulerName the default profile serves.
const SchedulerName = v1.DefaultSchedulerName

// Config configures a scheduler.
type Config struct {
	Client kubernetes.Interface
	Log    *slog.Logger
	// Metrics receives the scheduler's metrics; nil keeps them private.
	Metrics prometheus.Registerer
	// Configuration is a KubeSchedulerConfiguration read by schedconfig
	// (profiles, plugins, percentageOfNodesToScore, the Lease's name);
	// nil is the default profile alone.
	Configuration *configv1.KubeSchedulerConfiguration
	// PercentageOfNodesToScore: 0 is upstream's adaptive value. Used
	// without a Configuration only.
	PercentageOfNodesToScore int
	// DisablePreemption turns preemption off in every profile.
	DisablePreemption bool
	// LeaderElection enables the Lease; without it this instance always
	// schedules (tests, a single server). A Configuration with
	// leaderElection.leaderElect false turns it off too.
	LeaderElection bool
	// Identity names this instance in the Lease; the host name by default.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod default to upstream's
	// 15 s, 10 s and 2 s.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Explanations is how many pods' latest explanations are kept in
	// memory (0: none; pods that ask still get their annotation).
	Explanations int
}

// Scheduler is the running component.
type Scheduler struct {
	cfg    Config
	log    *slog.Logger
	client kubernetes.Interface
	// profiles by the schedulerName they serve.
	profiles map[string]*schedProfile
	cache    *framework.Cache
	queue    *queue.Queue
	metrics  *metrics

	factory  informers.SharedInformerFactory
	pods     corelisters.PodLister
	nodes    corelisters.NodeLister
	pdbs     policylisters.PodDisruptionBudgetLister
	volumes  *volumeListers
	recorder record.EventRecorder
	events   record.EventBroadcaster

	rng *rand.Rand

	// explanations keeps recent pods' explanations; nil keeps none.
	explanations *explain.Store

	mu     sync.Mutex
	synced bool
	leader bool
}

// New builds a scheduler; Run starts it.
func New(cfg Config) (*Scheduler, error) {
	if cfg.Client == nil {
		return nil, errors.New("scheduler: no client")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	if cfg.Identity == "" {
		host, _ := os.Hostname()
		cfg.Identity = fmt.Sprintf("%s_%d", host, rand.Uint32())
	}
	m, err := newMetrics(cfg.Metrics)
	if err != nil {
		return nil, fmt.Errorf("scheduler metrics: %w", err)
	}
	factory := informers.NewSharedInformerFactory(cfg.Client, 0)
	s := &Scheduler{
		cfg:     cfg,
		log:     cfg.Log.With("component", "scheduler"),
		client:  cfg.Client,
		volumes: newVolumeListers(factory),
		nodes:   factory.Core().V1().Nodes().Lister(),
		pdbs:    factory.Policy().V1().PodDisruptionBudgets().Lister(),
		cache:   framework.NewCache(),
		queue:   queue.New(queue.Options{}),
		metrics: m,
		rng:     rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),

		explanations: explain.NewStore(cfg.Explanations),
	}
	m.pending = func() (int, int, int) { return s.queue.Len() }
	s.factory = factory
	s.events = record.NewBroadcaster()
	if err := s.buildProfiles(cfg.configuration()); err != nil {
		return nil, fmt.Errorf("scheduler profiles: %w", err)
	}
	return s, nil
}

// Ready reports whether the caches are synced (for /readyz).
func (s *Scheduler) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.synced
}

// Leading reports whether this instance holds the Lease.
func (s *Scheduler) Leading() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leader
}

// Run fills the caches, waits for the Lease (if enabled) and schedules
// until ctx ends. Losing the Lease stops scheduling and campaigns again;
// it does not stop the process, which in `orca server` hosts more than
// the scheduler.
func (s *Scheduler) Run(ctx context.Context) error {
	s.events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: s.client.CoreV1().Events("")})
	defer s.events.Shutdown()

	podInf := s.factory.Core().V1().Pods()
	nodeInf := s.factory.Core().V1().Nodes()
	nsInf := s.factory.Core().V1().Namespaces()
	s.pods = podInf.Lister()
	if err := s.addHandlers(podInf.Informer(), nodeInf.Informer(), nsInf.Informer()); err != nil {
		return err
	}
	if err := s.addVolumeHandlers(s.factory); err != nil {
		return err
	}
	s.factory.Start(ctx.Done())
	defer s.factory.Shutdown()
	for typ, ok := range s.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("scheduler: cache for %v did not sync: %w", typ, ctx.Err())
		}
	}
	s.mu.Lock()
	s.synced = true
	s.mu.Unlock()
	nodes, pods := s.cache.Counts()
	s.log.Info("scheduler caches synced", "nodes", nodes, "boundPods", pods)

	go s.queue.Run(ctx, time.Second)
	le := s.cfg.configuration().LeaderElection
	if !s.cfg.LeaderElection || (le.LeaderElect != nil && !*le.LeaderElect) {
		s.setLeader(true)
		return s.loop(ctx)
	}
	leaseNS, leaseName := orString(le.ResourceNamespace, "kube-system"), orString(le.ResourceName, "kube-scheduler")
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, leaseNS, leaseName,
		s.client.CoreV1(), s.client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: s.cfg.Identity, EventRecorder: s.recorder})
	if err != nil {
		return fmt.Errorf("scheduler lease lock: %w", err)
	}
	lec := leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   orDefault(s.cfg.LeaseDuration, orDefault(le.LeaseDuration.Duration, 15*time.Second)),
		RenewDeadline:   orDefault(s.cfg.RenewDeadline, orDefault(le.RenewDeadline.Duration, 10*time.Second)),
		RetryPeriod:     orDefault(s.cfg.RetryPeriod, orDefault(le.RetryPeriod.Duration, 2*time.Second)),
		ReleaseOnCancel: true,
		Name:            leaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				s.setLeader(true)
				s.log.Info("became leader, scheduling", "identity", s.cfg.Identity)
				if err := s.loop(lctx); err != nil && lctx.Err() == nil {
					s.log.Error("scheduling loop stopped", "err", err)
				}
			},
			OnStoppedLeading: func() {
				s.setLeader(false)
				s.log.Info("stopped leading", "identity", s.cfg.Identity)
			},
			OnNewLeader: func(id string) {
				if id != s.cfg.Identity {
					s.log.Info("another scheduler leads", "leader", id)
				}
			},
		},
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(lec)
		if err != nil {
			return fmt.Errorf("scheduler leader election: %w", err)
		}
		le.Run(ctx)
	}
	return nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func orString(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

func (s *Scheduler) setLeader(v bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leader = v
}

// loop schedules one pod at a time; binds run concurrently behind it.
func (s *Scheduler) loop(ctx context.Context) error {
	for {
		qp, err := s.queue.Pop(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, queue.ErrClosed) {
				return nil
			}
			return err
		}
		s.scheduleOne(ctx, qp)
	}
}
