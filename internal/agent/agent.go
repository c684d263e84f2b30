// Package agent is one node's data plane: it runs the node's containerd,
// registers the Node, and runs the kubelet and its streaming server. `orca
// agent` runs it alone; `orca server` runs it in-process so that one
// machine is a whole cluster.
package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/agent/join"
	"github.com/orca-project/orca/internal/agent/podroutes"
	"github.com/orca-project/orca/internal/agent/serverlb"
	"github.com/orca-project/orca/internal/agent/supervisor"
	"github.com/orca-project/orca/internal/auth/delegating"
	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/cri"
	"github.com/orca-project/orca/internal/cri/containerd"
	"github.com/orca-project/orca/internal/imagebuild"
	"github.com/orca-project/orca/internal/images"
	"github.com/orca-project/orca/internal/kubelet"
	"github.com/orca-project/orca/internal/kubelet/cgroups"
	"github.com/orca-project/orca/internal/kubelet/csi"
	"github.com/orca-project/orca/internal/kubelet/eviction"
	"github.com/orca-project/orca/internal/kubelet/imagegc"
	"github.com/orca-project/orca/internal/kubelet/logrotate"
	"github.com/orca-project/orca/internal/kubelet/nodestatus"
	kubeletserver "github.com/orca-project/orca/internal/kubelet/server"
	"github.com/orca-project/orca/internal/kubelet/stats"
	"github.com/orca-project/orca/internal/localpath"
	"github.com/orca-project/orca/internal/netpol"
	"github.com/orca-project/orca/internal/nodeaddr"
	"github.com/orca-project/orca/internal/proxy"
	"github.com/orca-project/orca/internal/version"
)

// Options configure an agent.
type Options struct {
	// DataDir holds everything the agent keeps: DataDir/agent/...
	DataDir  string
	NodeName string
	// Config reaches the API server with the node's credentials.
	Config *rest.Config
	// Join, when Config is nil, is the server and join token the node
	// gets its own credentials with (the node name and, unless set, the
	// directory, DATA_DIR/agent/pki, are filled in).
	Join *join.Config
	// APIServerLBPort is the port on 127.0.0.1 of the load balancer over
	// the cluster's API servers that a joining node (Join set) reaches
	// them all through, the server it joined only a fallback:
	// DefaultAPIServerLBPort when 0, none (Join's server alone) when
	// negative.
	APIServerLBPort int
	// ProxyConfig is what the service proxy and the routes between nodes
	// use: they read every Service, EndpointSlice and Node, which the
	// Node authorizer refuses a node's own identity, so upstream runs
	// kube-proxy as system:kube-proxy. Config when nil.
	ProxyConfig *rest.Config
	// IngressConfig is what the node's ingress controller reads with, as
	// system:orca:ingress (Ingresses, Services, EndpointSlices and TLS
	// Secrets of every namespace). Config when nil.
	IngressConfig *rest.Config
	// DisableIngress runs no ingress on the node: ports 80 and 443 stay
	// free and the node is not among the orca-ingress Service's
	// endpoints.
	DisableIngress bool
	// DisableNetworkPolicy leaves NetworkPolicies unenforced on the node.
	DisableNetworkPolicy bool
	// NodeIP is the node's InternalIP; found from the default route when
	// empty.
	NodeIP      string
	Labels      map[string]string
	Taints      []v1.Taint
	KubeletPort int
	// HealthzPort serves /healthz on 127.0.0.1 over plain HTTP without
	// credentials, as upstream's --healthz-port, for supervisors on the
	// node; 0 serves none.
	HealthzPort int
	// BindAddress is where the kubelet's HTTPS server listens.
	BindAddress string
	// ContainerRuntimeEndpoint names a running CRI socket; empty starts
	// the agent's own containerd.
	ContainerRuntimeEndpoint string
	// PodCIDR fixes the node's pod range; when empty the agent waits for
	// the cluster's node IPAM controller to assign one.
	PodCIDR string
	// ClusterCIDR and ServiceCIDR are the cluster's pod and service
	// ranges, for the node's routes and masquerading.
	ClusterCIDR, ServiceCIDR string
	ClusterDNS               []string
	ClusterDomain            string
	MaxPods                  int64
	Reserved                 v1.ResourceList
	// Eviction is the eviction manager's thresholds (upstream's defaults
	// when nil): crossing one is node pressure.
	Eviction *eviction.Config
	// ImageGC and LogRotation are the image garbage collection and
	// container log rotation policies (upstream's defaults when nil).
	ImageGC     *imagegc.Policy
	LogRotation *logrotate.Policy
	// AllowPrivileged lets containers run privileged.
	AllowPrivileged bool
	// ServingCert and ClientCA secure the kubelet's HTTPS server; when
	// nil, the agent issues its own serving certificate and trusts the
	// API server's CA from Config.
	ServingCert *tls.Certificate
	ClientCA    *x509.CertPool
	// CNIBinDir holds the CNI plugins (Debian installs them in
	// /usr/lib/cni).
	CNIBinDir string
	// Bridge is the host bridge pods attach to; orca0 when empty.
	Bridge string
	// PauseBinary is the pause program for the sandbox image; found next
	// to the executable when empty.
	PauseBinary string
	// RegistryConfigDir holds containerd's per-registry host files
	// (REGISTRY/hosts.toml), which set mirrors and trust for pulls.
	RegistryConfigDir string
	// StatsInterval is how often the kubelet samples the node's, pods'
	// and containers' resource usage (upstream's housekeeping interval):
	// 10 s when 0; never when negative, which leaves /stats/summary and
	// the resource metrics empty (for measuring what sampling costs).
	StatsInterval time.Duration
	Log           *slog.Logger
	// Ready, when set, is called once the kubelet serves.
	Ready func()
}

