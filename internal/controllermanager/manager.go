package controllermanager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Config configures a Manager. Zero durations take upstream's defaults
// (15 s lease, 10 s renew deadline, 2 s retry period).
type Config struct {
	// REST reaches the API server as system:kube-controller-manager.
	REST *rest.Config
	// Controllers are the controllers to run; DefaultControllers() when nil.
	Controllers []Descriptor
	// Identity is this manager's name in the Lease; host name plus a
	// random suffix when empty, so that two managers on one host differ.
	Identity string
	// LeaseNamespace and LeaseName name the Lease every manager competes
	// for; kube-system/orca-controller-manager when empty.
	LeaseNamespace, LeaseName                 string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// UseServiceAccountCredentials runs each controller as its own
	// service account in kube-system (upstream's flag of that name), so
	// that it holds only its system:controller:* role; the manager's own
	// identity then only elects the leader and feeds the shared informers.
	UseServiceAccountCredentials bool
	// Metrics receives the manager's collectors; nil keeps them private.
	Metrics prometheus.Registerer
	Log     *slog.Logger
}

// Manager elects a leader and, while it leads, runs the controllers.
type Manager struct {
	cfg      Config
	client   kubernetes.Interface
	metadata metadata.Interface
	dynamic  dynamic.Interface
	queues   *queueMetrics
	leading  prometheus.Gauge
	watchdog *leaderelection.HealthzAdaptor
	ready    atomic.Bool
	log      *slog.Logger
}

// New builds a manager; Run starts it.
func New(cfg Config) (*Manager, error) {
	if cfg.REST == nil {
		return nil, errors.New("controller manager: no API server configuration")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Controllers == nil {
		cfg.Controllers = DefaultControllers()
	}
	if cfg.Identity == "" {
		host, _ := os.Hostname()
		cfg.Identity = host + "_" + uuid.NewString()
	}
	if cfg.LeaseNamespace == "" {
		cfg.LeaseNamespace = metav1.NamespaceSystem
	}
	if cfg.LeaseName == "" {
		cfg.LeaseName = "orca-controller-manager"
	}
	if cfg.LeaseDuration == 0 {
		cfg.LeaseDuration = 15 * time.Second
	}
	if cfg.RenewDeadline == 0 {
		cfg.RenewDeadline = 10 * time.Second
	}
	if cfg.RetryPeriod == 0 {
		cfg.RetryPeriod = 2 * time.Second
	}
	if cfg.Metrics == nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	restCfg := rest.CopyConfig(cfg.REST)
	if restCfg.UserAgent == "" {
		restCfg.UserAgent = "orca-controller-manager"
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("controller manager client: %w", err)
	}
	md, err := metadata.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("controller manager metadata client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("controller manager dynamic client: %w", err)
	}
	qm, err := newQueueMetrics(cfg.Metrics)
	if err != nil {
		return nil, fmt.Errorf("controller manager metrics: %w", err)
	}
	leading := prometheus.NewGauge(prometheus.GaugeOpts{Name: "orca_controller_manager_leader", Help: "1 while this controller manager holds the leader Lease."})
	if err := cfg.Metrics.Register(leading); err != nil {
		return nil, fmt.Errorf("controller manager metrics: %w", err)
	}
	return &Manager{
		cfg: cfg, client: client, metadata: md, dynamic: dyn, queues: qm, leading: leading,
		watchdog: leaderelection.NewLeaderHealthzAdaptor(20 * time.Second),
		log:      cfg.Log.With("component", "controller-manager"),
	}, nil
}

// Run competes for the Lease and runs the controllers while leading. A
// lost lease stops the controllers and the manager competes again, rather
// than exiting as upstream does: inside `orca server` the API server must
// not go down because a renewal was late.
func (m *Manager) Run(ctx context.Context) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: m.cfg.LeaseNamespace, Name: m.cfg.LeaseName},
		Client:     m.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: m.cfg.Identity},
	}
	m.ready.Store(true)
	for ctx.Err() == nil {
		round, cancel := context.WithCancel(ctx)
		// OnStartedLeading only hands over the leader's context: the
		// controllers run here, so that a round ends only after they have.
		lead := make(chan context.Context, 1)
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   m.cfg.LeaseDuration,
			RenewDeadline:   m.cfg.RenewDeadline,
			RetryPeriod:     m.cfg.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            m.cfg.LeaseName,
			WatchDog:        m.watchdog,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(lctx context.Context) { lead <- lctx },
				OnStoppedLeading: func() {},
				OnNewLeader: func(id string) {
					if id != m.cfg.Identity {
						m.log.Info("another controller manager leads", "leader", id)
					}
				},
			},
		})
		if err != nil {
			cancel()
			return fmt.Errorf("leader election: %w", err)
		}
		elected := make(chan struct{})
		go func() {
			defer close(elected)
			le.Run(round)
		}()
		select {
		case lctx := <-lead:
			m.log.Info("leading; starting controllers", "identity", m.cfg.Identity)
			if err := m.runControllers(lctx); err != nil && lctx.Err() == nil {
				m.log.Error("controllers stopped; giving up the lease", "err", err)
			}
			cancel()
			<-elected
		case <-elected:
		}
		cancel()
		if ctx.Err() != nil {
			break
		}
		m.log.Warn("not leading; competing for the controller manager lease again")
		select {
		case <-ctx.Done():
		case <-time.After(m.cfg.RetryPeriod):
		}
	}
	return nil
}

