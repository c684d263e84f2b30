// Package attachdetach is upstream's attach/detach controller for CSI
// volumes: for every CSI volume a pod on a node uses, whose driver needs
// attaching (a CSIDriver with attachRequired, or none at all), there is
// a VolumeAttachment naming the driver, the node and the volume; the
// driver's external-attacher carries it out and records it attached,
// which the kubelet waits for. When no pod on the node uses the volume
// any more, the VolumeAttachment is deleted and the attacher detaches.
//
// The controller is level-triggered per node: it compares the
// attachments the node's pods need (desired, a pure function of the
// objects) with those it made for the node. As upstream, an
// attachment no pod needs is deleted only once the node no longer
// reports the volume in use (its status.volumesInUse), or after six
// minutes of waiting for that.
package attachdetach

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
	"github.com/orca-project/orca/internal/csinames"
)

// Name is the controller's name, as upstream's.
const Name = "attachdetach"

// Controller keeps VolumeAttachments; keys are node names.
type Controller struct {
	client      kubernetes.Interface
	pods        corelisters.PodLister
	podIndex    cache.Indexer // by node (nodeIndex)
	claims      corelisters.PersistentVolumeClaimLister
	volumes     corelisters.PersistentVolumeLister
	drivers     storagelisters.CSIDriverLister
	attachments storagelisters.VolumeAttachmentLister
	nodes       corelisters.NodeLister
	synced      []cache.InformerSynced
	clock       func() time.Time

	mu sync.Mutex
	// unneeded is when each attachment was first found needed by no pod,
	// for the wait on the node's unmount.
	unneeded map[string]time.Time
	queue    workqueue.TypedRateLimitingInterface[string]
	log      *slog.Logger
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	podInf := factory.Core().V1().Pods()
	claimInf := factory.Core().V1().PersistentVolumeClaims()
	volumeInf := factory.Core().V1().PersistentVolumes()
	driverInf := factory.Storage().V1().CSIDrivers()
	vaInf := factory.Storage().V1().VolumeAttachments()
	nodeInf := factory.Core().V1().Nodes()
	c := &Controller{
		client: client,
		pods:   podInf.Lister(), claims: claimInf.Lister(), volumes: volumeInf.Lister(),
		drivers: driverInf.Lister(), attachments: vaInf.Lister(), nodes: nodeInf.Lister(),
		synced: []cache.InformerSynced{podInf.Informer().HasSynced, claimInf.Informer().HasSynced,
			volumeInf.Informer().HasSynced, driverInf.Informer().HasSynced, vaInf.Informer().HasSynced, nodeInf.Informer().HasSynced},
		clock:    time.Now,
		unneeded: map[string]time.Time{},
		queue:    controllerutil.NewQueue[string]("volume_attachments", metrics),
		log:      log.With("controller", Name),
	}
	// Only a pod with a claim can need an attachment: the others'
	// changes, most of a large cluster's traffic, are not this
	// controller's business.
	podNode := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if p, ok := obj.(*v1.Pod); ok && p.Spec.NodeName != "" && usesClaims(p) {
			c.queue.Add(p.Spec.NodeName)
		}
	}
	if err := podInf.Informer().AddIndexers(cache.Indexers{nodeIndex: podsByNode}); err != nil {
		return nil, fmt.Errorf("%s: pod index: %w", Name, err)
	}
	c.podIndex = podInf.Informer().GetIndexer()
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: podNode, UpdateFunc: func(_, cur any) { podNode(cur) }, DeleteFunc: podNode,
	}); err != nil {
		return nil, fmt.Errorf("%s: pod handler: %w", Name, err)
	}
	vaNode := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if va, ok := obj.(*storagev1.VolumeAttachment); ok {
			c.queue.Add(va.Spec.NodeName)
		}
	}
	if _, err := vaInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: vaNode, UpdateFunc: func(_, cur any) { vaNode(cur) }, DeleteFunc: vaNode,
	}); err != nil {
		return nil, fmt.Errorf("%s: attachment handler: %w", Name, err)
	}
	// A claim bound, a volume or a driver changed: every node may need
	// looking at again.
	all := cache.ResourceEventHandlerFuncs{AddFunc: func(any) { c.enqueueAll() }, UpdateFunc: func(any, any) { c.enqueueAll() }}
	for _, inf := range []cache.SharedIndexInformer{claimInf.Informer(), volumeInf.Informer(), driverInf.Informer()} {
		if _, err := inf.AddEventHandler(all); err != nil {
			return nil, fmt.Errorf("%s: handler: %w", Name, err)
		}
	}
	return c, nil
}

