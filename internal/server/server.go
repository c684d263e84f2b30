// Package server wires the control plane of `orca server`: certificates,
// etcd (embedded or external), the API server and its HTTPS listener, and
// the admin kubeconfig. Components run under one context and one error
// group: when one fails, the whole server stops cleanly.
package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/orca-project/orca/internal/agent"
	"github.com/orca-project/orca/internal/apiserver"
	"github.com/orca-project/orca/internal/audit"
	"github.com/orca-project/orca/internal/auth/bootstrappolicy"
	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/controller/nodelifecycle"
	"github.com/orca-project/orca/internal/registry/builtin"
	"github.com/orca-project/orca/internal/storage"
	"github.com/orca-project/orca/internal/storage/embedded"
	"github.com/orca-project/orca/internal/storage/encryption"
	"github.com/orca-project/orca/internal/version"
)

// Options configure a control plane.
type Options struct {
	// DataDir holds etcd's data, the certificates and the kubeconfig.
	DataDir string
	// BindAddress and Port are where the API server listens; Port 0 picks
	// a free port (tests).
	BindAddress string
	Port        int
	// AdvertiseAddress is where pods and other nodes reach the API server:
	// the `kubernetes` Service's endpoint and a name in the serving
	// certificate. When empty or loopback, the node's own address is used
	// (see advertisedIP). The admin kubeconfig points at loopback unless
	// BindAddress names one address.
	AdvertiseAddress string
	// ExtraSANs are more names or addresses for the serving certificate.
	ExtraSANs []string

	// EtcdEndpoints selects an external etcd cluster instead of the
	// embedded member; the TLS files authenticate to it.
	EtcdEndpoints                         []string
	EtcdCAFile, EtcdCertFile, EtcdKeyFile string
	// EtcdClientURL and EtcdPeerURL are the embedded member's listeners;
	// empty leaves them off (the server uses an in-process client).
	EtcdClientURL, EtcdPeerURL string
	// EtcdPeerPort and EtcdClientPort, when EtcdPeerURL and EtcdClientURL
	// are empty, put the embedded member's listeners on the advertise
	// address with TLS from the etcd CA (upstream's 2380 and 2379 in
	// `orca server`), so that other servers can join; 0 leaves them on
	// unix sockets in the data dir.
	EtcdPeerPort, EtcdClientPort int
	// JoinServer and JoinToken join this server to the cluster of the
	// server at JoinServer (https://HOST:PORT), with that cluster's
	// server token (DATA_DIR/server-token there): it fetches the shared
	// keys and, with the embedded etcd, joins its etcd cluster.
	JoinServer, JoinToken string
	// EtcdSnapshotScheduleCron, EtcdSnapshotRetention and EtcdSnapshotDir
	// set the embedded member's scheduled snapshots (k3s's flags; their
	// defaults when zero, DATA_DIR/snapshots for the directory); see
	// snapshots.go. EtcdDisableSnapshots turns them off.
	EtcdSnapshotScheduleCron string
	EtcdSnapshotRetention    int
	EtcdSnapshotDir          string
	EtcdDisableSnapshots     bool

	// Agent, when set, runs a node agent in this process so that one
	// machine is a whole cluster; the server fills in its data directory,
	// credentials and certificates.
	Agent *agent.Options
	// DisableControllerManager keeps the controllers out of this process
	// (run `orca controller-manager` elsewhere instead).
	DisableControllerManager bool
	// DisableScheduler keeps the scheduler out of this process (run
	// `orca scheduler` elsewhere instead).
	DisableScheduler bool
	// SchedulerConfig is the in-process scheduler's configuration
	// (--scheduler-config, read by schedconfig); nil is the default
	// profile.
	SchedulerConfig *configv1.KubeSchedulerConfiguration
	// SchedulerExplanations is how many pods' scheduling explanations the
	// in-process scheduler keeps in memory (0: none).
	SchedulerExplanations int
	// DisableGatewayAPI installs no Gateway API CRDs and no GatewayClass.
	DisableGatewayAPI bool
	// DisableLocalStorage creates no local-path StorageClass (the
	// provisioner still serves classes that name it).
	DisableLocalStorage bool
	// DisableMetrics serves no metrics.k8s.io and scrapes no kubelets.
	DisableMetrics bool
	// DisableConsole serves no web console under /ui/.
	DisableConsole bool
	// MetricResolution is how often kubelets are scraped for the
	// resource metrics (metrics-server's --metric-resolution); 15 s when 0.
	MetricResolution time.Duration
	// AuditPolicyFile is an audit.k8s.io/v1 Policy; without it nothing is
	// audited, as upstream.
	AuditPolicyFile string
	// AuditLog is where audit events go, one JSON line each.
	AuditLog audit.LogFile
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight cap the
	// read-only and mutating requests the API server runs at once; 0
	// leaves a kind unlimited (`orca server` defaults to upstream's 400
	// and 200).
	MaxRequestsInFlight, MaxMutatingRequestsInFlight int
	// EnablePriorityAndFairness admits requests by API Priority and
	// Fairness instead of the max-in-flight limits, which then only add
	// up to the server's concurrency limit (upstream's
	// --enable-priority-and-fairness, on in `orca server`).
	EnablePriorityAndFairness bool
	// ServiceCIDR and ServiceNodePortRange are the ranges service
	// cluster IPs and node ports come from; k3s's defaults when empty.
	ServiceCIDR, ServiceNodePortRange string
	// ClusterCIDR is the range node pod CIDRs (a /24 each) come from;
	// DefaultClusterCIDR when empty.
	ClusterCIDR string
	// ServiceAccountIssuer is the "iss" of service-account tokens;
	// https://kubernetes.default.svc.cluster.local when empty.
	ServiceAccountIssuer string
	// ClusterDNSPort is where the cluster DNS server listens (UDP and TCP,
	// on BindAddress); 0 picks a free port (tests), negative turns it off.
	ClusterDNSPort int
	// ClusterDomain is the DNS domain of services and pods; cluster.local
	// when empty.
	ClusterDomain string
	// DNSUpstreams (host[:port]) receive names outside the cluster domain;
	// with none those get SERVFAIL.
	DNSUpstreams []string
	// LoadBalancerPool (CIDR or FIRST-LAST) gives each LoadBalancer
	// Service an address of its own; empty uses the Ready nodes' InternalIPs.
	LoadBalancerPool string
	// NodeLifecycle holds the node lifecycle controller's settings
	// (upstream's defaults where zero).
	NodeLifecycle nodelifecycle.Config
	// TerminatedPodGCThreshold is how many finished pods the pod garbage
	// collector leaves (upstream's 12500 when 0; negative leaves all).
	TerminatedPodGCThreshold int
	// AuthorizationModes are upstream's --authorization-mode values
	// (AlwaysAllow, AlwaysDeny, Node, RBAC), asked in order after
	// system:masters; DefaultAuthorizationModes when empty.
	AuthorizationModes []string
	// AnonymousAuth lets requests without credentials in as
	// system:anonymous, as upstream's --anonymous-auth (on by default in
	// `orca server`); authorization then allows them only the public
	// paths. Off, they get 401.
	AnonymousAuth bool
	// CompactInterval overrides the history compaction period.
	CompactInterval time.Duration
	// EncryptionProviderConfig is an upstream EncryptionConfiguration file
	// for encryption at rest. When empty the server generates its own at
	// first start (DATA_DIR/tls/encryption-config.yaml): Secrets under an
	// aescbc key it can rotate.
	EncryptionProviderConfig string
	// AdmissionControlConfigFile is upstream's AdmissionConfiguration
	// (apiserver.config.k8s.io/v1); its PodSecurity entry sets the
	// cluster-wide Pod Security levels and exemptions. Without it every
	// level is privileged, as upstream.
	AdmissionControlConfigFile string

	Log *slog.Logger
	// Out receives the few progress lines a person reads at start-up.
	Out io.Writer
}

