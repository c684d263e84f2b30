// Package volumeexpand is upstream's expand controller
// (persistentvolume-expander) for Orca's volumes. A bound claim whose
// storage request exceeds its capacity is expanded here when its volume
// comes from Orca's built-in local-path provisioner, whose capacity is
// recorded rather than enforced: as upstream's in-tree resize, the claim
// is marked in progress (the allocated size, the Resizing condition, the
// storage-resizer annotation), the volume's capacity is raised, and the
// claim is marked finished (its capacity, resize conditions and status
// cleared), with upstream's events. Any other volume — a CSI driver's
// among them — is left to an external resizer, as upstream leaves every
// volume no in-tree plugin expands: a Normal ExternalExpanding event and
// nothing else.
//
// What to do with a claim (decide, target) and how its status reads before
// and after (markInProgress, markFinished) are pure functions; sync only
// reads and writes.
package volumeexpand

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-helpers/storage/volume"

	"github.com/orca-project/orca/internal/controller/controllerutil"
	"github.com/orca-project/orca/internal/localpath"
)

// LocalPathProvisioner is the name Orca's built-in local-path provisioner
// records in the pv.kubernetes.io/provisioned-by annotation of the
// volumes it makes; this controller expands those itself.
const LocalPathProvisioner = localpath.Provisioner

// AnnResizer names, on a claim, who resizes its volume (upstream's
// volume.kubernetes.io/storage-resizer).
const AnnResizer = "volume.kubernetes.io/storage-resizer"

// Upstream's events: reasons, messages and source.
const (
	reasonExternalExpanding = "ExternalExpanding"
	reasonResizeSuccess     = "VolumeResizeSuccessful"
	reasonResizeFailed      = "VolumeResizeFailed"
	msgExternal             = "waiting for an external controller to expand this PVC"
	eventComponent          = "volume_expand"
)

// resizeConditions are the claim conditions a resize sets and a finished
// resize clears (upstream's knownResizeConditions).
var resizeConditions = map[v1.PersistentVolumeClaimConditionType]bool{
	v1.PersistentVolumeClaimFileSystemResizePending: true,
	v1.PersistentVolumeClaimResizing:                true,
	v1.PersistentVolumeClaimControllerResizeError:   true,
	v1.PersistentVolumeClaimNodeResizeError:         true,
}

// Controller expands claims. Keys are the claims' namespace/name.
type Controller struct {
	client   kubernetes.Interface
	claims   corelisters.PersistentVolumeClaimLister
	synced   cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	events   record.EventBroadcaster
	recorder record.EventRecorder
	log      *slog.Logger
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	events := record.NewBroadcaster()
	recorder := events.NewRecorder(scheme.Scheme, v1.EventSource{Component: eventComponent})
	return newController(client, factory, metrics, log, events, recorder)
}

func newController(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger,
	events record.EventBroadcaster, recorder record.EventRecorder) (*Controller, error) {
	inf := factory.Core().V1().PersistentVolumeClaims()
	c := &Controller{
		client:   client,
		claims:   inf.Lister(),
		synced:   inf.Informer().HasSynced,
		queue:    controllerutil.NewQueue[string]("volume_expand", metrics),
		events:   events,
		recorder: recorder,
		log:      log.With("controller", "persistentvolume-expander"),
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue,
		// As upstream: a larger request needs expanding; a larger
		// capacity may have finished an expansion. Status writes that
		// change neither (this controller's own) are not news.
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*v1.PersistentVolumeClaim)
			n, ok2 := cur.(*v1.PersistentVolumeClaim)
			if !ok1 || !ok2 {
				return
			}
			oldReq, newReq := o.Spec.Resources.Requests[v1.ResourceStorage], n.Spec.Resources.Requests[v1.ResourceStorage]
			oldCap, newCap := o.Status.Capacity[v1.ResourceStorage], n.Status.Capacity[v1.ResourceStorage]
			if newReq.Cmp(oldReq) > 0 || newCap.Cmp(oldCap) > 0 {
				c.enqueue(n)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("volume expand: claim handler: %w", err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "persistentvolume-expander" }

// Run processes claims until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "volume expand", Events: c.events, Client: c.client, Synced: []cache.InformerSynced{c.synced},
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "claim")},
	}.Run(ctx)
}