// DefaultAPIServerLBPort is where a joining node's load balancer over the
// API servers listens on 127.0.0.1, as k3s's agent.
const DefaultAPIServerLBPort = 6444

// Dirs are the agent's directories under the data directory.
type Dirs struct {
	Root, Containerd, Pods, Logs, CNIConf, CNIState, TLS string
	// PluginsRegistry is where CSI drivers put their registration
	// sockets, Plugins where they keep their own (upstream's
	// /var/lib/kubelet/plugins_registry and plugins).
	PluginsRegistry, Plugins string
}

// DirsOf lays out dataDir/agent.
func DirsOf(dataDir string) Dirs {
	root := filepath.Join(dataDir, "agent")
	return Dirs{
		Root:       root,
		Containerd: filepath.Join(root, "containerd"),
		Pods:       filepath.Join(root, "pods"),
		Logs:       filepath.Join(root, "logs"),
		CNIConf:    filepath.Join(root, "cni", "net.d"),
		CNIState:   filepath.Join(root, "cni", "state"),
		TLS:        filepath.Join(root, "tls"),

		PluginsRegistry: filepath.Join(root, "plugins_registry"),
		Plugins:         filepath.Join(root, "plugins"),
	}
}

// The agent's components stop in tiers, the first first, each once the
// one before has returned, as the server stops its API clients before
// its HTTP server: what acts stops before what it acts through.
const (
	// tierNode is the loops that act on pods and on the node: the
	// kubelet, node status, volumes, the pod network's routes, the
	// service proxy, network policies, the ingress, stats and the
	// pressure managers.
	tierNode = iota
	// tierServing is what those loops use or are reached through: the
	// kubelet's HTTPS and healthz servers, the event recorder (flushed
	// on the way out), the serving certificate's renewal and
	// containerd's supervision.
	tierServing
	// tierConnection is the node's way to the API servers, which all of
	// the above talk through: the credentials' renewal and the load
	// balancer.
	tierConnection
	tiers
)