// Name implements the controller manager's Controller.
func (c *Controller) Name() string { return Name }

// Run keeps the attachments until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: Name, Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "node")},
	}.Run(ctx)
}

func (c *Controller) enqueueAll() {
	nodes := map[string]bool{}
	if pods, err := c.pods.List(labels.Everything()); err == nil {
		for _, p := range pods {
			if p.Spec.NodeName != "" {
				nodes[p.Spec.NodeName] = true
			}
		}
	}
	if vas, err := c.attachments.List(labels.Everything()); err == nil {
		for _, va := range vas {
			nodes[va.Spec.NodeName] = true
		}
	}
	for n := range nodes {
		c.queue.Add(n)
	}
}

// MaxWaitForUnmount is how long a volume no pod needs stays attached
// while its node still reports it in use, upstream's
// maxWaitForUnmountDuration: after that it is detached regardless.
const MaxWaitForUnmount = 6 * time.Minute

// unmountPoll is how often a node's unmount is looked for.
const unmountPoll = 2 * time.Second

// DetachWait is how long to wait before detaching va, which no pod on
// its node needs and has not been needed for unneededFor: nothing when
// the node no longer reports the volume in use (status.volumesInUse), or
// has waited MaxWaitForUnmount already, or the volume is gone.
func DetachWait(va *storagev1.VolumeAttachment, pv *v1.PersistentVolume, inUse []v1.UniqueVolumeName, unneededFor time.Duration) time.Duration {
	if pv == nil || pv.Spec.CSI == nil || unneededFor >= MaxWaitForUnmount {
		return 0
	}
	name := v1.UniqueVolumeName("kubernetes.io/csi/" + pv.Spec.CSI.Driver + "^" + pv.Spec.CSI.VolumeHandle)
	if !slices.Contains(inUse, name) {
		return 0
	}
	return unmountPoll
}

