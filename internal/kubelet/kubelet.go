// Package kubelet runs the pods bound to one node through a CRI runtime.
// Each pod has its own worker goroutine running a level-triggered sync:
// compare the pod's spec with what the runtime holds, take the next step
// (sandbox, init containers one by one, containers, restarts with
// back-off, termination), and report the status that results. A relist of
// the runtime every second notices containers that exit, and wakes the
// worker of the pod they belong to.
package kubelet

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/orca-project/orca/internal/kubelet/cgroups"
	"github.com/orca-project/orca/internal/kubelet/prober"
)

// Runtime is the part of the CRI the kubelet drives: what its pod
// workers, relist, resizes, hooks and streaming call. The methods keep the
// generated clients' signatures so that a *cri.Client is a Runtime as it
// is; the kubelet's subpackages (image GC, log rotation, stats, the
// prober) declare their own smaller parts.
type Runtime interface {
	runtimeReader

	RunPodSandbox(ctx context.Context, in *runtimeapi.RunPodSandboxRequest, opts ...grpc.CallOption) (*runtimeapi.RunPodSandboxResponse, error)
	StopPodSandbox(ctx context.Context, in *runtimeapi.StopPodSandboxRequest, opts ...grpc.CallOption) (*runtimeapi.StopPodSandboxResponse, error)
	RemovePodSandbox(ctx context.Context, in *runtimeapi.RemovePodSandboxRequest, opts ...grpc.CallOption) (*runtimeapi.RemovePodSandboxResponse, error)

	CreateContainer(ctx context.Context, in *runtimeapi.CreateContainerRequest, opts ...grpc.CallOption) (*runtimeapi.CreateContainerResponse, error)
	StartContainer(ctx context.Context, in *runtimeapi.StartContainerRequest, opts ...grpc.CallOption) (*runtimeapi.StartContainerResponse, error)
	StopContainer(ctx context.Context, in *runtimeapi.StopContainerRequest, opts ...grpc.CallOption) (*runtimeapi.StopContainerResponse, error)
	RemoveContainer(ctx context.Context, in *runtimeapi.RemoveContainerRequest, opts ...grpc.CallOption) (*runtimeapi.RemoveContainerResponse, error)
	UpdateContainerResources(ctx context.Context, in *runtimeapi.UpdateContainerResourcesRequest, opts ...grpc.CallOption) (*runtimeapi.UpdateContainerResourcesResponse, error)
	ContainerStats(ctx context.Context, in *runtimeapi.ContainerStatsRequest, opts ...grpc.CallOption) (*runtimeapi.ContainerStatsResponse, error)

	// ExecSync runs lifecycle hooks and exec probes.
	ExecSync(ctx context.Context, in *runtimeapi.ExecSyncRequest, opts ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error)
	// Exec, Attach and PortForward hand streams to the runtime's
	// streaming server.
	Exec(ctx context.Context, in *runtimeapi.ExecRequest, opts ...grpc.CallOption) (*runtimeapi.ExecResponse, error)
	Attach(ctx context.Context, in *runtimeapi.AttachRequest, opts ...grpc.CallOption) (*runtimeapi.AttachResponse, error)
	PortForward(ctx context.Context, in *runtimeapi.PortForwardRequest, opts ...grpc.CallOption) (*runtimeapi.PortForwardResponse, error)

	ImageStatus(ctx context.Context, in *runtimeapi.ImageStatusRequest, opts ...grpc.CallOption) (*runtimeapi.ImageStatusResponse, error)
	PullImage(ctx context.Context, in *runtimeapi.PullImageRequest, opts ...grpc.CallOption) (*runtimeapi.PullImageResponse, error)
}

// runtimeReader is what the kubelet's view of the runtime (relist and
// refresh) reads.
type runtimeReader interface {
	ListPodSandbox(ctx context.Context, in *runtimeapi.ListPodSandboxRequest, opts ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error)
	PodSandboxStatus(ctx context.Context, in *runtimeapi.PodSandboxStatusRequest, opts ...grpc.CallOption) (*runtimeapi.PodSandboxStatusResponse, error)
	ListContainers(ctx context.Context, in *runtimeapi.ListContainersRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error)
	ContainerStatus(ctx context.Context, in *runtimeapi.ContainerStatusRequest, opts ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error)
}

