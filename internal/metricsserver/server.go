// Package metricsserver is metrics-server inside the API server's
// process: every resolution period (15 s, as metrics-server's default) it
// scrapes each node's kubelet /metrics/resource with the API server's
// kubelet client credentials, keeps the last two points of every node and
// container (Store), and makes metrics.k8s.io's NodeMetrics and
// PodMetrics from them when they are read: CPU as the rate between the
// two points, memory as the last working set, with metrics-server's
// timestamp and window, and nothing for a node or pod without two points.
package metricsserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/orca-project/orca/internal/nodekind"
)

// DefaultResolution is metrics-server's default --metric-resolution.
const DefaultResolution = 15 * time.Second

// Config wires a Server.
type Config struct {
	// KubeletTLS is the client certificate the kubelets are scraped
	// with. Their serving certificates are not verified unless RootCAs is
	// set (metrics-server's --kubelet-insecure-tls, as the API server
	// itself reaches kubelets).
	KubeletTLS *tls.Config
	// Resolution is the scrape period; DefaultResolution when 0.
	Resolution time.Duration
	Log        *slog.Logger
}

// Server scrapes kubelets and serves what it keeps.
type Server struct {
	cfg    Config
	log    *slog.Logger
	client *http.Client

	mu    sync.Mutex
	store Store
	nodes corelisters.NodeLister
	pods  corelisters.PodLister
}

// New returns a Server; Run starts scraping.
func New(cfg Config) *Server {
	if cfg.Resolution == 0 {
		cfg.Resolution = DefaultResolution
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.KubeletTLS != nil {
		tlsConfig = cfg.KubeletTLS.Clone()
	}
	if tlsConfig.RootCAs == nil {
		tlsConfig.InsecureSkipVerify = true
	}
	// metrics-server's scrape timeout: most of a period.
	timeout := cfg.Resolution * 9 / 10
	return &Server{
		cfg: cfg, log: cfg.Log.With("component", "metrics-server"),
		client: &http.Client{Timeout: timeout, Transport: &http.Transport{
			TLSClientConfig: tlsConfig, MaxIdleConnsPerHost: 2, IdleConnTimeout: 2 * cfg.Resolution,
			DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		}},
		store: Store{Resolution: cfg.Resolution},
	}
}

// Run watches nodes and pods through client and scrapes every
// resolution period until ctx ends.
func (s *Server) Run(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	nodes := factory.Core().V1().Nodes()
	pods := factory.Core().V1().Pods()
	// Only the pods' metadata is read: keep no more of them.
	if err := pods.Informer().SetTransform(func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
				Name: p.Name, Namespace: p.Namespace, UID: p.UID, Labels: p.Labels, ResourceVersion: p.ResourceVersion,
			}}, nil
		}
		return obj, nil
	}); err != nil {
		return fmt.Errorf("metrics-server: %w", err)
	}
	nodeLister, podLister := nodes.Lister(), pods.Lister()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), nodes.Informer().HasSynced, pods.Informer().HasSynced) {
		return ctx.Err()
	}
	s.mu.Lock()
	s.nodes, s.pods = nodeLister, podLister
	s.mu.Unlock()
	t := time.NewTicker(s.cfg.Resolution)
	defer t.Stop()
	for {
		s.scrapeAll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// scrapeAll scrapes every node at once and stores the round.
func (s *Server) scrapeAll(ctx context.Context) {
	nodes, err := s.nodes.List(labels.Everything())
	if err != nil {
		s.log.Error("list nodes", "err", err)
		return
	}
	batches := make([]Batch, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		if nodekind.Simulated(n) {
			continue
		}
		wg.Go(func() {
			b, err := s.scrape(ctx, n)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("scrape kubelet", "node", n.Name, "err", err)
				}
				return
			}
			batches[i] = b
		})
	}
	wg.Wait()
	all := newBatch()
	for _, b := range batches {
		for name, p := range b.Nodes {
			all.Nodes[name] = p
		}
		for ref, cs := range b.Pods {
			all.Pods[ref] = cs
		}
	}
	s.mu.Lock()
	s.store.Add(all)
	s.mu.Unlock()
}