// Managed reports whether va is one this controller makes: named as the
// kubelet looks for it (csi-<sha256 of volume, driver and node>).
// Attachments made otherwise, by hand or by another controller, are left
// alone, as upstream's controller detaches only what it attached.
func Managed(va *storagev1.VolumeAttachment) bool {
	name, ok := strings.CutPrefix(va.Name, "csi-")
	if !ok || len(name) != 64 {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil
}

// Attachment is one volume a node needs attached.
type Attachment struct {
	Driver, Volume, VolumeID string
}

// nodeIndex indexes pods by spec.nodeName: a node's sync reads its own
// pods, not every pod in the cluster.
const nodeIndex = "attachdetach/nodeName"

func podsByNode(obj any) ([]string, error) {
	if p, ok := obj.(*v1.Pod); ok && p.Spec.NodeName != "" {
		return []string{p.Spec.NodeName}, nil
	}
	return nil, nil
}

// usesClaims reports whether a pod has a volume through a claim, the only
// way Desired finds an attachment.
func usesClaims(p *v1.Pod) bool {
	for i := range p.Spec.Volumes {
		if p.Spec.Volumes[i].PersistentVolumeClaim != nil || p.Spec.Volumes[i].Ephemeral != nil {
			return true
		}
	}
	return false
}

// Desired lists the attachments node's pods need: the CSI volumes of the
// bound claims of its pods that are not finished, whose drivers attach.
func Desired(node string, pods []*v1.Pod, claim func(ns, name string) *v1.PersistentVolumeClaim,
	pv func(name string) *v1.PersistentVolume, driver func(name string) *storagev1.CSIDriver) map[string]Attachment {
	out := map[string]Attachment{}
	for _, p := range pods {
		if p.Spec.NodeName != node || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		for i := range p.Spec.Volumes {
			vol := &p.Spec.Volumes[i]
			name := ""
			switch {
			case vol.PersistentVolumeClaim != nil:
				name = vol.PersistentVolumeClaim.ClaimName
			case vol.Ephemeral != nil:
				name = p.Name + "-" + vol.Name
			default:
				continue
			}
			cl := claim(p.Namespace, name)
			if cl == nil || cl.Spec.VolumeName == "" {
				continue
			}
			v := pv(cl.Spec.VolumeName)
			if v == nil || v.Spec.CSI == nil {
				continue
			}
			d := driver(v.Spec.CSI.Driver)
			if d != nil && d.Spec.AttachRequired != nil && !*d.Spec.AttachRequired {
				continue
			}
			out[csinames.Attachment(v.Spec.CSI.VolumeHandle, v.Spec.CSI.Driver, node)] = Attachment{
				Driver: v.Spec.CSI.Driver, Volume: v.Name, VolumeID: v.Spec.CSI.VolumeHandle,
			}
		}
	}
	return out
}

func (c *Controller) sync(ctx context.Context, node string) error {
	objs, err := c.podIndex.ByIndex(nodeIndex, node)
	if err != nil {
		return err
	}
	pods := make([]*v1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*v1.Pod); ok {
			pods = append(pods, p)
		}
	}
	want := Desired(node, pods,
		func(ns, name string) *v1.PersistentVolumeClaim {
			cl, _ := c.claims.PersistentVolumeClaims(ns).Get(name)
			return cl
		},
		func(name string) *v1.PersistentVolume { pv, _ := c.volumes.Get(name); return pv },
		func(name string) *storagev1.CSIDriver { d, _ := c.drivers.Get(name); return d })
	vas, err := c.attachments.List(labels.Everything())
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, va := range vas {
		if va.Spec.NodeName != node {
			continue
		}
		have[va.Name] = true
		if _, ok := want[va.Name]; ok || va.DeletionTimestamp != nil || !Managed(va) {
			c.mu.Lock()
			delete(c.unneeded, va.Name)
			c.mu.Unlock()
			continue
		}
		now := c.clock()
		c.mu.Lock()
		since, ok := c.unneeded[va.Name]
		if !ok {
			since = now
			c.unneeded[va.Name] = now
		}
		c.mu.Unlock()
		var inUse []v1.UniqueVolumeName
		if n, err := c.nodes.Get(node); err == nil {
			inUse = n.Status.VolumesInUse
		}
		var pv *v1.PersistentVolume
		if va.Spec.Source.PersistentVolumeName != nil {
			pv, _ = c.volumes.Get(*va.Spec.Source.PersistentVolumeName)
		}
		if wait := DetachWait(va, pv, inUse, now.Sub(since)); wait > 0 {
			c.queue.AddAfter(node, wait)
			continue
		}
		err := c.client.StorageV1().VolumeAttachments().Delete(ctx, va.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("detach %s: %w", va.Name, err)
		}
		c.log.Info("detaching", "attachment", va.Name, "node", node)
		c.mu.Lock()
		delete(c.unneeded, va.Name)
		c.mu.Unlock()
	}
	for name, a := range want {
		if have[name] {
			continue
		}
		pvName := a.Volume
		va := &storagev1.VolumeAttachment{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: storagev1.VolumeAttachmentSpec{
				Attacher: a.Driver, NodeName: node,
				Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pvName},
			},
		}
		if _, err := c.client.StorageV1().VolumeAttachments().Create(ctx, va, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("attach %s to %s: %w", a.Volume, node, err)
		}
		c.log.Info("attaching", "attachment", name, "volume", a.Volume, "node", node)
	}
	return nil
}