// Run runs the agent until ctx ends. A component that fails stops the
// agent, and Run returns its error.
func Run(ctx context.Context, o Options) error {
	o, err := withDefaults(o)
	if err != nil {
		return err
	}
	log := o.Log.With("component", "agent")
	n := &node{o: o, log: log, dirs: DirsOf(o.DataDir)}
	if err := n.makeDirs(); err != nil {
		return err
	}
	n.g = supervisor.New(ctx, tiers, 0, log)
	err = n.start(n.g.Context())
	if err != nil {
		n.g.Stop()
	}
	werr := n.g.Wait()
	n.close()
	switch {
	case werr != nil:
		// A failed component is also why start-up, if still going, gave up.
		return werr
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		// Stopped while starting: a stop, not a failure.
		return nil
	}
	return err
}

// node is one run of the agent, filled in by the steps of start.
type node struct {
	o    Options
	log  *slog.Logger
	dirs Dirs
	g    *supervisor.Group
	// closers release what the components used, once all have stopped,
	// the last added first.
	closers []func()

	lb     *serverlb.LB
	joined *join.Credentials
	nodeIP string

	socket         string
	rt             *cri.Client
	runtimeVersion string

	client, proxyClient kubernetes.Interface
	recorder            record.EventRecorder
	reg                 *prometheus.Registry

	host        nodestatus.Machine
	allocatable v1.ResourceList
	csiDrivers  *csi.Registry
	pressure    *pressure
	reporter    *nodestatus.Reporter
	policies    *netpol.Enforcer
	k           *kubelet.Kubelet
}

// start brings the node up step by step, starting each component in
// the group as soon as what it needs is there; ctx ends when the group
// starts stopping.
func (n *node) start(ctx context.Context) error {
	for _, step := range []func(context.Context) error{
		n.connect,
		n.findNodeIP,
		n.startRuntime,
		n.makeClients,
		n.buildKubelet,
		n.serveKubelet,
		n.startNodeLoops,
		n.startPodNetwork,
		n.startPodLoops,
	} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	n.log.Info("agent running", "node", n.o.NodeName, "nodeIP", n.nodeIP, "runtime", n.runtimeVersion, "kubeletPort", n.o.KubeletPort)
	if n.o.Ready != nil {
		n.o.Ready()
	}
	return nil
}

func (n *node) atExit(f func()) { n.closers = append(n.closers, f) }

func (n *node) close() {
	for i := len(n.closers) - 1; i >= 0; i-- {
		n.closers[i]()
	}
}

// withDefaults fills in what the options leave out.
func withDefaults(o Options) (Options, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.NodeName == "" {
		h, err := os.Hostname()
		if err != nil {
			return o, fmt.Errorf("agent: node name: %w", err)
		}
		o.NodeName = h
	}
	if o.KubeletPort == 0 {
		o.KubeletPort = 10250
	}
	if o.MaxPods == 0 {
		o.MaxPods = 110
	}
	if o.ClusterCIDR == "" {
		o.ClusterCIDR = "10.42.0.0/16"
	}
	if o.ServiceCIDR == "" {
		o.ServiceCIDR = "10.43.0.0/16"
	}
	if o.CNIBinDir == "" {
		o.CNIBinDir = "/usr/lib/cni"
	}
	if o.Bridge == "" {
		o.Bridge = "orca0"
	}
	return o, nil
}

func (n *node) makeDirs() error {
	d := n.dirs
	for _, dir := range []string{d.Root, d.Pods, d.Logs, d.CNIConf, d.CNIState, d.TLS} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	}
	return nil
}

