// Package ephemeral is upstream's ephemeral volume controller: for each
// generic ephemeral volume of a pod (spec.volumes[].ephemeral) it creates
// the PersistentVolumeClaim <pod>-<volume> in the pod's namespace from
// the volume's claim template, owned and controlled by the pod, so that
// the garbage collector deletes it with the pod. A claim of that name that
// the pod does not control is left alone and reported on the pod. Pods
// being deleted are skipped; a deleted claim is made again while its pod
// lives.
package ephemeral

import (
	"context"
	"fmt"
	"log/slog"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Upstream's event: reason (the volume events' FailedBinding) and source.
const (
	reasonFailedBinding = "FailedBinding"
	eventComponent      = "ephemeral_volume"
)

// claimIndex indexes pods by the namespace/name of the claims their
// ephemeral volumes use, so that a deleted claim finds its pod.
const claimIndex = "ephemeralVolumeClaim"

// Controller creates the claims of ephemeral volumes. Keys are the pods'
// namespace/name.
type Controller struct {
	client   kubernetes.Interface
	pods     corelisters.PodLister
	podIndex cache.Indexer
	claims   corelisters.PersistentVolumeClaimLister
	synced   []cache.InformerSynced
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
	podInf := factory.Core().V1().Pods()
	claimInf := factory.Core().V1().PersistentVolumeClaims()
	if _, ok := podInf.Informer().GetIndexer().GetIndexers()[claimIndex]; !ok {
		if err := podInf.Informer().AddIndexers(cache.Indexers{claimIndex: ephemeralClaimKeys}); err != nil {
			return nil, fmt.Errorf("ephemeral volume: pod index: %w", err)
		}
	}
	c := &Controller{
		client:   client,
		pods:     podInf.Lister(),
		podIndex: podInf.Informer().GetIndexer(),
		claims:   claimInf.Lister(),
		synced:   []cache.InformerSynced{podInf.Informer().HasSynced, claimInf.Informer().HasSynced},
		queue:    controllerutil.NewQueue[string]("ephemeral_volume", metrics),
		events:   events,
		recorder: recorder,
		log:      log.With("controller", "ephemeral-volume"),
	}
	// A pod's spec cannot change, so only new pods matter; a pod's claims
	// go with it through their owner reference.
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: c.enqueuePod}); err != nil {
		return nil, fmt.Errorf("ephemeral volume: pod handler: %w", err)
	}
	if _, err := claimInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: c.claimDeleted}); err != nil {
		return nil, fmt.Errorf("ephemeral volume: claim handler: %w", err)
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "ephemeral-volume" }

// Run processes pods until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "ephemeral volume", Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "pod")},
	}.Run(ctx)
}

// ephemeralClaimKeys is the claimIndex function.
func ephemeralClaimKeys(obj any) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, nil
	}
	var keys []string
	for i := range pod.Spec.Volumes {
		if vol := &pod.Spec.Volumes[i]; vol.Ephemeral != nil {
			keys = append(keys, pod.Namespace+"/"+ephemeral.VolumeClaimName(pod, vol))
		}
	}
	return keys, nil
}

// wants reports whether the controller has work for the pod: it has an
// ephemeral volume and is not being deleted.
func wants(pod *v1.Pod) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Ephemeral != nil {
			return true
		}
	}
	return false
}

func (c *Controller) enqueuePod(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok || !wants(pod) {
		return
	}
	if key, err := cache.MetaNamespaceKeyFunc(pod); err == nil {
		c.queue.Add(key)
	}
}

// claimDeleted requeues the pods whose ephemeral volume used the claim,
// so that it is made again.
func (c *Controller) claimDeleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pvc, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok {
		return
	}
	pods, err := c.podIndex.ByIndex(claimIndex, pvc.Namespace+"/"+pvc.Name)
	if err != nil {
		c.log.Warn("listing pods of a deleted claim", "claim", pvc.Namespace+"/"+pvc.Name, "err", err)
		return
	}
	for _, p := range pods {
		c.enqueuePod(p)
	}
}

// Claim is the claim upstream makes for an ephemeral volume of pod: named
// <pod>-<volume> in the pod's namespace, with the template's labels,
// annotations and spec, controlled by the pod.
func Claim(pod *v1.Pod, vol *v1.Volume) *v1.PersistentVolumeClaim {
	tmpl := vol.Ephemeral.VolumeClaimTemplate.DeepCopy()
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:        ephemeral.VolumeClaimName(pod, vol),
			Namespace:   pod.Namespace,
			Labels:      tmpl.Labels,
			Annotations: tmpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         "v1",
				Kind:               "Pod",
				Name:               pod.Name,
				UID:                pod.UID,
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: tmpl.Spec,
	}
}

// Plan decides for one volume of pod, given the claim of its name as
// stored (nil when there is none): the claim to create, or nil when there
// is nothing to do; an error (upstream's text) when a claim of that name
// exists that the pod does not control.
func Plan(pod *v1.Pod, vol *v1.Volume, existing *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	if vol.Ephemeral == nil || vol.Ephemeral.VolumeClaimTemplate == nil {
		return nil, nil
	}
	if existing != nil {
		return nil, ephemeral.VolumeIsForPod(pod, existing)
	}
	return Claim(pod, vol), nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := c.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pod.DeletionTimestamp != nil {
		return nil
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if err := c.handleVolume(ctx, pod, vol); err != nil {
			c.recorder.Event(pod, v1.EventTypeWarning, reasonFailedBinding, fmt.Sprintf("ephemeral volume %s: %v", vol.Name, err))
			return fmt.Errorf("pod %s, ephemeral volume %s: %w", key, vol.Name, err)
		}
	}
	return nil
}

func (c *Controller) handleVolume(ctx context.Context, pod *v1.Pod, vol *v1.Volume) error {
	if vol.Ephemeral == nil {
		return nil
	}
	existing, err := c.claims.PersistentVolumeClaims(pod.Namespace).Get(ephemeral.VolumeClaimName(pod, vol))
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		existing = nil
	}
	want, err := Plan(pod, vol, existing)
	if err != nil || want == nil {
		return err
	}
	if _, err := c.client.CoreV1().PersistentVolumeClaims(pod.Namespace).Create(ctx, want, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create PVC %s: %w", want.Name, err)
	}
	c.log.Info("created claim for ephemeral volume", "pod", pod.Namespace+"/"+pod.Name, "claim", want.Name)
	return nil
}
