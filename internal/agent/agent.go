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
	"sync"
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

// Run runs the agent until ctx ends.
func Run(ctx context.Context, o Options) error {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	log := o.Log.With("component", "agent")
	if o.NodeName == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("agent: node name: %w", err)
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
	d := DirsOf(o.DataDir)
	for _, dir := range []string{d.Root, d.Pods, d.Logs, d.CNIConf, d.CNIState, d.TLS} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	}
	var joined *join.Credentials
	// The load balancer outlives every other part, which talks through it.
	var lb *serverlb.LB
	var lbTasks sync.WaitGroup
	lbCtx, stopLB := context.WithCancel(ctx)
	defer func() { stopLB(); lbTasks.Wait() }()
	if o.Config == nil && o.Join != nil {
		j := *o.Join
		j.NodeName, j.Log = o.NodeName, log
		j.Ingress = !o.DisableIngress
		if j.Dir == "" {
			j.Dir = filepath.Join(d.Root, "pki")
		}
		if o.APIServerLBPort >= 0 {
			var err error
			if lb, err = newServerLB(j.Server, o.APIServerLBPort, log); err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			lbTasks.Go(func() {
				if err := lb.Run(lbCtx); err != nil {
					log.Error("API server load balancer", "err", err)
				}
			})
			// Every client of the node, from the join on, goes through it:
			// the API servers' certificates name 127.0.0.1.
			j.Server = lb.URL()
		}
		creds, err := join.Join(ctx, j)
		if err != nil {
			if lb != nil {
				return fmt.Errorf("agent: join %s through the API server load balancer at %s: %w", o.Join.Server, lb.Addr(), err)
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
			defer m.Stop()
		}
		joined = creds
	}
	if o.Config == nil {
		return errors.New("agent: no credentials for the API server: give a kubeconfig, or a server and a join token")
	}
	nodeIP := o.NodeIP
	if nodeIP == "" {
		ip, err := nodeaddr.Default()
		if err != nil {
			return fmt.Errorf("agent: find node IP (set --node-ip): %w", err)
		}
		nodeIP = ip
	}

	if o.Bridge == "" {
		o.Bridge = "orca0"
	}
	socket := o.ContainerRuntimeEndpoint
	if socket == "" {
		sup := containerd.New(containerd.Config{
			Dir: d.Containerd, SandboxImage: imagebuild.PauseRef,
			CNIBinDir: o.CNIBinDir, CNIConfDir: d.CNIConf, RegistryConfigDir: o.RegistryConfigDir, Log: log,
		})
		if err := sup.Start(ctx); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		go sup.Watch(ctx)
		defer sup.Stop()
		socket = containerd.SocketPath(d.Containerd)
	}
	rt, err := cri.Dial(socket)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	defer rt.Close()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	ver, err := rt.WaitReady(wctx)
	cancel()
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if err := ensurePause(ctx, socket, o.PauseBinary); err != nil {
		return fmt.Errorf("agent: %w", err)
	}

	// Upstream's kubelet rates unless the caller chose: client-go's default
	// of 5 requests a second holds back every pod start and status update.
	cfg := rest.CopyConfig(o.Config)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("agent: client: %w", err)
	}
	proxyClient := client
	if o.ProxyConfig != nil {
		if proxyClient, err = kubernetes.NewForConfig(o.ProxyConfig); err != nil {
			return fmt.Errorf("agent: service proxy client: %w", err)
		}
	}
	if lb != nil {
		// The service proxy's identity reads EndpointSlices; the node's
		// own may not.
		lbTasks.Go(func() { serverlb.WatchEndpoints(lbCtx, proxyClient, lb) })
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: "kubelet", Host: o.NodeName})

	host := nodestatus.ObserveHost(o.DataDir)
	spec := nodestatus.Spec{
		Name: o.NodeName, Labels: nodeLabels(o), Taints: o.Taints,
		Annotations: map[string]string{localpath.DirAnnotation: localpath.Root(o.DataDir)},
		Addresses:   []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: nodeIP}, {Type: v1.NodeHostName, Address: o.NodeName}},
		KubeletPort: int32(o.KubeletPort), MaxPods: o.MaxPods, Reserved: o.Reserved, PodCIDR: o.PodCIDR,
		Eviction: o.Eviction,
	}
	_, allocatable := nodestatus.Capacity(host, spec)
	runtimeVersion := ver.RuntimeName + "://" + ver.RuntimeVersion
	csiDrivers := &csi.Registry{Dir: d.PluginsRegistry, Node: o.NodeName, Client: client, Log: log}
	var podVolumes *volumes
	podVolumes = newVolumes(d.Pods, localpath.Root(o.DataDir), client, newImageVolumes(rt, client, recorder),
		csiVolumes{registry: csiDrivers, client: client, node: o.NodeName, staging: filepath.Join(d.Plugins, "kubernetes.io", "csi"),
			inUse: func() []v1.UniqueVolumeName { return podVolumes.InUse() }}, allocatable, log)
	cg := &cgroups.Manager{Mount: cgroupMount}
	underPressure := newPressure(o, d, rt, recorder, log)
	reporter := &nodestatus.Reporter{
		Client: client, Spec: spec, Log: log,
		Observe: func(ctx context.Context) nodestatus.Machine {
			m := nodestatus.ObserveHost(o.DataDir)
			m.Pressure, _ = underPressure.evictions.Pressure()
			m.RuntimeVersion = runtimeVersion
			m.KubeletVersion = version.KubernetesGitVersion()
			observeRuntime(ctx, rt, &m)
			m.VolumesInUse = podVolumes.InUse()
			return m
		},
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	// Network policies are enforced under the service proxy's identity,
	// the node's network one, which reads every pod and namespace.
	var policies *netpol.Enforcer
	var networkReady func(context.Context, *v1.Pod, string) error
	if !o.DisableNetworkPolicy {
		if policies, err = netpol.New(netpol.Options{Client: proxyClient, NodeName: o.NodeName, DNS: o.ClusterDNS, Metrics: reg, Log: log}); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		networkReady = policies.Admit
	}
	k := kubelet.New(kubelet.Config{
		NodeName: o.NodeName, Client: client, Runtime: rt,
		Volumes: podVolumes,
		PodDir:  d.Pods, LogDir: d.Logs, HostIPs: []string{nodeIP},
		ClusterDNS: o.ClusterDNS, ClusterDomain: o.ClusterDomain, ResolvConf: "/etc/resolv.conf",
		AllowPrivileged: o.AllowPrivileged, NodeMemory: host.MemoryBytes, Allocatable: allocatable,
		Log: log, Recorder: recorder, Metrics: reg, PodNetworkReady: networkReady,
		Cgroups: cg, Admit: underPressure.evictions.Admit,
	})

	cert, ca := o.ServingCert, o.ClientCA
	if cert == nil || ca == nil {
		cert, ca, err = selfServing(d.TLS, o.NodeName, nodeIP, o.Config)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
	var usage kubeletserver.Stats = noStats{}
	var collector *stats.Collector
	if o.StatsInterval >= 0 {
		collector = stats.New(stats.Config{
			NodeName: o.NodeName, Pods: k.StatsPods, Runtime: rt, Interval: o.StatsInterval,
			RootDir: o.DataDir, RuntimeDir: d.Containerd, SandboxImage: imagebuild.PauseRef, Log: log,
		})
		go collector.Run(ctx)
		usage = collector
	}
	underPressure.attach(k, collector)
	kubeletserver.RegisterStats(mux, usage)
	mux.Handle("/", kubeletserver.New(kubelet.Streaming{K: k}, log))
	// Every path, as upstream's kubelet with webhook authentication and
	// authorization: the node's own identity asks the API server about
	// tokens and rights.
	handler := kubeletserver.WithAuth(mux, kubeletserver.Auth{
		Authenticator: delegating.NewAuthenticator(client.AuthenticationV1().TokenReviews()),
		Authorizer:    delegating.NewAuthorizer(client.AuthorizationV1().SubjectAccessReviews()),
		NodeName:      o.NodeName, Log: log,
	})
	addr := net.JoinHostPort(o.BindAddress, strconv.Itoa(o.KubeletPort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("agent: kubelet server: %w", err)
	}
	tlsConfig := kubeletserver.TLSConfig(ca, *cert)
	if joined != nil && o.ServingCert == nil {
		// A joined node asks the cluster for a serving certificate, which
		// callers that verify kubelets (metrics-server) accept; its own
		// certificate serves until that one is issued.
		serving, err := joined.Serving([]net.IP{net.ParseIP(nodeIP)})
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		serving.Start()
		defer serving.Stop()
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
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("kubelet server", "err", err)
		}
	}()
	defer srv.Close()
	if o.HealthzPort > 0 {
		go serveHealthz(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(o.HealthzPort)), log)
	}

	go func() {
		if err := reporter.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("node status", "err", err)
		}
	}()
	if err := os.MkdirAll(d.Plugins, 0o750); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	go func() {
		if err := csiDrivers.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("csi drivers", "err", err)
		}
	}()
	localVolumes, err := localpath.NewNode(client, o.NodeName, localpath.Root(o.DataDir), log)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	go func() {
		if err := localVolumes.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("local-path volumes", "err", err)
		}
	}()
	// The pod network: the node's range (given, or assigned by the
	// cluster), routes to the other nodes' ranges, and the unreachable
	// routes, all before the first pod starts.
	podCIDR, err := waitPodCIDR(ctx, client, o.NodeName, o.PodCIDR, log)
	if err != nil {
		return err
	}
	if err := writeCNIConfig(d, o.CNIBinDir, o.Bridge, podCIDR); err != nil {
		return err
	}
	if err := podroutes.EnsureMasquerade(ctx, o.ClusterCIDR); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	routesReady := make(chan struct{})
	routes := &podroutes.Manager{Client: proxyClient, Node: o.NodeName, Bridge: o.Bridge, ClusterCIDR: o.ClusterCIDR, ServiceCIDR: o.ServiceCIDR, Log: log}
	go func() {
		if err := routes.Run(ctx, routesReady); err != nil && ctx.Err() == nil {
			log.Error("pod routes", "err", err)
		}
	}()
	select {
	case <-routesReady:
	case <-ctx.Done():
		return nil
	}
	if policies != nil {
		go func() {
			if err := policies.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("network policies", "err", err)
			}
		}()
	}
	// The service proxy, once service addresses route somewhere to be
	// rewritten.
	go func() {
		err := proxy.Run(ctx, proxy.Options{Client: proxyClient, NodeName: o.NodeName, NodeIP: nodeIP, ClusterCIDR: o.ClusterCIDR, ServiceCIDR: o.ServiceCIDR, Metrics: reg, Log: log})
		if err != nil && ctx.Err() == nil {
			log.Error("service proxy", "err", err)
		}
	}()
	go runIngress(ctx, o, client, reg, log)
	underPressure.run(ctx)
	log.Info("agent running", "node", o.NodeName, "nodeIP", nodeIP, "runtime", runtimeVersion, "kubeletPort", o.KubeletPort)
	if o.Ready != nil {
		o.Ready()
	}
	return k.Run(ctx)
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