// connect gets the node its credentials: those given, or its own from a
// join through the load balancer over the API servers, which outlives
// every other component since they all talk through it.
func (n *node) connect(ctx context.Context) error {
	o := &n.o
	if o.Config == nil && o.Join != nil {
		j := *o.Join
		j.NodeName, j.Log = o.NodeName, n.log
		j.Ingress = !o.DisableIngress
		if j.Dir == "" {
			j.Dir = filepath.Join(n.dirs.Root, "pki")
		}
		if o.APIServerLBPort >= 0 {
			lb, err := newServerLB(j.Server, o.APIServerLBPort, n.log)
			if err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			n.lb = lb
			n.g.Go(tierConnection, "API server load balancer", lb.Run)
			// Every client of the node, from the join on, goes through it:
			// the API servers' certificates name 127.0.0.1.
			j.Server = lb.URL()
		}
		creds, err := join.Join(ctx, j)
		if err != nil {
			if n.lb != nil {
				return fmt.Errorf("agent: join %s through the API server load balancer at %s: %w", o.Join.Server, n.lb.Addr(), err)
			}
			return fmt.Errorf("agent: join: %w", err)
		}
		o.Config = creds.Config
		if o.ProxyConfig == nil {
			o.ProxyConfig = creds.ProxyConfig
		}
		if o.IngressConfig == nil {
			o.IngressConfig = creds.IngressConfig
		}
		for _, m := range creds.Managers {
			m.Start()
			n.g.OnStop(tierConnection, "certificate renewal", m.Stop)
		}
		n.joined = creds
	}
	if o.Config == nil {
		return errors.New("agent: no credentials for the API server: give a kubeconfig, or a server and a join token")
	}
	return nil
}

func (n *node) findNodeIP(context.Context) error {
	n.nodeIP = n.o.NodeIP
	if n.nodeIP == "" {
		ip, err := nodeaddr.Default()
		if err != nil {
			return fmt.Errorf("agent: find node IP (set --node-ip): %w", err)
		}
		n.nodeIP = ip
	}
	return nil
}

// startRuntime reaches the container runtime (the agent's own
// containerd unless one is named) and imports the pause image.
func (n *node) startRuntime(ctx context.Context) error {
	n.socket = n.o.ContainerRuntimeEndpoint
	if n.socket == "" {
		sup := containerd.New(containerd.Config{
			Dir: n.dirs.Containerd, SandboxImage: imagebuild.PauseRef,
			CNIBinDir: n.o.CNIBinDir, CNIConfDir: n.dirs.CNIConf, RegistryConfigDir: n.o.RegistryConfigDir, Log: n.log,
		})
		if err := sup.Start(ctx); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		n.atExit(func() { _ = sup.Stop() })
		// Expected to come and go: containerd is restarted whenever it
		// stops answering, and the agent keeps running meanwhile.
		n.g.Go(tierServing, "containerd supervision", func(ctx context.Context) error {
			sup.Watch(ctx)
			return nil
		})
		n.socket = containerd.SocketPath(n.dirs.Containerd)
	}
	rt, err := cri.Dial(n.socket)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	n.rt = rt
	n.atExit(func() { _ = rt.Close() })
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	ver, err := rt.WaitReady(wctx)
	cancel()
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	n.runtimeVersion = ver.RuntimeName + "://" + ver.RuntimeVersion
	if err := ensurePause(ctx, n.socket, n.o.PauseBinary); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}

// makeClients makes the node's and the service proxy's API clients and
// the kubelet's event recorder.
func (n *node) makeClients(ctx context.Context) error {
	// Upstream's kubelet rates unless the caller chose: client-go's default
	// of 5 requests a second holds back every pod start and status update.
	cfg := rest.CopyConfig(n.o.Config)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("agent: client: %w", err)
	}
	n.client, n.proxyClient = client, client
	if n.o.ProxyConfig != nil {
		if n.proxyClient, err = kubernetes.NewForConfig(n.o.ProxyConfig); err != nil {
			return fmt.Errorf("agent: service proxy client: %w", err)
		}
	}
	if lb := n.lb; lb != nil {
		// The service proxy's identity reads EndpointSlices; the node's
		// own may not.
		n.g.Go(tierConnection, "API server endpoints", func(ctx context.Context) error {
			serverlb.WatchEndpoints(ctx, n.proxyClient, lb)
			return nil
		})
	}
	// Events get a client of their own, as upstream's kubelet
	// (eventRecordQPS 50, eventBurst 100): the three events of each
	// container start must not queue the pods' status writes and token
	// requests behind them.
	ecfg := rest.CopyConfig(n.o.Config)
	ecfg.QPS, ecfg.Burst = 50, 100
	eventClient, err := kubernetes.NewForConfig(ecfg)
	if err != nil {
		return fmt.Errorf("agent: event client: %w", err)
	}
	// The recorder outlives the loops that record, so that what they say
	// on the way out is sent.
	broadcaster := record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: eventClient.CoreV1().Events("")})
	n.g.OnStop(tierServing, "event recorder", broadcaster.Shutdown)
	n.recorder = broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: "kubelet", Host: n.o.NodeName})
	return nil
}

