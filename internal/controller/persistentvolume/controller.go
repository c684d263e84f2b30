package persistentvolume

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-helpers/storage/volume"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Name is the controller's name, as upstream's.
const Name = "persistentvolume-binder"

// resync is how often every claim and volume is looked at again even
// without a change, as upstream's 15 s: a provisioner or an
// administrator may have acted where no watched object changed.
const resync = 15 * time.Second

// Controller binds claims and volumes. Claims and volumes have a queue
// each, worked by one goroutine each, as upstream: two claims synced at
// once could both take the same volume (the API's resourceVersion check
// would refuse one, at the cost of a retry).
type Controller struct {
	client  kubernetes.Interface
	claims  corelisters.PersistentVolumeClaimLister
	volumes corelisters.PersistentVolumeLister
	classes storagelisters.StorageClassLister
	synced  []cache.InformerSynced

	claimQueue  workqueue.TypedRateLimitingInterface[string]
	volumeQueue workqueue.TypedRateLimitingInterface[string]

	events   record.EventBroadcaster
	recorder record.EventRecorder
	log      *slog.Logger
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	claimInf := factory.Core().V1().PersistentVolumeClaims()
	volumeInf := factory.Core().V1().PersistentVolumes()
	classInf := factory.Storage().V1().StorageClasses()
	events := record.NewBroadcaster()
	queue := func(name string) workqueue.TypedRateLimitingInterface[string] {
		return controllerutil.NewQueue[string](name, metrics)
	}
	c := &Controller{
		client:      client,
		claims:      claimInf.Lister(),
		volumes:     volumeInf.Lister(),
		classes:     classInf.Lister(),
		synced:      []cache.InformerSynced{claimInf.Informer().HasSynced, volumeInf.Informer().HasSynced, classInf.Informer().HasSynced},
		claimQueue:  queue("claims"),
		volumeQueue: queue("volumes"),
		events:      events,
		recorder:    events.NewRecorder(scheme.Scheme, v1.EventSource{Component: "persistentvolume-controller"}),
		log:         log.With("controller", Name),
	}
	if _, err := claimInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.claimChanged,
		UpdateFunc: func(_, cur any) { c.claimChanged(cur) },
		DeleteFunc: c.claimChanged,
	}); err != nil {
		return nil, fmt.Errorf("%s: claim handler: %w", Name, err)
	}
	if _, err := volumeInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.volumeChanged,
		UpdateFunc: func(_, cur any) { c.volumeChanged(cur) },
		DeleteFunc: c.volumeChanged,
	}); err != nil {
		return nil, fmt.Errorf("%s: volume handler: %w", Name, err)
	}
	// A new or changed class may be the default a claim waits for, or the
	// one it names.
	if _, err := classInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.enqueueAll() },
		UpdateFunc: func(any, any) { c.enqueueAll() },
	}); err != nil {
		return nil, fmt.Errorf("%s: class handler: %w", Name, err)
	}
	return c, nil
}

// Name implements the controller manager's Controller.
func (c *Controller) Name() string { return Name }

// Run works both queues until ctx ends; workers is ignored beyond one
// goroutine per queue (see Controller).
func (c *Controller) Run(ctx context.Context, _ int) error {
	return controllerutil.Loop{
		Name: Name, Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{
			controllerutil.NewWorkers(1, c.claimQueue, c.syncClaim, c.log, "claim"),
			controllerutil.NewWorkers(1, c.volumeQueue, c.syncVolume, c.log, "volume"),
		},
		Alongside: []func(context.Context){controllerutil.Every(resync, func(context.Context) { c.enqueueAll() })},
	}.Run(ctx)
}

func (c *Controller) claimChanged(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	claim, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok {
		return
	}
	c.claimQueue.Add(claimKey(claim))
	// A deleted claim releases its volume; a bound one confirms it.
	if claim.Spec.VolumeName != "" {
		c.volumeQueue.Add(claim.Spec.VolumeName)
	}
}

