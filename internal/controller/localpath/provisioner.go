// Package localpath is the provisioner of Orca's built-in local-path
// storage: for a claim the volume controller hands to orca.io/local-path
// on the node the scheduler picked (volume.kubernetes.io/selected-node),
// it creates a PersistentVolume of a directory on that node, pre-bound to
// the claim; for a released volume whose policy is Delete, it deletes the
// PersistentVolume, whose finalizer then waits for the node's agent to
// remove the directory. It writes API objects only, as an external
// provisioner does; the node makes and removes directories
// (internal/localpath).
package localpath

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
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
	"github.com/orca-project/orca/internal/localpath"
)

// Name is the controller's name.
const Name = "local-path-provisioner"

// Controller provisions and deletes local-path volumes. Keys are
// "claim/NAMESPACE/NAME" and "volume/NAME".
type Controller struct {
	client  kubernetes.Interface
	claims  corelisters.PersistentVolumeClaimLister
	volumes corelisters.PersistentVolumeLister
	classes storagelisters.StorageClassLister
	nodes   corelisters.NodeLister
	synced  []cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]

	events   record.EventBroadcaster
	recorder record.EventRecorder
	log      *slog.Logger
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	claimInf := factory.Core().V1().PersistentVolumeClaims()
	volumeInf := factory.Core().V1().PersistentVolumes()
	classInf := factory.Storage().V1().StorageClasses()
	nodeInf := factory.Core().V1().Nodes()
	events := record.NewBroadcaster()
	c := &Controller{
		client:  client,
		claims:  claimInf.Lister(),
		volumes: volumeInf.Lister(),
		classes: classInf.Lister(),
		nodes:   nodeInf.Lister(),
		synced: []cache.InformerSynced{claimInf.Informer().HasSynced, volumeInf.Informer().HasSynced,
			classInf.Informer().HasSynced, nodeInf.Informer().HasSynced},
		queue:  controllerutil.NewQueue[string]("local_path", metrics),
		events: events,
		// Upstream's external provisioners post their events under their
		// provisioner's name.
		recorder: events.NewRecorder(scheme.Scheme, v1.EventSource{Component: localpath.Provisioner}),
		log:      log.With("controller", Name),
	}
	claimKey := func(obj any) {
		if cl, ok := obj.(*v1.PersistentVolumeClaim); ok && wantsUs(cl) {
			c.queue.Add("claim/" + cl.Namespace + "/" + cl.Name)
		}
	}
	volumeKey := func(obj any) {
		if pv, ok := obj.(*v1.PersistentVolume); ok && localpath.Ours(pv) {
			c.queue.Add("volume/" + pv.Name)
		}
	}
	for _, h := range []struct {
		inf cache.SharedIndexInformer
		f   func(any)
	}{{claimInf.Informer(), claimKey}, {volumeInf.Informer(), volumeKey}} {
		if _, err := h.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: h.f, UpdateFunc: func(_, cur any) { h.f(cur) },
		}); err != nil {
			return nil, fmt.Errorf("%s: handler: %w", Name, err)
		}
	}
	// A node that publishes its storage directory late, or goes away.
	if _, err := nodeInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.enqueueAll() },
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*v1.Node)
			n, ok2 := cur.(*v1.Node)
			if ok1 && ok2 && o.Annotations[localpath.DirAnnotation] != n.Annotations[localpath.DirAnnotation] {
				c.enqueueAll()
			}
		},
		DeleteFunc: func(any) { c.enqueueAll() },
	}); err != nil {
		return nil, fmt.Errorf("%s: node handler: %w", Name, err)
	}
	return c, nil
}

// Name implements the controller manager's Controller.
func (c *Controller) Name() string { return Name }

// Run provisions until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: Name, Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "key")},
	}.Run(ctx)
}

func (c *Controller) enqueueAll() {
	if claims, err := c.claims.List(labels.Everything()); err == nil {
		for _, cl := range claims {
			if wantsUs(cl) {
				c.queue.Add("claim/" + cl.Namespace + "/" + cl.Name)
			}
		}
	}
	if vols, err := c.volumes.List(labels.Everything()); err == nil {
		for _, pv := range vols {
			if localpath.Ours(pv) {
				c.queue.Add("volume/" + pv.Name)
			}
		}
	}
}