// buildKubelet puts the kubelet together with what it manages the node
// with: volumes, cgroups, the pressure managers, node status and the
// network policies.
func (n *node) buildKubelet(context.Context) error {
	o, d := n.o, n.dirs
	n.host = nodestatus.ObserveHost(o.DataDir)
	spec := nodestatus.Spec{
		Name: o.NodeName, Labels: nodeLabels(o), Taints: o.Taints,
		Annotations: map[string]string{localpath.DirAnnotation: localpath.Root(o.DataDir)},
		Addresses:   []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: n.nodeIP}, {Type: v1.NodeHostName, Address: o.NodeName}},
		KubeletPort: int32(o.KubeletPort), MaxPods: o.MaxPods, Reserved: o.Reserved, PodCIDR: o.PodCIDR,
		Eviction: o.Eviction,
	}
	_, n.allocatable = nodestatus.Capacity(n.host, spec)
	n.csiDrivers = &csi.Registry{Dir: d.PluginsRegistry, Node: o.NodeName, Client: n.client, Log: n.log}
	var podVolumes *volumes
	podVolumes = newVolumes(d.Pods, localpath.Root(o.DataDir), n.client, newImageVolumes(n.rt, n.client, n.recorder),
		csiVolumes{registry: n.csiDrivers, client: n.client, node: o.NodeName, staging: filepath.Join(d.Plugins, "kubernetes.io", "csi"),
			inUse: func() []v1.UniqueVolumeName { return podVolumes.InUse() }}, n.allocatable, n.log)
	cg := &cgroups.Manager{Mount: cgroupMount}
	n.pressure = newPressure(o, d, n.rt, n.recorder, n.log)
	n.reporter = &nodestatus.Reporter{
		Client: n.client, Spec: spec, Log: n.log,
		Observe: func(ctx context.Context) nodestatus.Machine {
			m := nodestatus.ObserveHost(o.DataDir)
			m.Pressure, _ = n.pressure.evictions.Pressure()
			m.RuntimeVersion = n.runtimeVersion
			m.KubeletVersion = version.KubernetesGitVersion()
			observeRuntime(ctx, n.rt, &m)
			m.VolumesInUse = podVolumes.InUse()
			return m
		},
	}

	n.reg = prometheus.NewRegistry()
	n.reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	// Network policies are enforced under the service proxy's identity,
	// the node's network one, which reads every pod and namespace.
	var networkReady func(context.Context, *v1.Pod, string) error
	if !o.DisableNetworkPolicy {
		var err error
		if n.policies, err = netpol.New(netpol.Options{Client: n.proxyClient, NodeName: o.NodeName, DNS: o.ClusterDNS, Metrics: n.reg, Log: n.log}); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		networkReady = n.policies.Admit
	}
	n.k = kubelet.New(kubelet.Config{
		NodeName: o.NodeName, Client: n.client, Runtime: n.rt,
		Volumes: podVolumes,
		PodDir:  d.Pods, LogDir: d.Logs, HostIPs: []string{n.nodeIP},
		ClusterDNS: o.ClusterDNS, ClusterDomain: o.ClusterDomain, ResolvConf: "/etc/resolv.conf",
		AllowPrivileged: o.AllowPrivileged, NodeMemory: n.host.MemoryBytes, Allocatable: n.allocatable,
		Log: n.log, Recorder: n.recorder, Metrics: n.reg, PodNetworkReady: networkReady,
		Cgroups: cg, Admit: n.pressure.evictions.Admit,
	})
	return nil
}