// Volumes prepares a pod's volumes on the host and mounts them into its
// containers.
type Volumes interface {
	// Prepare makes every volume of the pod ready, idempotently; it is
	// called before each sync so that contents follow their sources.
	Prepare(ctx context.Context, pod *v1.Pod) error
	// ContainerMounts returns the CRI mounts of one container.
	ContainerMounts(pod *v1.Pod, c *v1.Container, env map[string]string) ([]*runtimeapi.Mount, error)
	// Teardown removes what Prepare made; safe for unknown pods.
	Teardown(podUID string) error
	// Orphans lists pod UIDs that still have volumes on disk.
	Orphans() ([]string, error)
}

// Config wires a kubelet.
type Config struct {
	NodeName string
	Client   kubernetes.Interface
	Runtime  Runtime
	Volumes  Volumes
	// PodDir holds per-pod files the kubelet writes itself (hosts file,
	// termination messages): PodDir/<uid>/.
	PodDir string
	// LogDir holds container logs: LogDir/<ns>_<name>_<uid>/<container>/<attempt>.log.
	LogDir string
	// HostIPs are the node's addresses, reported as status.hostIPs.
	HostIPs []string
	// ClusterDNS and ClusterDomain configure pods with dnsPolicy
	// ClusterFirst; without ClusterDNS they get the node's resolver.
	ClusterDNS    []string
	ClusterDomain string
	// ResolvConf is the node's resolver configuration (/etc/resolv.conf).
	ResolvConf string
	// NodeHostsFile is the node's hosts file, the base of the /etc/hosts
	// of pods on the node's network; /etc/hosts when empty.
	NodeHostsFile string
	// AllowPrivileged lets containers ask for privileged mode.
	AllowPrivileged bool
	// NodeMemory is the node's memory capacity, for OOM score adjustment.
	NodeMemory int64
	// Allocatable is the node's allocatable resources, the default for
	// resourceFieldRef limits.
	Allocatable v1.ResourceList
	Log         *slog.Logger
	Recorder    record.EventRecorder
	// Metrics is where the kubelet registers its metrics; nil keeps them
	// unexported.
	Metrics prometheus.Registerer
	// PodNetworkReady, when set, is called once a new sandbox of a pod
	// has its address and before any of its containers starts: the
	// node's network policies isolate the pod from its first instant.
	PodNetworkReady func(ctx context.Context, pod *v1.Pod, ip string) error
	// Cgroups, when set, makes each pod's QoS cgroup with its limits
	// before its sandbox starts and removes it once the pod is gone.
	Cgroups PodCgroups
	// Admit, when set, is asked about each new pod before it starts (the
	// eviction manager refuses pods under node pressure): a refused pod
	// fails with the reason and "Pod was rejected: " and the message.
	Admit func(pod *v1.Pod) (ok bool, reason, message string)
	// RelistPeriod is how often the runtime is listed to notice
	// containers that changed on their own (1 s, upstream's PLEG period).
	RelistPeriod time.Duration
}

// PodCgroups keeps the pods' cgroups.
type PodCgroups interface {
	// EnsurePod makes the pod's cgroup, given the pods that run.
	EnsurePod(pod *v1.Pod, active []*v1.Pod) (string, error)
	// RemovePod removes a gone pod's cgroup.
	RemovePod(uid types.UID, active []*v1.Pod) error
	// SetPodValues rewrites a pod cgroup's limits (a resize).
	SetPodValues(pod *v1.Pod, v cgroups.Values) error
}

// Kubelet runs one node's pods.
type Kubelet struct {
	cfg     Config
	log     *slog.Logger
	rt      Runtime
	rec     record.EventRecorder
	lister  corelisters.PodLister
	synced  cache.InformerSynced
	factory informers.SharedInformerFactory
	// services feed the containers' service environment variables; all
	// of them, since pods see their own namespace's and default's.
	services       corelisters.ServiceLister
	servicesSync   cache.InformerSynced
	clusterFactory informers.SharedInformerFactory
	handlers       runtimeHandlers

	mu      sync.Mutex
	pods    map[types.UID]*v1.Pod
	workers map[types.UID]*worker
	// admitted are the pods the kubelet accepted to run (see admit).
	admitted map[types.UID]bool

	state       *runtimeState
	res         *resourceStore
	backoff     *flowcontrol.Backoff
	pullBackoff *flowcontrol.Backoff
	probes      *prober.Manager
	metrics     *metrics

	// waiting remembers, per pod and container, why it is not running
	// (image pull errors, back-off) for the status.
	waitMu  sync.Mutex
	waiting map[types.UID]map[string]waitReason

	// evictions are the pods the eviction manager is failing.
	evictMu   sync.Mutex
	evictions map[types.UID]eviction

	ctx context.Context
}