// wantsUs is a claim handed to this provisioner and not yet bound.
func wantsUs(cl *v1.PersistentVolumeClaim) bool {
	p := cl.Annotations[volume.AnnStorageProvisioner]
	if p == "" {
		p = cl.Annotations[volume.AnnBetaStorageProvisioner]
	}
	return p == localpath.Provisioner && cl.Spec.VolumeName == "" && cl.DeletionTimestamp == nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	kind, rest, _ := cutKey(key)
	if kind == "volume" {
		return c.syncVolume(ctx, rest)
	}
	ns, name, err := cache.SplitMetaNamespaceKey(rest)
	if err != nil {
		return nil
	}
	claim, err := c.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || !wantsUs(claim) {
		return err
	}
	pvName := volumeName(claim)
	if _, err := c.volumes.Get(pvName); err == nil {
		return nil // made already; the volume controller binds it
	}
	var class *storagev1.StorageClass
	if n := volume.GetPersistentVolumeClaimClass(claim); n != "" {
		class, err = c.classes.Get(n)
		if apierrors.IsNotFound(err) {
			return nil // the volume controller reports a missing class
		}
		if err != nil {
			return err
		}
	}
	if class == nil || class.Provisioner != localpath.Provisioner {
		return nil
	}
	var node *v1.Node
	if sel := claim.Annotations[volume.AnnSelectedNode]; sel != "" {
		node, err = c.nodes.Get(sel)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if node == nil {
			node = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: sel}}
		}
	}
	pv, err := Volume(claim, class, node)
	if err != nil {
		c.recorder.Eventf(claim, v1.EventTypeWarning, "ProvisioningFailed", "failed to provision volume with StorageClass %q: %v", class.Name, err)
		// Retried when the node or the claim changes; a retry now
		// would find the same.
		return nil
	}
	c.recorder.Eventf(claim, v1.EventTypeNormal, "Provisioning", "External provisioner is provisioning volume for claim %q", ns+"/"+name)
	if _, err := c.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		c.recorder.Eventf(claim, v1.EventTypeWarning, "ProvisioningFailed", "failed to provision volume with StorageClass %q: %v", class.Name, err)
		return err
	}
	c.recorder.Eventf(claim, v1.EventTypeNormal, "ProvisioningSucceeded", "Successfully provisioned volume %s", pv.Name)
	c.log.Info("provisioned", "claim", ns+"/"+name, "volume", pv.Name, "node", node.Name, "path", pv.Spec.Local.Path)
	return nil
}

// syncVolume deletes a released volume whose policy says so; the
// finalizer keeps it until its node has removed the directory. Of a
// node that is gone nothing can be removed: the finalizer goes, so the
// volume does not stay forever.
func (c *Controller) syncVolume(ctx context.Context, name string) error {
	pv, err := c.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pv.DeletionTimestamp != nil {
		if !slices.Contains(pv.Finalizers, localpath.Finalizer) {
			return nil
		}
		if _, err := c.nodes.Get(pv.Labels[localpath.NodeLabel]); !apierrors.IsNotFound(err) {
			return err
		}
		u := pv.DeepCopy()
		u.Finalizers = slices.DeleteFunc(u.Finalizers, func(f string) bool { return f == localpath.Finalizer })
		_, err := c.client.CoreV1().PersistentVolumes().Update(ctx, u, metav1.UpdateOptions{})
		if err == nil {
			c.log.Info("node of a deleted volume is gone; its directory stays", "volume", name, "node", pv.Labels[localpath.NodeLabel])
		}
		return ignoreNotFound(err)
	}
	if pv.Status.Phase != v1.VolumeReleased || pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete {
		return nil
	}
	uid := pv.UID
	err = c.client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err == nil {
		c.log.Info("deleting released volume", "volume", name)
	}
	return ignoreNotFound(err)
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func cutKey(key string) (kind, rest string, ok bool) {
	for i := range len(key) {
		if key[i] == '/' {
			return key[:i], key[i+1:], true
		}
	}
	return key, "", false
}

// volumeName is upstream's name for a provisioned volume.
func volumeName(claim *v1.PersistentVolumeClaim) string { return "pvc-" + string(claim.UID) }