// Instance is a running control plane.
type Instance struct {
	// URL is the API server's address, e.g. https://127.0.0.1:6443.
	URL string
	// Kubeconfig is the path of the admin kubeconfig.
	Kubeconfig string
	// JoinToken is the token other machines join the cluster with.
	JoinToken string
	// API is the API server itself (for in-process tests).
	API *apiserver.Server
	// Etcd is the control plane's etcd client.
	Etcd *clientv3.Client

	cancel context.CancelFunc
	group  *errgroup.Group
	close  func()
}

// Wait blocks until the control plane stops and returns why.
func (i *Instance) Wait() error {
	err := i.group.Wait()
	i.close()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Stop shuts the control plane down and waits for it.
func (i *Instance) Stop() error {
	i.cancel()
	return i.Wait()
}

// Start brings up the control plane and returns once the API server is
// ready to serve.
func Start(ctx context.Context, opts Options) (*Instance, error) {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.BindAddress == "" {
		opts.BindAddress = "0.0.0.0"
	}
	opts = withAdvertisedIP(opts)
	say := func(format string, args ...any) { fmt.Fprintf(opts.Out, "orca: "+format+"\n", args...) }
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}

	tlsDir := filepath.Join(opts.DataDir, "tls")
	embeddedEtcd := len(opts.EtcdEndpoints) == 0
	var boot *serverBootstrap
	if opts.JoinServer != "" && (!fileExists(filepath.Join(tlsDir, "ca.key")) || embeddedEtcd && !embedded.HasData(filepath.Join(opts.DataDir, "etcd"))) {
		say("joining the cluster of %s", opts.JoinServer)
		var err error
		if boot, err = fetchServerBootstrap(ctx, opts.JoinServer, opts.JoinToken); err != nil {
			return nil, fmt.Errorf("join %s: %w", opts.JoinServer, err)
		}
		if boot.ExternalEtcd && embeddedEtcd {
			return nil, fmt.Errorf("join %s: that cluster keeps its data in an external etcd; give this server the same --etcd-endpoints", opts.JoinServer)
		}
		if err := writeShared(opts.DataDir, boot); err != nil {
			return nil, fmt.Errorf("join %s: %w", opts.JoinServer, err)
		}
	}
	say("certificates in %s", tlsDir)
	ca, err := pki.LoadOrCreateCA(tlsDir, "ca", "orca-ca")
	if err != nil {
		return nil, err
	}
	serving, err := pki.LoadOrIssue(tlsDir, "serving", ca, servingSpec(opts))
	if err != nil {
		return nil, err
	}
	admin, err := pki.LoadOrIssue(tlsDir, "admin", ca, pki.LeafSpec{CommonName: "system:admin", Organizations: []string{"system:masters"}})
	if err != nil {
		return nil, err
	}
	frontProxy, err := frontProxy(tlsDir, ca)
	if err != nil {
		return nil, err
	}
	kubeletTLS, err := kubeletClientTLS(tlsDir, ca)
	if err != nil {
		return nil, err
	}
	saTokens, err := serviceAccountTokens(tlsDir, opts.ServiceAccountIssuer)
	if err != nil {
		return nil, err
	}
	enc, err := loadEncryption(opts, tlsDir)
	if err != nil {
		return nil, err
	}
	say("encryption at rest configured by %s", enc.source)
	podSecurity, err := loadAdmissionConfig(opts.AdmissionControlConfigFile)
	if err != nil {
		return nil, err
	}
	maintenance, err := newEtcdMaintenance(opts)
	if err != nil {
		return nil, err
	}

	var (
		client *clientv3.Client
		// member is the embedded etcd member; cluster, for a server
		// that joined just now, a client of the other members through
		// which memberID is promoted.
		member   *etcdMember
		cluster  *clientv3.Client
		memberID uint64
	)
	closeEtcd := func() {}
	if len(opts.EtcdEndpoints) > 0 {
		say("connecting to etcd at %v", opts.EtcdEndpoints)
		if client, err = externalEtcd(opts); err != nil {
			return nil, err
		}
		closeEtcd = func() { client.Close() }
	} else {
		if member, err = etcdMemberConfig(opts, tlsDir); err != nil {
			return nil, err
		}
		if boot != nil {
			if cluster, memberID, err = joinEtcd(ctx, member, boot); err != nil {
				return nil, fmt.Errorf("join %s: %w", opts.JoinServer, err)
			}
			say("added etcd member %s as a learner of the cluster at %v", member.cfg.Name, boot.EtcdClientURLs)
		}
		say("starting embedded etcd (data in %s)", member.cfg.Dir)
		e, err := embedded.Start(ctx, member.cfg)
		if err != nil {
			if cluster != nil {
				cluster.Close()
			}
			return nil, err
		}
		if memberID == 0 {
			memberID = e.ID()
		}
		client = e.Client()
		closeEtcd = func() {
			if cluster != nil {
				cluster.Close()
			}
			e.Close()
		}
	}

	extra, openAPI, err := extraHandlers()
	if err != nil {
		closeEtcd()
		return nil, err
	}
	var api *apiserver.Server
	encManager := encryption.NewManager(encryption.ManagerConfig{
		Client:       client,
		Transformers: enc.transformers,
		Config:       enc.cfg,
		Path:         enc.path,
		Resources:    storedResources(&api),
		Log:          opts.Log,
	})
	extra[encryption.PathPrefix] = encryptionHandler(encManager)
	shared := sharedFiles
	if enc.path != "" {
		shared = append(slices.Clone(shared), "tls/"+encryption.GeneratedFile)
	}
	extra[bootstrappolicy.ServerBootstrapPath] = serverBootstrapHandler(opts.DataDir, shared, client, !embeddedEtcd)
	reg := prometheus.NewRegistry()
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	store := storage.NewStore(client, storage.NewCodec())
	// The port is known before the API server is built because the
	// `kubernetes` service's endpoints name it.
	ln, err := net.Listen("tcp", net.JoinHostPort(opts.BindAddress, strconv.Itoa(opts.Port)))
	if err != nil {
		closeEtcd()
		return nil, fmt.Errorf("listen: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	auditor, closeAudit, err := newAuditor(opts, reg)
	if err != nil {
		ln.Close()
		closeEtcd()
		return nil, err
	}
	// From here on every exit, and the instance's end, closes the audit
	// log with etcd.
	onlyEtcd := closeEtcd
	closeEtcd = func() { onlyEtcd(); closeAudit() }
	alloc, err := serviceAllocator(ctx, store, opts, enc.transformers)
	if err != nil {
		ln.Close()
		closeEtcd()
		return nil, err
	}
	z, err := newAuthz(opts.AuthorizationModes)
	if err != nil {
		ln.Close()
		closeEtcd()
		return nil, err
	}
	fc, err := newFlowControl(opts, reg)
	if err != nil {
		ln.Close()
		closeEtcd()
		return nil, err
	}
	plugins := &admissionPlugins{authz: z, podSecurity: podSecurity}
	// Admission webhooks watch their configurations through the server
	// itself, as upstream's do, as a member of system:masters.
	if plugins.loopback, err = loopbackConfig(opts, tlsDir, ca, port, "apiserver-loopback", "system:apiserver", []string{user.SystemPrivilegedGroup}, "orca-apiserver", 50, 100); err != nil {
		ln.Close()
		closeEtcd()
		return nil, err
	}
	public, err := publicHandlers(opts)
	if err != nil {
		ln.Close()
		closeEtcd()
		return nil, err
	}
	components := newComponentProbes(store)
	metricsServer := newMetricsServer(opts, kubeletTLS)
	explanations := &schedulerExplanations{}
	api, err = apiserver.New(apiserver.Config{
		PodExplanations:   explanations.get,
		Computed:          computedSources(components, metricsServer),
		Admission:         plugins.chain,
		Store:             store,
		Resources:         servedResources(builtin.Resources(), opts),
		Version:           version.Info(),
		Log:               opts.Log,
		Metrics:           reg,
		Authenticator:     apiserver.ClientCertAuthenticator{},
		Authorizer:        z.chain,
		RuleResolver:      z.rbac,
		Anonymous:         opts.AnonymousAuth,
		Extra:             extra,
		Public:            public,
		OnCustomResources: openAPI.SetCustomResources,
		FrontProxy:        frontProxy,
		OnRemoteOpenAPI:   openAPI.SetRemotes,
		CompactInterval:   opts.CompactInterval,
		Transformers:      enc.transformers,

		Allocator:         alloc,
		KubernetesService: kubernetesService(alloc, opts, port),

		ServiceAccountTokens: saTokens,
		KubeletClientTLS:     kubeletTLS,

		Auditor:                     auditor,
		MaxRequestsInFlight:         opts.MaxRequestsInFlight,
		MaxMutatingRequestsInFlight: opts.MaxMutatingRequestsInFlight,
		FlowControl:                 fc,
	})
	if err != nil {
		ln.Close()
		closeEtcd()
		return nil, err
	}
	if plugins.err != nil {
		ln.Close()
		closeEtcd()
		return nil, plugins.err
	}
	// The authorizers read the API server's caches; nothing is served
	// before this point.
	z.api = api

	url := "https://" + net.JoinHostPort(kubeconfigHost(opts.BindAddress), strconv.Itoa(port))
	kubeconfig := filepath.Join(opts.DataDir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, url, ca, admin); err != nil {
		ln.Close()
		closeEtcd()
		return nil, err
	}

	srv := &http.Server{
		Handler: api.Handler(),
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{{Certificate: [][]byte{serving.Cert.Raw}, PrivateKey: serving.Key, Leaf: serving.Cert}},
			ClientAuth:   tls.VerifyClientCertIfGiven,
			ClientCAs:    roots,
			MinVersion:   tls.VersionTLS12,
		},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(opts.Log.Handler(), slog.LevelDebug),
	}

	ctx, cancel := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return api.Run(gctx) })
	g.Go(func() error { alloc.RunRepair(gctx, repairInterval); return nil })
	g.Go(func() error {
		err := srv.ServeTLS(ln, "", "")
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serve: %w", err)
	})
	plugins.start(gctx)
	// The API server's own clients (controllers, scheduler, agent) stop
	// first, so that they release their leases and flush their events
	// while it still answers, and a clean stop logs no errors.
	var clients stoppers
	g.Go(func() error {
		<-gctx.Done()
		if clients.wait(10 * time.Second) {
			// What they recorded on the way out (leader election's
			// "stopped leading") is sent asynchronously; let it land.
			time.Sleep(500 * time.Millisecond)
		}
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
		return gctx.Err()
	})
	inst := &Instance{URL: url, Kubeconfig: kubeconfig, API: api, Etcd: client, cancel: cancel, group: g, close: closeEtcd}

	// Wait for readiness (caches synced, default namespaces created).
	for !api.Ready() {
		select {
		case <-gctx.Done():
			cancel()
			err := inst.Wait()
			if err == nil {
				err = ctx.Err()
			}
			return nil, fmt.Errorf("control plane stopped during start-up: %w", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := plugins.bootstrap(ctx); err != nil {
		cancel()
		_ = inst.Wait()
		return nil, err
	}
	// Components started below act under their own identities, which the
	// bootstrap roles authorize.
	if err := reconcilePolicy(ctx, opts, tlsDir, ca, port); err != nil {
		cancel()
		_ = inst.Wait()
		return nil, err
	}
	if err := ensureIngressClass(ctx, opts, tlsDir, ca, port); err != nil {
		cancel()
		_ = inst.Wait()
		return nil, err
	}
	if !opts.DisableLocalStorage {
		if err := ensureStorageClass(ctx, opts, tlsDir, ca, port); err != nil {
			cancel()
			_ = inst.Wait()
			return nil, err
		}
	}
	if !opts.DisableGatewayAPI {
		g.Go(func() error { return ensureGatewayAPI(gctx, opts, tlsDir, ca, port) })
	}
	join, created, err := setupJoin(ctx, opts, tlsDir, ca, port)
	if err != nil {
		cancel()
		_ = inst.Wait()
		return nil, err
	}
	inst.JoinToken = join
	if created {
		say("join token (kept in %s): %s", filepath.Join(opts.DataDir, TokenFile), join)
	}
	say("join machines with: orca agent --server %s --token-file %s (or --token TOKEN)", joinURL(opts, port), filepath.Join(opts.DataDir, TokenFile))
	say("add servers with: orca server --server %s --token-file %s (a copy of this file)", joinURL(opts, port), filepath.Join(opts.DataDir, ServerTokenFile))
	if err := startFlowControl(gctx, opts, tlsDir, ca, port, fc, g.Go); err != nil {
		cancel()
		_ = inst.Wait()
		return nil, err
	}
	if err := startDefaultServiceCIDR(gctx, opts, tlsDir, ca, port, alloc.IPs.String(), g.Go); err != nil {
		cancel()
		_ = inst.Wait()
		return nil, err
	}
	if err := startMetricsServer(gctx, opts, tlsDir, ca, port, metricsServer, g.Go); err != nil {
		cancel()
		_ = inst.Wait()
		return nil, err
	}
	say("API server ready at %s", url)
	if member != nil {
		g.Go(func() error { return runMembership(gctx, opts.Log, client, cluster, memberID, member) })
		if err := startMemberController(gctx, opts, tlsDir, ca, port, client, member, g.Go); err != nil {
			cancel()
			_ = inst.Wait()
			return nil, err
		}
	}
	if err := maintenance.start(gctx, client, reg, g.Go); err != nil {
		cancel()
		_ = inst.Wait()
		return nil, err
	}
	if err := startClusterDNS(gctx, opts, tlsDir, ca, port, reg, g.Go); err != nil {
		cancel()
		_ = inst.Wait()
		return nil, err
	}
	if !opts.DisableControllerManager {
		cm, err := controllerManager(opts, tlsDir, ca, port, reg)
		if err != nil {
			cancel()
			_ = inst.Wait()
			return nil, err
		}
		components.add("controller-manager", controllerManagerProbe(cm.Healthy))
		clients.goStop(g.Go, func() error { return runControllerManager(gctx, cm) })
	}
	if !opts.DisableScheduler {
		sched, err := newScheduler(opts, tlsDir, ca, port, reg)
		if err != nil {
			cancel()
			_ = inst.Wait()
			return nil, err
		}
		explanations.s.Store(sched)
		components.add("scheduler", schedulerProbe)
		clients.goStop(g.Go, func() error { return runScheduler(gctx, sched) })
	}
	if opts.Agent != nil {
		a, err := agentOptions(opts, tlsDir, ca, port)
		if err != nil {
			cancel()
			_ = inst.Wait()
			return nil, err
		}
		a.Log = opts.Log
		clients.goStop(g.Go, func() error { return runAgent(gctx, a) })
	}
	return inst, nil
}

// stoppers tracks goroutines that must end before the HTTP server does.
type stoppers struct {
	mu   sync.Mutex
	done []chan struct{}
}

// goStop runs f with start (an errgroup's Go) and tracks its end.
func (s *stoppers) goStop(start func(func() error), f func() error) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.done = append(s.done, ch)
	s.mu.Unlock()
	start(func() error {
		defer close(ch)
		return f()
	})
}

// wait waits for every tracked goroutine, for at most d in all, and
// reports whether there were any.
func (s *stoppers) wait(d time.Duration) bool {
	s.mu.Lock()
	done := append([]chan struct{}(nil), s.done...)
	s.mu.Unlock()
	deadline := time.After(d)
	for _, ch := range done {
		select {
		case <-ch:
		case <-deadline:
			return true
		}
	}
	return len(done) > 0
}

func servingSpec(opts Options) pki.LeafSpec {
	spec := pki.LeafSpec{
		CommonName: "orca-apiserver",
		DNSNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPs:        []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		Server:     true,
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		spec.DNSNames = append(spec.DNSNames, h)
	}
	// Pods reach the API server through the `kubernetes` service's address.
	if ipr, _, err := serviceRanges(opts); err == nil {
		spec.IPs = append(spec.IPs, net.IP(ipr.Addr(0).AsSlice()))
	}
	for _, san := range append([]string{opts.AdvertiseAddress}, opts.ExtraSANs...) {
		if ip := net.ParseIP(san); ip != nil {
			spec.IPs = append(spec.IPs, ip)
		} else if san != "" {
			spec.DNSNames = append(spec.DNSNames, san)
		}
	}
	return spec
}

func externalEtcd(opts Options) (*clientv3.Client, error) {
	cfg := clientv3.Config{Endpoints: opts.EtcdEndpoints, DialTimeout: 10 * time.Second}
	if opts.EtcdCertFile != "" || opts.EtcdCAFile != "" {
		info := transport.TLSInfo{CertFile: opts.EtcdCertFile, KeyFile: opts.EtcdKeyFile, TrustedCAFile: opts.EtcdCAFile}
		tc, err := info.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd client TLS: %w", err)
		}
		cfg.TLS = tc
	}
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to etcd: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Get(ctx, "/registry/health", clientv3.WithCountOnly()); err != nil {
		c.Close()
		return nil, fmt.Errorf("etcd at %v is not reachable: %w", opts.EtcdEndpoints, err)
	}
	return c, nil
}

// writeKubeconfig writes the admin kubeconfig, with the certificates
// inlined so the file works when copied elsewhere.
func writeKubeconfig(path, url string, ca, admin *pki.Pair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["orca"] = &clientcmdapi.Cluster{Server: url, CertificateAuthorityData: ca.CertPEM}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: admin.CertPEM, ClientKeyData: admin.KeyPEM}
	cfg.Contexts["orca"] = &clientcmdapi.Context{Cluster: "orca", AuthInfo: "admin"}
	cfg.CurrentContext = "orca"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	return pki.WriteFile(path, data, 0o600)
}