type waitReason struct{ reason, message string }

type worker struct {
	kick chan struct{}
	// status asks for the pod's status to be written without a sync: a
	// readiness result flipped.
	status chan struct{}
}

// New builds a kubelet; Run starts it.
func New(cfg Config) *Kubelet {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.ClusterDomain == "" {
		cfg.ClusterDomain = "cluster.local"
	}
	if cfg.NodeHostsFile == "" {
		cfg.NodeHostsFile = "/etc/hosts"
	}
	if cfg.RelistPeriod <= 0 {
		cfg.RelistPeriod = time.Second
	}
	k := &Kubelet{
		cfg:         cfg,
		log:         cfg.Log,
		rt:          cfg.Runtime,
		rec:         cfg.Recorder,
		pods:        map[types.UID]*v1.Pod{},
		workers:     map[types.UID]*worker{},
		admitted:    map[types.UID]bool{},
		state:       newRuntimeState(),
		res:         newResourceStore(cfg.PodDir),
		backoff:     newRestartBackoff(clock.RealClock{}),
		pullBackoff: newPullBackoff(clock.RealClock{}),
		waiting:     map[types.UID]map[string]waitReason{},
		evictions:   map[types.UID]eviction{},
	}
	// Only this node's pods: the informer's field selector keeps the
	// kubelet's memory proportional to its own pods, not the cluster's.
	k.factory = informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", cfg.NodeName).String()
		}))
	k.clusterFactory = informers.NewSharedInformerFactory(cfg.Client, 0)
	svcInf := k.clusterFactory.Core().V1().Services()
	k.services, k.servicesSync = svcInf.Lister(), svcInf.Informer().HasSynced
	k.handlers = runtimeHandlers{
		lister: k.clusterFactory.Node().V1().RuntimeClasses().Lister(),
		get: func(ctx context.Context, name string) (*nodev1.RuntimeClass, error) {
			return cfg.Client.NodeV1().RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
		},
	}
	inf := k.factory.Core().V1().Pods()
	k.lister = inf.Lister()
	k.synced = inf.Informer().HasSynced
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { k.podChanged(obj) },
		UpdateFunc: func(old, obj any) {
			// The kubelet's own status writes come back as updates; only a
			// change of what the pod asks for needs a sync (as upstream's
			// pod config filters them).
			o, ok1 := old.(*v1.Pod)
			n, ok2 := obj.(*v1.Pod)
			if ok1 && ok2 && !specChanged(o, n) {
				k.storePod(n)
				return
			}
			k.podChanged(obj)
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*v1.Pod); ok {
				k.podDeleted(p)
			}
		},
	})
	k.metrics = newMetrics(k, cfg.Metrics)
	k.probes = prober.NewManager(prober.Config{
		Exec: prober.CRIExec{Runtime: cfg.Runtime},
		OnChange: func(uid types.UID, kind prober.Kind) {
			if kind == prober.Readiness {
				k.kickStatus(uid)
				return
			}
			k.kick(uid)
		},
		Recorder: cfg.Recorder,
		Log:      cfg.Log,
	})
	return k
}