func (c *Controller) enqueue(obj any) {
	pvc, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok || pvc.Status.Phase != v1.ClaimBound {
		return
	}
	if key, err := cache.MetaNamespaceKeyFunc(pvc); err == nil {
		c.queue.Add(key)
	}
}

// NeedsExpansion reports whether a claim is bound and asks for more
// storage than it has.
func NeedsExpansion(pvc *v1.PersistentVolumeClaim) bool {
	if pvc.Status.Phase != v1.ClaimBound || pvc.Spec.VolumeName == "" {
		return false
	}
	req := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	capacity := pvc.Status.Capacity[v1.ResourceStorage]
	if req.Cmp(capacity) > 0 {
		return true
	}
	// An expansion marked under way is finished even when the capacity
	// already reads as asked (a write interrupted between the volume and
	// the claim's last status).
	return pvc.Status.AllocatedResourceStatuses[v1.ResourceStorage] == v1.PersistentVolumeClaimControllerResizeInProgress
}

// Action is what the controller does for a claim that needs expanding.
type Action int

const (
	// External: an external resizer's work; say so in an event.
	External Action = iota
	// Expand: the controller expands the volume itself.
	Expand
)

// decide picks the action for a claim that needs expanding and the volume
// it names; a volume bound to another claim is upstream's error (the
// claim is retried: the binder may not have caught up).
func decide(pvc *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) (Action, error) {
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != pvc.Namespace || ref.UID != pvc.UID {
		return External, fmt.Errorf("persistent Volume is not bound to PVC being updated : %s", qualifiedName(pvc))
	}
	if pv.Annotations[volume.AnnDynamicallyProvisioned] == LocalPathProvisioner {
		return Expand, nil
	}
	return External, nil
}

// target is the size to expand to, upstream's choice (expandAndRecover):
// the request, unless an expansion already under way recorded another
// size in status.allocatedResources, which is finished first. When the
// volume is already as large as asked, an earlier expansion got that far
// without recording it (or the request shrank since), and the allocated
// size is what is finished — or the request, should it be the larger:
// upstream would finish the smaller allocated size and leave the claim
// short of its request for good. Upstream leaves node-side states to the
// kubelet; nothing waits on a node for a local-path volume, so those
// finish here like the rest.
func target(pvc *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) resource.Quantity {
	spec := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	allocated, ok := pvc.Status.AllocatedResources[v1.ResourceStorage]
	if !ok {
		return spec
	}
	if pvSize := pv.Spec.Capacity[v1.ResourceStorage]; pvSize.Cmp(spec) >= 0 {
		if allocated.Cmp(spec) < 0 {
			return spec
		}
		return allocated
	}
	switch pvc.Status.AllocatedResourceStatuses[v1.ResourceStorage] {
	case v1.PersistentVolumeClaimControllerResizeInProgress, v1.PersistentVolumeClaimNodeResizePending,
		v1.PersistentVolumeClaimNodeResizeInProgress, v1.PersistentVolumeClaimNodeResizeInfeasible:
		return allocated
	}
	return spec
}

// markInProgress is the claim as upstream's controller marks it before it
// expands the volume: the Resizing condition, the storage's allocated
// size and ControllerResizeInProgress status, and the resizer's name.
func markInProgress(pvc *v1.PersistentVolumeClaim, resizer string, size resource.Quantity, now metav1.Time) *v1.PersistentVolumeClaim {
	out := pvc.DeepCopy()
	mergeResizeConditions(out, []v1.PersistentVolumeClaimCondition{{
		Type: v1.PersistentVolumeClaimResizing, Status: v1.ConditionTrue, LastTransitionTime: now,
	}})
	if out.Status.AllocatedResourceStatuses == nil {
		out.Status.AllocatedResourceStatuses = map[v1.ResourceName]v1.ClaimResourceStatus{}
	}
	out.Status.AllocatedResourceStatuses[v1.ResourceStorage] = v1.PersistentVolumeClaimControllerResizeInProgress
	if out.Status.AllocatedResources == nil {
		out.Status.AllocatedResources = v1.ResourceList{}
	}
	out.Status.AllocatedResources[v1.ResourceStorage] = size
	metav1.SetMetaDataAnnotation(&out.ObjectMeta, AnnResizer, resizer)
	return out
}