// serveKubelet starts the stats collector and the kubelet's HTTPS
// server (metrics, stats, logs, exec and the rest), and the node-local
// healthz server.
func (n *node) serveKubelet(context.Context) error {
	o := n.o
	cert, ca := o.ServingCert, o.ClientCA
	if cert == nil || ca == nil {
		var err error
		cert, ca, err = selfServing(n.dirs.TLS, o.NodeName, n.nodeIP, o.Config)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(n.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
	var usage kubeletserver.Stats = noStats{}
	var collector *stats.Collector
	if o.StatsInterval >= 0 {
		collector = stats.New(stats.Config{
			NodeName: o.NodeName, Pods: n.k.StatsPods, Runtime: n.rt, Interval: o.StatsInterval,
			RootDir: o.DataDir, RuntimeDir: n.dirs.Containerd, SandboxImage: imagebuild.PauseRef, Log: n.log,
		})
		n.g.Go(tierNode, "stats", func(ctx context.Context) error {
			collector.Run(ctx)
			return nil
		})
		usage = collector
	}
	n.pressure.attach(n.k, collector)
	kubeletserver.RegisterStats(mux, usage)
	mux.Handle("/", kubeletserver.New(kubelet.Streaming{K: n.k}, n.log))
	// Every path, as upstream's kubelet with webhook authentication and
	// authorization: the node's own identity asks the API server about
	// tokens and rights.
	handler := kubeletserver.WithAuth(mux, kubeletserver.Auth{
		Authenticator: delegating.NewAuthenticator(n.client.AuthenticationV1().TokenReviews()),
		Authorizer:    delegating.NewAuthorizer(n.client.AuthorizationV1().SubjectAccessReviews()),
		NodeName:      o.NodeName, Log: n.log,
	})
	addr := net.JoinHostPort(o.BindAddress, strconv.Itoa(o.KubeletPort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("agent: kubelet server: %w", err)
	}
	tlsConfig := kubeletserver.TLSConfig(ca, *cert)
	if n.joined != nil && o.ServingCert == nil {
		// A joined node asks the cluster for a serving certificate, which
		// callers that verify kubelets (metrics-server) accept; its own
		// certificate serves until that one is issued.
		serving, err := n.joined.Serving([]net.IP{net.ParseIP(n.nodeIP)})
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("agent: %w", err)
		}
		serving.Start()
		n.g.OnStop(tierServing, "serving certificate renewal", serving.Stop)
		fallback := cert
		tlsConfig.Certificates = nil
		tlsConfig.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if c := serving.Current(); c != nil {
				return c, nil
			}
			return fallback, nil
		}
	}
	srv := &http.Server{Handler: handler, TLSConfig: tlsConfig, ReadHeaderTimeout: 10 * time.Second}
	// A server that stops serving fails the agent, as upstream's kubelet
	// exits when its server does.
	n.g.Go(tierServing, "kubelet server", func(ctx context.Context) error {
		stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
		defer stop()
		if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	if o.HealthzPort > 0 {
		// Expected to come and go: a port in use is retried, as
		// upstream's kubelet does.
		n.g.Go(tierServing, "kubelet healthz server", func(ctx context.Context) error {
			serveHealthz(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(o.HealthzPort)), n.log)
			return nil
		})
	}
	return nil
}

// startNodeLoops starts node status, CSI driver registration and the
// local-path volumes' directories.
func (n *node) startNodeLoops(context.Context) error {
	n.g.Go(tierNode, "node status", n.reporter.Run)
	if err := os.MkdirAll(n.dirs.Plugins, 0o750); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	n.g.Go(tierNode, "CSI drivers", n.csiDrivers.Run)
	localVolumes, err := localpath.NewNode(n.client, n.o.NodeName, localpath.Root(n.o.DataDir), n.log)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	n.g.Go(tierNode, "local-path volumes", localVolumes.Run)
	return nil
}

// startPodNetwork sets up the pod network: the node's range (given, or
// assigned by the cluster), routes to the other nodes' ranges, and the
// unreachable routes, all before the first pod starts.
func (n *node) startPodNetwork(ctx context.Context) error {
	o := n.o
	podCIDR, err := waitPodCIDR(ctx, n.client, o.NodeName, o.PodCIDR, n.log)
	if err != nil {
		return err
	}
	if err := writeCNIConfig(n.dirs, o.CNIBinDir, o.Bridge, podCIDR); err != nil {
		return err
	}
	if err := podroutes.EnsureMasquerade(ctx, o.ClusterCIDR); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	routesReady := make(chan struct{})
	routes := &podroutes.Manager{Client: n.proxyClient, Node: o.NodeName, Bridge: o.Bridge, ClusterCIDR: o.ClusterCIDR, ServiceCIDR: o.ServiceCIDR, Log: n.log}
	n.g.Go(tierNode, "pod routes", func(ctx context.Context) error { return routes.Run(ctx, routesReady) })
	select {
	case <-routesReady:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startPodLoops starts what needs the pod network: network policies,
// the service proxy (once service addresses route somewhere to be
// rewritten), the ingress, the pressure managers and the kubelet.
func (n *node) startPodLoops(context.Context) error {
	o := n.o
	if n.policies != nil {
		n.g.Go(tierNode, "network policies", n.policies.Run)
	}
	n.g.Go(tierNode, "service proxy", func(ctx context.Context) error {
		return proxy.Run(ctx, proxy.Options{Client: n.proxyClient, NodeName: o.NodeName, NodeIP: n.nodeIP, ClusterCIDR: o.ClusterCIDR, ServiceCIDR: o.ServiceCIDR, Metrics: n.reg, Log: n.log})
	})
	n.g.Go(tierNode, "ingress", func(ctx context.Context) error { return runIngress(ctx, o, n.client, n.reg, n.log) })
	n.pressure.start(n.g, tierNode)
	n.g.Go(tierNode, "kubelet", n.k.Run)
	return nil
}

// newServerLB listens for the node's load balancer over the API servers
// on 127.0.0.1:port (DefaultAPIServerLBPort when 0), server (the URL the
// node was given) its fallback.
func newServerLB(server string, port int, log *slog.Logger) (*serverlb.LB, error) {
	def, err := serverlb.ServerAddr(server)
	if err != nil {
		return nil, err
	}
	if port == 0 {
		port = DefaultAPIServerLBPort
	}
	lb, err := serverlb.New(serverlb.Config{ListenAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Default: def, Log: log})
	if err != nil {
		return nil, fmt.Errorf("%w (--apiserver-lb-port chooses another port, -1 none)", err)
	}
	return lb, nil
}

// serveHealthz serves the node-local health endpoint until ctx ends. A
// port in use is not fatal: as upstream's kubelet, the agent logs it and
// tries again.
func serveHealthz(ctx context.Context, addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
			stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
			err = srv.Serve(ln)
			stop()
		}
		if ctx.Err() != nil {
			return
		}
		log.Error("kubelet healthz server", "addr", addr, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
}

func nodeLabels(o Options) map[string]string {
	l := map[string]string{
		v1.LabelHostname: o.NodeName, v1.LabelOSStable: "linux", v1.LabelArchStable: goarch(),
		"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": goarch(),
	}
	for k, v := range o.Labels {
		l[k] = v
	}
	return l
}

// waitPodCIDR returns the node's pod range: the one given, or the one the
// cluster's node IPAM controller writes into the Node.
func waitPodCIDR(ctx context.Context, client kubernetes.Interface, node, given string, log *slog.Logger) (string, error) {
	if given != "" {
		return given, nil
	}
	start := time.Now()
	warned := false
	for {
		n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err == nil && n.Spec.PodCIDR != "" {
			log.Info("pod CIDR assigned", "podCIDR", n.Spec.PodCIDR)
			return n.Spec.PodCIDR, nil
		}
		if !warned && time.Since(start) > 10*time.Second {
			log.Warn("waiting for the cluster to assign this node a pod CIDR (is the node IPAM controller running? --pod-cidr sets one by hand)")
			warned = true
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// runtimeStatus is the part of the CRI that node status reports.
type runtimeStatus interface {
	Status(ctx context.Context, in *runtimeapi.StatusRequest, opts ...grpc.CallOption) (*runtimeapi.StatusResponse, error)
	ListImages(ctx context.Context, in *runtimeapi.ListImagesRequest, opts ...grpc.CallOption) (*runtimeapi.ListImagesResponse, error)
}

// observeRuntime fills the runtime's readiness and the node's images.
func observeRuntime(ctx context.Context, rt runtimeStatus, m *nodestatus.Machine) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := rt.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		m.RuntimeMessage = "container runtime is down: " + err.Error()
		return
	}
	for _, c := range st.Status.GetConditions() {
		switch c.Type {
		case runtimeapi.RuntimeReady:
			m.RuntimeReady = c.Status
			if !c.Status {
				m.RuntimeMessage = "container runtime status check may not have completed yet: " + c.Reason + ": " + c.Message
			}
		case runtimeapi.NetworkReady:
			m.NetworkReady = c.Status
			if !c.Status {
				m.NetworkMessage = fmt.Sprintf("NetworkReady=false reason:%s message:%s", c.Reason, c.Message)
			}
		}
	}
	imgs, err := rt.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err == nil {
		for _, img := range imgs.Images {
			names := append(append([]string{}, img.RepoDigests...), img.RepoTags...)
			if len(names) == 0 {
				continue
			}
			m.Images = append(m.Images, v1.ContainerImage{Names: names, SizeBytes: int64(img.Size)})
			if len(m.Images) == 50 {
				break
			}
		}
	}
}

// ensurePause imports Orca's pause image into the runtime if missing.
func ensurePause(ctx context.Context, socket, binary string) error {
	if binary == "" {
		b, err := imagebuild.FindPauseBinary()
		if err != nil {
			return fmt.Errorf("pause image: %w (build it with `make build`)", err)
		}
		binary = b
	}
	data, err := os.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("pause image: %w", err)
	}
	if err := images.EnsureImported(ctx, socket, imagebuild.Pause(data)); err != nil {
		return fmt.Errorf("pause image: %w", err)
	}
	return nil
}

// selfServing issues the kubelet's serving certificate from a CA of the
// agent's own (the API server does not verify kubelet certificates, as
// upstream's default) and trusts the cluster CA for clients.
func selfServing(dir, node, ip string, cfg *rest.Config) (*tls.Certificate, *x509.CertPool, error) {
	ca, err := pki.LoadOrCreateCA(dir, "kubelet-ca", "orca-kubelet-ca@"+node)
	if err != nil {
		return nil, nil, fmt.Errorf("kubelet CA: %w", err)
	}
	leaf, err := pki.LoadOrIssue(dir, "kubelet", ca, pki.LeafSpec{CommonName: node, DNSNames: []string{node, "localhost"}, IPs: []net.IP{net.ParseIP(ip), net.IPv4(127, 0, 0, 1)}, Server: true})
	if err != nil {
		return nil, nil, fmt.Errorf("kubelet serving certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(leaf.CertPEM, leaf.KeyPEM)
	if err != nil {
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	caPEM := cfg.TLSClientConfig.CAData
	if len(caPEM) == 0 && cfg.TLSClientConfig.CAFile != "" {
		if caPEM, err = os.ReadFile(cfg.TLSClientConfig.CAFile); err != nil {
			return nil, nil, fmt.Errorf("cluster CA: %w", err)
		}
	}
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, nil, errors.New("no cluster CA in the kubeconfig: the kubelet could not authenticate the API server")
	}
	return &cert, pool, nil
}

// noStats stands in for the collector when sampling is off.
type noStats struct{}

func (noStats) Latest() *stats.Snapshot { return nil }