// runControllers builds every controller, starts the shared informers and
// runs the controllers until ctx ends or one of them fails.
func (m *Manager) runControllers(ctx context.Context) error {
	m.leading.Set(1)
	defer m.leading.Set(0)
	factory := informers.NewSharedInformerFactory(m.client, 0)
	defer factory.Shutdown()
	cctx := &Context{
		REST: m.cfg.REST, Client: m.client, Metadata: m.metadata, Dynamic: m.dynamic, Discovery: m.client.Discovery(),
		Informers: factory, QueueMetrics: m.queues, Log: m.log,
	}
	type built struct {
		c       Controller
		workers int
	}
	var ctrls []built
	var creds *credentials
	if m.cfg.UseServiceAccountCredentials {
		creds = newCredentials(m.cfg.REST, m.client)
	}
	for _, d := range m.cfg.Controllers {
		dctx := cctx
		if creds != nil {
			var err error
			if dctx, err = creds.contextFor(*cctx, d.Name); err != nil {
				return err
			}
		}
		c, err := d.New(dctx)
		if err != nil {
			return fmt.Errorf("build controller %s: %w", d.Name, err)
		}
		workers := d.Workers
		if workers <= 0 {
			workers = 1
		}
		ctrls = append(ctrls, built{c, workers})
	}
	factory.Start(ctx.Done())
	g, gctx := errgroup.WithContext(ctx)
	for _, b := range ctrls {
		g.Go(func() error {
			m.log.Info("starting controller", "controller", b.c.Name(), "workers", b.workers)
			if err := b.c.Run(gctx, b.workers); err != nil && gctx.Err() == nil {
				return fmt.Errorf("controller %s: %w", b.c.Name(), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// Healthy reports whether the manager is alive: a leader that has not
// renewed its lease for long is not.
func (m *Manager) Healthy(r *http.Request) error {
	return m.watchdog.Check(r)
}

// Handler serves /healthz, /readyz and /metrics for the standalone
// command; gatherer is the registry given as Config.Metrics.
func (m *Manager) Handler(gatherer prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := m.Healthy(r); err != nil {
			http.Error(w, "leaderElection: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if !m.ready.Load() {
			http.Error(w, "not started", http.StatusServiceUnavailable)
			return
		}
		if err := m.Healthy(r); err != nil {
			http.Error(w, "leaderElection: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.Handle("/metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	return mux
}