// markFinished is the claim once its volume has size: that capacity, no
// resize status for storage and no resize conditions (upstream's
// MarkResizeFinished).
func markFinished(pvc *v1.PersistentVolumeClaim, size resource.Quantity) *v1.PersistentVolumeClaim {
	out := pvc.DeepCopy()
	if out.Status.Capacity == nil {
		out.Status.Capacity = v1.ResourceList{}
	}
	out.Status.Capacity[v1.ResourceStorage] = size
	delete(out.Status.AllocatedResourceStatuses, v1.ResourceStorage)
	if len(out.Status.AllocatedResourceStatuses) == 0 {
		out.Status.AllocatedResourceStatuses = nil
	}
	mergeResizeConditions(out, nil)
	return out
}

// mergeResizeConditions is upstream's MergeResizeConditionOnPVC: other
// conditions stay; of the resize conditions, those in set stay (keeping
// their transition time when the status is unchanged) or are added, the
// rest go.
func mergeResizeConditions(pvc *v1.PersistentVolumeClaim, set []v1.PersistentVolumeClaimCondition) {
	want := map[v1.PersistentVolumeClaimConditionType]v1.PersistentVolumeClaimCondition{}
	for _, c := range set {
		want[c.Type] = c
	}
	var out []v1.PersistentVolumeClaimCondition
	for _, c := range pvc.Status.Conditions {
		if !resizeConditions[c.Type] {
			out = append(out, c)
			continue
		}
		if w, ok := want[c.Type]; ok {
			if w.Status != c.Status {
				c = w
			}
			out = append(out, c)
			delete(want, c.Type)
		}
	}
	for _, c := range set {
		if _, ok := want[c.Type]; ok {
			out = append(out, c)
		}
	}
	pvc.Status.Conditions = out
}

func qualifiedName(pvc *v1.PersistentVolumeClaim) string { return pvc.Namespace + "/" + pvc.Name }

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pvc, err := c.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !NeedsExpansion(pvc) {
		return nil
	}
	// Read live, as upstream: this controller writes the volume, and a
	// cached copy may predate its own last write.
	pv, err := c.client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("failed to get PV %q: %w", pvc.Spec.VolumeName, err)
	}
	action, err := decide(pvc, pv)
	if err != nil {
		return err
	}
	if action == External {
		// Nothing to retry: the external resizer takes it from here.
		c.recorder.Event(pvc, v1.EventTypeNormal, reasonExternalExpanding, msgExternal)
		return nil
	}
	if err := c.expand(ctx, pvc, pv); err != nil {
		c.recorder.Event(pvc, v1.EventTypeWarning, reasonResizeFailed, err.Error())
		return err
	}
	return nil
}

// expand grows a local-path volume: its size is bookkeeping only, so the
// volume's capacity is raised without touching the disk.
func (c *Controller) expand(ctx context.Context, pvc *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) error {
	size := target(pvc, pv)
	claims := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace)
	updated, err := claims.UpdateStatus(ctx, markInProgress(pvc, LocalPathProvisioner, size, metav1.Now()), metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("error updating pvc %s with resize in progress: %w", qualifiedName(pvc), err)
	}
	if pvSize := pv.Spec.Capacity[v1.ResourceStorage]; pvSize.Cmp(size) < 0 {
		if err := c.setCapacity(ctx, pv, size); err != nil {
			return fmt.Errorf("error updating pv for pvc %s: %w", qualifiedName(pvc), err)
		}
	}
	if _, err := claims.UpdateStatus(ctx, markFinished(updated, size), metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("error marking pvc %s as resized: %w", qualifiedName(pvc), err)
	}
	c.recorder.Event(pvc, v1.EventTypeNormal, reasonResizeSuccess, "ExpandVolume succeeded for volume "+qualifiedName(pvc))
	c.log.Info("expanded volume", "claim", qualifiedName(pvc), "volume", pv.Name, "size", size.String())
	return nil
}

// setCapacity patches the volume's storage capacity alone, as upstream's
// UpdatePVSize does, so that concurrent writers of other fields do not
// conflict with it.
func (c *Controller) setCapacity(ctx context.Context, pv *v1.PersistentVolume, size resource.Quantity) error {
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"capacity": map[string]any{string(v1.ResourceStorage): size.String()}}})
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}