func (c *Controller) volumeChanged(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pv, ok := obj.(*v1.PersistentVolume)
	if !ok {
		return
	}
	c.volumeQueue.Add(pv.Name)
	// A volume made for a claim, or gone from under one.
	if ref := pv.Spec.ClaimRef; ref != nil {
		c.claimQueue.Add(refKey(ref))
	}
}

func (c *Controller) enqueueAll() {
	if claims, err := c.claims.List(labels.Everything()); err == nil {
		for _, cl := range claims {
			c.claimQueue.Add(claimKey(cl))
		}
	}
	if vols, err := c.volumes.List(labels.Everything()); err == nil {
		for _, pv := range vols {
			c.volumeQueue.Add(pv.Name)
		}
	}
}

func (c *Controller) syncClaim(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	claim, err := c.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	volumes, err := c.volumes.List(labels.Everything())
	if err != nil {
		return err
	}
	classList, err := c.classes.List(labels.Everything())
	if err != nil {
		return err
	}
	classes := make(map[string]*storagev1.StorageClass, len(classList))
	for _, sc := range classList {
		classes[sc.Name] = sc
	}
	v := decideClaim(claim, volumes, classes)
	switch {
	case v.err != nil:
		return v.err
	case v.bind != nil:
		return c.bind(ctx, v.bind, claim)
	case v.setClass != "":
		cl := claim.DeepCopy()
		cl.Spec.StorageClassName = &v.setClass
		_, err := c.client.CoreV1().PersistentVolumeClaims(ns).Update(ctx, cl, metav1.UpdateOptions{})
		if err == nil {
			c.log.Info("assigned the default storage class", "claim", key, "class", v.setClass)
		}
		return err
	}
	if v.provision != "" && (claim.Annotations[volume.AnnStorageProvisioner] != v.provision || claim.Annotations[volume.AnnBetaStorageProvisioner] != v.provision) {
		cl := claim.DeepCopy()
		metav1.SetMetaDataAnnotation(&cl.ObjectMeta, volume.AnnStorageProvisioner, v.provision)
		metav1.SetMetaDataAnnotation(&cl.ObjectMeta, volume.AnnBetaStorageProvisioner, v.provision)
		if claim, err = c.client.CoreV1().PersistentVolumeClaims(ns).Update(ctx, cl, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	changed := claim.Status.Phase != v.phase
	if changed {
		cl := claim.DeepCopy()
		cl.Status.Phase = v.phase
		if _, err := c.client.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, cl, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if v.event != nil && (changed || !v.eventOnChange) {
		c.recorder.Event(claim, v.event.typ, v.event.reason, v.event.msg)
	}
	return nil
}

// bind writes the binding of pv and claim, each step only when it is not
// already there: the volume's claimRef, the volume's phase, the claim's
// volumeName and annotations, the claim's status.
func (c *Controller) bind(ctx context.Context, pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	bound, dirty, err := volume.GetBindVolumeToClaim(pv, claim)
	if err != nil {
		return err
	}
	if dirty {
		if bound, err = c.client.CoreV1().PersistentVolumes().Update(ctx, bound, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("bind volume %s to claim %s: %w", pv.Name, claimKey(claim), err)
		}
	}
	if bound.Status.Phase != v1.VolumeBound || bound.Status.Message != "" {
		st := bound.DeepCopy()
		st.Status.Phase, st.Status.Message, st.Status.Reason = v1.VolumeBound, "", ""
		if bound, err = c.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, st, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("mark volume %s bound: %w", pv.Name, err)
		}
	}
	cl := claim.DeepCopy()
	if cl.Spec.VolumeName != bound.Name {
		cl.Spec.VolumeName = bound.Name
		metav1.SetMetaDataAnnotation(&cl.ObjectMeta, volume.AnnBoundByController, "yes")
	}
	if !metav1.HasAnnotation(cl.ObjectMeta, volume.AnnBindCompleted) {
		metav1.SetMetaDataAnnotation(&cl.ObjectMeta, volume.AnnBindCompleted, "yes")
	}
	if !equality.Semantic.DeepEqual(cl.ObjectMeta, claim.ObjectMeta) || cl.Spec.VolumeName != claim.Spec.VolumeName {
		if cl, err = c.client.CoreV1().PersistentVolumeClaims(cl.Namespace).Update(ctx, cl, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("bind claim %s to volume %s: %w", claimKey(claim), pv.Name, err)
		}
	}
	want := boundStatus(cl.Status, bound)
	if !equality.Semantic.DeepEqual(want, cl.Status) {
		st := cl.DeepCopy()
		st.Status = want
		if _, err := c.client.CoreV1().PersistentVolumeClaims(cl.Namespace).UpdateStatus(ctx, st, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("mark claim %s bound: %w", claimKey(claim), err)
		}
		if claim.Status.Phase != v1.ClaimBound {
			c.log.Info("claim bound", "claim", claimKey(claim), "volume", bound.Name)
		}
	}
	return nil
}

// boundStatus is a bound claim's status: the volume's access modes, and
// its capacity when the claim becomes Bound. As upstream, a bound claim's
// capacity is left alone afterwards: it is the expand controller's (or
// the resizer's), and differs from the volume's while a resize is under
// way.
func boundStatus(cur v1.PersistentVolumeClaimStatus, pv *v1.PersistentVolume) v1.PersistentVolumeClaimStatus {
	out := *cur.DeepCopy()
	out.AccessModes = pv.Spec.AccessModes
	if cur.Phase != v1.ClaimBound {
		if q, ok := pv.Spec.Capacity[v1.ResourceStorage]; ok {
			out.Capacity = v1.ResourceList{v1.ResourceStorage: q}
		}
	}
	out.Phase = v1.ClaimBound
	return out
}

func (c *Controller) syncVolume(ctx context.Context, name string) error {
	pv, err := c.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var claim *v1.PersistentVolumeClaim
	if ref := pv.Spec.ClaimRef; ref != nil && ref.UID != "" {
		claim, err = c.claimOf(ctx, ref)
		if err != nil {
			return err
		}
	}
	v := decideVolume(pv, claim)
	if v.syncClaim {
		c.claimQueue.Add(refKey(pv.Spec.ClaimRef))
	}
	if v.unbind {
		u := pv.DeepCopy()
		if metav1.HasAnnotation(u.ObjectMeta, volume.AnnBoundByController) {
			u.Spec.ClaimRef = nil
			delete(u.Annotations, volume.AnnBoundByController)
		} else {
			// Pre-bound by its creator: the reservation by name stays.
			u.Spec.ClaimRef.UID = ""
			u.Spec.ClaimRef.ResourceVersion = ""
		}
		if pv, err = c.client.CoreV1().PersistentVolumes().Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("unbind volume %s: %w", name, err)
		}
	}
	if v.phase == "" || (pv.Status.Phase == v.phase && pv.Status.Message == v.message) {
		return nil
	}
	st := pv.DeepCopy()
	st.Status.Phase, st.Status.Message = v.phase, v.message
	if _, err := c.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, st, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("set phase of volume %s: %w", name, err)
	}
	c.log.Info("volume phase", "volume", name, "phase", v.phase)
	if v.event != nil {
		c.recorder.Event(pv, v.event.typ, v.event.reason, v.event.msg)
	}
	return nil
}

// claimOf reads the claim a volume is bound to. A claim missing from
// the cache, or another of that name, is looked up in the API server
// before the volume is released: the cache may not have seen it yet.
func (c *Controller) claimOf(ctx context.Context, ref *v1.ObjectReference) (*v1.PersistentVolumeClaim, error) {
	claim, err := c.claims.PersistentVolumeClaims(ref.Namespace).Get(ref.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if err == nil && claim.UID == ref.UID {
		return claim, nil
	}
	claim, err = c.client.CoreV1().PersistentVolumeClaims(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return claim, err
}