// Run syncs pods until ctx ends. Containers keep running when it returns:
// a restarted kubelet adopts them.
func (k *Kubelet) Run(ctx context.Context) error {
	k.ctx = ctx
	if err := k.state.relist(ctx, k.rt); err != nil {
		return fmt.Errorf("kubelet: first runtime relist: %w", err)
	}
	k.factory.Start(ctx.Done())
	k.clusterFactory.Start(ctx.Done())
	// Containers started before the services are known would miss their
	// service variables for good, so wait for both.
	if !cache.WaitForCacheSync(ctx.Done(), k.synced, k.servicesSync) {
		return ctx.Err()
	}
	// Pods the runtime holds that the API no longer knows (deleted while
	// the kubelet was down) get a worker too, which removes them.
	for _, uid := range k.state.podUIDs() {
		k.kick(uid)
	}
	if orphans, err := k.cfg.Volumes.Orphans(); err == nil {
		for _, uid := range orphans {
			k.kick(types.UID(uid))
		}
	}
	go k.relistLoop(ctx)
	go k.housekeeping(ctx)
	<-ctx.Done()
	k.probes.Stop()
	return nil
}

// relistLoop is upstream's PLEG: every RelistPeriod, compare the runtime
// with what the previous relist saw and wake the workers of pods whose
// containers changed. The comparison is with the relist's own record, as
// upstream's PLEG keeps its own: a worker's refresh also updates the
// shared view, and a container that exited just before that refresh
// would otherwise look unchanged here and wait for the next resync.
func (k *Kubelet) relistLoop(ctx context.Context) {
	t := time.NewTicker(k.cfg.RelistPeriod)
	defer t.Stop()
	before := k.state.fingerprints()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := k.state.relist(ctx, k.rt); err != nil {
			if ctx.Err() == nil {
				k.log.Warn("runtime relist failed", "err", err)
			}
			continue
		}
		after := k.state.fingerprints()
		for uid, fp := range after {
			if before[uid] != fp {
				k.kick(uid)
			}
		}
		for uid := range before {
			if _, ok := after[uid]; !ok {
				k.kick(uid)
			}
		}
		before = after
	}
}

// housekeeping wakes every pod now and then so that volume contents follow
// their sources and missed events are repaired.
func (k *Kubelet) housekeeping(ctx context.Context) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		k.mu.Lock()
		uids := make([]types.UID, 0, len(k.pods))
		for uid := range k.pods {
			uids = append(uids, uid)
		}
		k.mu.Unlock()
		for _, uid := range uids {
			k.kick(uid)
		}
		// Back-offs are kept per pod: forget those of pods long gone
		// (no update for twice the maximum), as upstream's kubelet does.
		k.backoff.GC()
		k.pullBackoff.GC()
	}
}

func (k *Kubelet) podChanged(obj any) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	k.storePod(p)
	k.kick(p.UID)
}

// storePod keeps the newest known object of a pod. The informer can
// deliver an object older than the answer to the kubelet's own status
// write, which must not be lost: a status compared with an older one is
// written again.
func (k *Kubelet) storePod(p *v1.Pod) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if cur, ok := k.pods[p.UID]; ok && !notOlder(cur, p) {
		return
	}
	k.pods[p.UID] = p
}

// notOlder reports whether b is the same version of a pod as a or a later
// one. Resource versions are etcd revisions; ones that are not numbers
// cannot be compared, and the later arrival wins.
func notOlder(a, b *v1.Pod) bool {
	x, err1 := strconv.ParseUint(a.ResourceVersion, 10, 64)
	y, err2 := strconv.ParseUint(b.ResourceVersion, 10, 64)
	if err1 != nil || err2 != nil {
		return true
	}
	return y >= x
}

func (k *Kubelet) podDeleted(p *v1.Pod) {
	k.mu.Lock()
	delete(k.pods, p.UID)
	k.mu.Unlock()
	k.kick(p.UID)
	// The room a pod leaves may be what a waiting resize needs, as
	// upstream retries pending resizes when pods go.
	for _, uid := range k.res.pending() {
		k.kick(uid)
	}
}

// pod returns the latest known API object of a pod, nil once deleted.
func (k *Kubelet) pod(uid types.UID) *v1.Pod {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.pods[uid]
}