func (s *Server) scrape(ctx context.Context, node *corev1.Node) (Batch, error) {
	addr, err := kubeletAddr(node)
	if err != nil {
		return Batch{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics/resource", nil)
	if err != nil {
		return Batch{}, err
	}
	req.Header.Set("Accept", "text/plain")
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return Batch{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return Batch{}, fmt.Errorf("read /metrics/resource of %s: %w", addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		return Batch{}, fmt.Errorf("GET https://%s/metrics/resource: %s", addr, resp.Status)
	}
	return Decode(body, node.Name, start)
}

// kubeletAddr picks the node's kubelet address: its internal IP first,
// as the API server reaches kubelets.
func kubeletAddr(node *corev1.Node) (string, error) {
	for _, t := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP, corev1.NodeHostName} {
		for _, a := range node.Status.Addresses {
			if a.Type == t && a.Address != "" {
				port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
				if port == 0 {
					port = 10250
				}
				return net.JoinHostPort(a.Address, strconv.Itoa(int(port))), nil
			}
		}
	}
	return "", fmt.Errorf("node %s has no address", node.Name)
}

// Sources are the API server's Computed sources of NodeMetrics and
// PodMetrics.
func (s *Server) Sources(nodes, pods schema.GroupVersionResource) map[schema.GroupVersionResource]func(context.Context) []runtime.Object {
	return map[schema.GroupVersionResource]func(context.Context) []runtime.Object{
		nodes: func(context.Context) []runtime.Object { return s.nodeMetrics(time.Now()) },
		pods:  func(context.Context) []runtime.Object { return s.podMetrics(time.Now()) },
	}
}

func (s *Server) nodeMetrics(now time.Time) []runtime.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodes == nil {
		return nil
	}
	nodes, _ := s.nodes.List(labels.Everything())
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	var out []runtime.Object
	for _, n := range nodes {
		u, ok := s.store.Node(n.Name)
		if !ok {
			continue
		}
		out = append(out, &metricsv1beta1.NodeMetrics{
			TypeMeta: metav1.TypeMeta{APIVersion: metricsv1beta1.SchemeGroupVersion.String(), Kind: "NodeMetrics"},
			// As metrics-server: the object is made now.
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, CreationTimestamp: metav1.NewTime(now)},
			Timestamp:  metav1.NewTime(u.Timestamp), Window: metav1.Duration{Duration: u.Window},
			Usage: u.Resources,
		})
	}
	return out
}

func (s *Server) podMetrics(now time.Time) []runtime.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pods == nil {
		return nil
	}
	pods, _ := s.pods.List(labels.Everything())
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].Namespace != pods[j].Namespace {
			return pods[i].Namespace < pods[j].Namespace
		}
		return pods[i].Name < pods[j].Name
	})
	var out []runtime.Object
	for _, p := range pods {
		u, containers, ok := s.store.Pod(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
		if !ok {
			continue
		}
		m := &metricsv1beta1.PodMetrics{
			TypeMeta:   metav1.TypeMeta{APIVersion: metricsv1beta1.SchemeGroupVersion.String(), Kind: "PodMetrics"},
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, CreationTimestamp: metav1.NewTime(now)},
			Timestamp:  metav1.NewTime(u.Timestamp), Window: metav1.Duration{Duration: u.Window},
			Containers: make([]metricsv1beta1.ContainerMetrics, 0, len(containers)),
		}
		sort.Slice(containers, func(i, j int) bool { return containers[i].Name < containers[j].Name })
		for _, c := range containers {
			m.Containers = append(m.Containers, metricsv1beta1.ContainerMetrics{Name: c.Name, Usage: c.Resources})
		}
		out = append(out, m)
	}
	return out
}