// kick wakes the pod's worker, starting one if needed.
func (k *Kubelet) kick(uid types.UID) {
	if k.ctx == nil {
		return
	}
	k.mu.Lock()
	w, ok := k.workers[uid]
	if !ok {
		w = &worker{kick: make(chan struct{}, 1), status: make(chan struct{}, 1)}
		k.workers[uid] = w
		go k.runWorker(uid, w)
	}
	k.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// kickStatus asks the pod's worker to write the pod's status now; a pod
// without a worker gets a full sync.
func (k *Kubelet) kickStatus(uid types.UID) {
	k.mu.Lock()
	w, ok := k.workers[uid]
	k.mu.Unlock()
	if !ok {
		k.kick(uid)
		return
	}
	select {
	case w.status <- struct{}{}:
	default:
	}
}

// statusOnly reports whether a request to write a pod's status can be
// answered without a sync. Readiness changes nothing that runs, so the
// Ready condition need not wait for a whole sync (volumes read from the
// API, runtime calls), as upstream's status manager takes probe results
// directly. A pod the kubelet is stopping or has finished gets its sync:
// those write their own status.
func statusOnly(pod *v1.Pod) bool {
	return pod != nil && pod.DeletionTimestamp == nil &&
		pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed
}

// runWorker syncs one pod whenever kicked or when its sync asks to be
// called again, until the pod is gone from both the API and the runtime.
func (k *Kubelet) runWorker(uid types.UID, w *worker) {
	ctx := k.ctx
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		onlyStatus := false
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-timer.C:
		case <-w.status:
			onlyStatus = true
		}
		pod := k.pod(uid)
		if onlyStatus && statusOnly(pod) {
			if _, evicted := k.evictionOf(uid); !evicted {
				// The timer keeps running: the next resync stays due.
				k.updateStatus(ctx, pod, false)
				continue
			}
		}
		start := time.Now()
		again, finished := k.syncPod(ctx, uid, pod)
		k.metrics.syncDuration.WithLabelValues("sync").Observe(time.Since(start).Seconds())
		if finished {
			k.mu.Lock()
			// A kick that raced with the finish restarts the loop rather
			// than being lost.
			select {
			case <-w.kick:
				k.mu.Unlock()
				select {
				case w.kick <- struct{}{}:
				default:
				}
				continue
			default:
			}
			delete(k.workers, uid)
			k.mu.Unlock()
			k.forget(uid)
			return
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		if again <= 0 {
			again = time.Hour
		}
		timer.Reset(again)
	}
}

// forget drops per-pod memory once a pod is gone.
func (k *Kubelet) forget(uid types.UID) {
	k.waitMu.Lock()
	delete(k.waiting, uid)
	k.waitMu.Unlock()
	k.probes.RemovePod(uid)
	k.forgetAdmission(uid)
	k.res.forget(uid)
	k.evictMu.Lock()
	delete(k.evictions, uid)
	k.evictMu.Unlock()
}

func (k *Kubelet) setWaiting(uid types.UID, container, reason, message string) {
	k.waitMu.Lock()
	defer k.waitMu.Unlock()
	m := k.waiting[uid]
	if m == nil {
		m = map[string]waitReason{}
		k.waiting[uid] = m
	}
	m[container] = waitReason{reason, message}
}

func (k *Kubelet) clearWaiting(uid types.UID, container string) {
	k.waitMu.Lock()
	defer k.waitMu.Unlock()
	delete(k.waiting[uid], container)
}

func (k *Kubelet) waitingOf(uid types.UID) map[string]waitReason {
	k.waitMu.Lock()
	defer k.waitMu.Unlock()
	out := make(map[string]waitReason, len(k.waiting[uid]))
	for c, w := range k.waiting[uid] {
		out[c] = w
	}
	return out
}

// Pods returns the pods this kubelet runs, for the streaming server.
func (k *Kubelet) Pods() []*v1.Pod {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]*v1.Pod, 0, len(k.pods))
	for _, p := range k.pods {
		out = append(out, p)
	}
	return out
}

// specChanged reports whether anything but the status and bookkeeping of a
// pod changed.
func specChanged(a, b *v1.Pod) bool {
	return !equality.Semantic.DeepEqual(a.Spec, b.Spec) ||
		!equality.Semantic.DeepEqual(a.DeletionTimestamp, b.DeletionTimestamp) ||
		!equality.Semantic.DeepEqual(a.DeletionGracePeriodSeconds, b.DeletionGracePeriodSeconds) ||
		!equality.Semantic.DeepEqual(a.Labels, b.Labels) ||
		!equality.Semantic.DeepEqual(a.Annotations, b.Annotations) ||
		a.UID != b.UID
}
