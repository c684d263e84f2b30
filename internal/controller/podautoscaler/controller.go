package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	resourceclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
	customclient "k8s.io/metrics/pkg/client/custom_metrics"
	externalclient "k8s.io/metrics/pkg/client/external_metrics"
	"k8s.io/utils/clock"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Name is upstream's name for the controller.
const Name = "horizontalpodautoscaling"

// SyncPeriod is --horizontal-pod-autoscaler-sync-period: how often each
// HPA is looked at again.
const SyncPeriod = 15 * time.Second

// Controller reconciles HorizontalPodAutoscalers. Keys are namespace/name.
type Controller struct {
	client     kubernetes.Interface
	hpaLister  autoscalinglisters.HorizontalPodAutoscalerLister
	podLister  corelisters.PodLister
	synced     []cache.InformerSynced
	scales     scale.ScalesGetter
	mapper     meta.ResettableRESTMapper
	metrics    metricsSource
	invalidate func(stop <-chan struct{})
	queue      workqueue.TypedRateLimitingInterface[string]
	events     record.EventBroadcaster
	recorder   record.EventRecorder
	clock      clock.PassiveClock
	syncPeriod time.Duration
	log        *slog.Logger

	mu        sync.Mutex
	histories map[string]*history
	// selectors are the target selectors each HPA last used, by key, to
	// find pods that two HPAs would scale.
	selectors map[string]labels.Selector
}

// New builds the controller: the target's /scale through client-go's scale
// client over a discovery REST mapper, metrics through the metrics APIs'
// clients from cfg.
func New(cfg *rest.Config, client kubernetes.Interface, disc discovery.DiscoveryInterface, factory informers.SharedInformerFactory, qm workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	scales, err := scale.NewForConfig(cfg, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(disc))
	if err != nil {
		return nil, fmt.Errorf("horizontalpodautoscaling: scale client: %w", err)
	}
	resource, err := resourceclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("horizontalpodautoscaling: resource metrics client: %w", err)
	}
	external, err := externalclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("horizontalpodautoscaling: external metrics client: %w", err)
	}
	apis := customclient.NewAvailableAPIsGetter(disc)
	c := newController(client, factory, qm, log, clock.RealClock{})
	c.scales, c.mapper = scales, mapper
	c.metrics = apiMetrics{resource: resource, custom: customclient.NewForConfig(cfg, mapper, apis), external: external}
	// The custom metrics API's version and the REST mappings are
	// discovered again each period, as an adapter may come and go.
	c.invalidate = func(stop <-chan struct{}) { customclient.PeriodicallyInvalidate(apis, c.syncPeriod, stop) }
	c.events = record.NewBroadcaster()
	c.recorder = c.events.NewRecorder(scheme.Scheme, v1.EventSource{Component: "horizontal-pod-autoscaler"})
	return c, nil
}

func newController(client kubernetes.Interface, factory informers.SharedInformerFactory, qm workqueue.MetricsProvider, log *slog.Logger, clk clock.PassiveClock) *Controller {
	hpaInf := factory.Autoscaling().V2().HorizontalPodAutoscalers()
	podInf := factory.Core().V1().Pods()
	c := &Controller{
		client:     client,
		hpaLister:  hpaInf.Lister(),
		podLister:  podInf.Lister(),
		synced:     []cache.InformerSynced{hpaInf.Informer().HasSynced, podInf.Informer().HasSynced},
		queue:      controllerutil.NewQueue[string](Name, qm),
		clock:      clk,
		syncPeriod: SyncPeriod,
		log:        log.With("controller", Name),
		histories:  map[string]*history{},
		selectors:  map[string]labels.Selector{},
	}
	_, _ = hpaInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue,
		// The controller's own status writes come back as updates; only
		// a new spec is worth a sync before the period is up.
		UpdateFunc: func(old, cur any) {
			if old.(*autoscalingv2.HorizontalPodAutoscaler).Generation != cur.(*autoscalingv2.HorizontalPodAutoscaler).Generation {
				c.enqueue(cur)
			}
		},
		DeleteFunc: c.forget,
	})
	return c
}

// Name names the controller.
func (c *Controller) Name() string { return Name }

// Run works the queue until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	l := controllerutil.Loop{
		Name: "horizontalpodautoscaling", Events: c.events, Client: c.client, Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "hpa")},
	}
	if c.invalidate != nil {
		l.Alongside = append(l.Alongside, func(ctx context.Context) { c.invalidate(ctx.Done()) })
	}
	return l.Run(ctx)
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) forget(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	c.mu.Lock()
	delete(c.histories, key)
	delete(c.selectors, key)
	c.mu.Unlock()
}

// sync reconciles one HPA and schedules its next look a sync period on,
// also after a failure, which is logged: upstream retries at the period,
// not faster.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	hpa, err := c.hpaLister.HorizontalPodAutoscalers(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.forget(cache.ExplicitKey(key))
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.reconcile(ctx, hpa.DeepCopy(), key); err != nil {
		c.log.Warn("reconcile failed", "hpa", key, "err", err)
	}
	c.queue.AddAfter(key, c.syncPeriod)
	return nil
}

func (c *Controller) historyFor(key string) *history {
	h := c.histories[key]
	if h == nil {
		h = &history{}
		c.histories[key] = h
	}
	return h
}

// reconcile is upstream's reconcileAutoscaler.
func (c *Controller) reconcile(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, key string) error {
	now := c.clock.Now()
	original := hpa.Status.DeepCopy()
	ref := hpa.Spec.ScaleTargetRef
	reference := fmt.Sprintf("%s/%s/%s", ref.Kind, hpa.Namespace, ref.Name)

	sc, targetGR, err := c.getScale(ctx, hpa)
	if err != nil {
		c.recorder.Event(hpa, v1.EventTypeWarning, "FailedGetScale", err.Error())
		setCondition(hpa, autoscalingv2.AbleToScale, v1.ConditionFalse, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", now, err)
		c.updateStatusIfNeeded(ctx, original, hpa)
		return fmt.Errorf("failed to query scale subresource for %s: %w", reference, err)
	}
	setCondition(hpa, autoscalingv2.AbleToScale, v1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale", now)
	current := sc.Spec.Replicas

	// The queue hands a key to one worker at a time, so its history needs
	// no lock of its own; the map does.
	c.mu.Lock()
	h := c.historyFor(key)
	c.mu.Unlock()
	if len(h.recommendations) == 0 {
		h.recommendations = []recommendation{{current, now}}
	}

	minReplicas := int32(1)
	if hpa.Spec.MinReplicas != nil {
		minReplicas = *hpa.Spec.MinReplicas
	}
	scaledToZero := conditionTrue(hpa, autoscalingv2.ScaledToZero)
	var (
		desired  int32
		reason   string
		statuses []autoscalingv2.MetricStatus
		retErr   error
	)
	rescale, compute := true, true
	switch {
	case current == 0:
		// Scaled to zero by hand, scaling stays off; scaled to zero by
		// the HPA, object and external metrics can bring it back.
		if !((minReplicas != 0 && scaledToZero) || (scaledToZero && hasObjectOrExternalMetrics(hpa))) {
			compute, rescale = false, false
			setCondition(hpa, autoscalingv2.ScalingActive, v1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero", now)
		}
	case current > hpa.Spec.MaxReplicas:
		reason, desired, compute = "Current number of replicas above Spec.MaxReplicas", hpa.Spec.MaxReplicas, false
	case current < minReplicas:
		reason, desired, compute = "Current number of replicas below Spec.MinReplicas", minReplicas, false
	}
	if compute {
		res := c.computeReplicas(ctx, hpa, sc, now)
		statuses = res.statuses
		if res.replicas == -1 {
			c.setStatus(hpa, current, hpa.Status.DesiredReplicas, statuses, false, now)
			c.updateStatusIfNeeded(ctx, original, hpa)
			c.recorder.Event(hpa, v1.EventTypeWarning, "FailedComputeMetricsReplicas", res.err.Error())
			return fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s: %w", reference, res.err)
		}
		retErr = res.err
		metric := ""
		if res.replicas > desired {
			desired, metric = res.replicas, res.metric
		}
		if desired > current {
			reason = metric + " above target"
		}
		if desired < current {
			reason = "All metrics below target"
		}
		var l limit
		if hpa.Spec.Behavior == nil {
			l = h.normalizeLegacy(current, desired, minReplicas, hpa.Spec.MaxReplicas, now)
		} else {
			l = h.normalize(hpa.Spec.Behavior, current, desired, minReplicas, hpa.Spec.MaxReplicas, now)
		}
		setCondition(hpa, autoscalingv2.AbleToScale, v1.ConditionTrue, l.ableReason, "%s", now, l.ableMessage)
		limited := v1.ConditionFalse
		if l.limited {
			limited = v1.ConditionTrue
		}
		setCondition(hpa, autoscalingv2.ScalingLimited, limited, l.limitReason, "%s", now, l.limitMessage)
		desired = l.replicas
		if current == 0 && minReplicas != 0 && scaledToZero && desired < minReplicas {
			desired = minReplicas
			if reason == "" {
				reason = "Current number of replicas below Spec.MinReplicas"
			}
		}
		rescale = desired != current
	}

	if rescale {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			sc.Spec.Replicas = desired
			_, err := c.scales.Scales(hpa.Namespace).Update(ctx, targetGR, sc, metav1.UpdateOptions{})
			if err != nil {
				if latest, getErr := c.scales.Scales(hpa.Namespace).Get(ctx, targetGR, ref.Name, metav1.GetOptions{}); getErr == nil {
					sc = latest
				}
			}
			return err
		})
		if err != nil {
			c.recorder.Eventf(hpa, v1.EventTypeWarning, "FailedRescale", "New size: %d; reason: %s; error: %v", desired, reason, err.Error())
			setCondition(hpa, autoscalingv2.AbleToScale, v1.ConditionFalse, "FailedUpdateScale", "the HPA controller was unable to update the target scale: %v", now, err)
			c.setStatus(hpa, current, hpa.Status.DesiredReplicas, statuses, false, now)
			c.updateStatusIfNeeded(ctx, original, hpa)
			return fmt.Errorf("failed to rescale %s: %w", reference, err)
		}
		setCondition(hpa, autoscalingv2.AbleToScale, v1.ConditionTrue, "SucceededRescale", "the HPA controller was able to update the target scale to %d", now, desired)
		c.recorder.Eventf(hpa, v1.EventTypeNormal, "SuccessfulRescale", "New size: %d; reason: %s", desired, reason)
		h.recordScale(hpa.Spec.Behavior, current, desired, now)
		c.log.Info("rescaled", "hpa", key, "from", current, "to", desired, "reason", reason)
		if current > 0 && desired == 0 && minReplicas == 0 && hasObjectOrExternalMetrics(hpa) {
			setCondition(hpa, autoscalingv2.ScaledToZero, v1.ConditionTrue, "ScaledToZero", "the HPA controller scaled the workload to zero", now)
		} else {
			setCondition(hpa, autoscalingv2.ScaledToZero, v1.ConditionFalse, "NotScaledToZero", "the HPA controller did not scale the workload to zero", now)
		}
	} else {
		desired = current
	}
	c.setStatus(hpa, current, desired, statuses, rescale, now)
	if err := c.updateStatusIfNeeded(ctx, original, hpa); err != nil {
		return err
	}
	return retErr
}

// getScale reads the target's /scale, trying each resource its kind maps
// to. A kind the mapper does not know yet (a CRD just created) makes it
// discover again.
func (c *Controller) getScale(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler) (*autoscalingv1.Scale, schema.GroupResource, error) {
	ref := hpa.Spec.ScaleTargetRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, schema.GroupResource{}, err
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	mappings, err := c.mapper.RESTMappings(gk)
	if err != nil {
		c.mapper.Reset()
		return nil, schema.GroupResource{}, err
	}
	var firstErr error
	for i, m := range mappings {
		gr := m.Resource.GroupResource()
		sc, err := c.scales.Scales(hpa.Namespace).Get(ctx, gr, ref.Name, metav1.GetOptions{})
		if err == nil {
			return sc, gr, nil
		}
		if i == 0 {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = errors.New("unrecognized resource")
	}
	return nil, schema.GroupResource{}, firstErr
}

// computeReplicas is upstream's computeReplicasForMetrics: the target's
// selector, then every metric, combined.
func (c *Controller) computeReplicas(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, sc *autoscalingv1.Scale, now time.Time) combined {
	if sc.Status.Selector == "" {
		c.recorder.Event(hpa, v1.EventTypeWarning, "SelectorRequired", "selector is required")
		setCondition(hpa, autoscalingv2.ScalingActive, v1.ConditionFalse, "InvalidSelector", "the HPA target's scale is missing a selector", now)
		return combined{replicas: -1, err: errors.New("selector is required")}
	}
	selector, err := labels.Parse(sc.Status.Selector)
	if err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		c.recorder.Event(hpa, v1.EventTypeWarning, "InvalidSelector", msg)
		setCondition(hpa, autoscalingv2.ScalingActive, v1.ConditionFalse, "InvalidSelector", "%s", now, msg)
		return combined{replicas: -1, err: errors.New(msg)}
	}
	pods, err := c.podLister.Pods(hpa.Namespace).List(selector)
	if err != nil {
		return combined{replicas: -1, err: err}
	}
	if others := c.alsoSelecting(hpa, selector, pods); len(others) > 0 {
		msg := fmt.Sprintf("pods by selector %v are controlled by more than one HPA (e.g. %v)", sc.Status.Selector, others)
		c.recorder.Event(hpa, v1.EventTypeWarning, "AmbiguousSelector", msg)
		setCondition(hpa, autoscalingv2.ScalingActive, v1.ConditionFalse, "AmbiguousSelector", "%s", now, msg)
		return combined{replicas: -1, err: errors.New(msg)}
	}
	comp := computer{metrics: c.metrics, pods: pods, selector: selector, tol: tolerancesFor(hpa), now: now}
	results := make([]metricResult, len(hpa.Spec.Metrics))
	for i, spec := range hpa.Spec.Metrics {
		results[i] = comp.compute(ctx, hpa, spec, sc.Spec.Replicas, sc.Status.Replicas)
		if r := results[i]; r.err != nil && r.reason != "" {
			c.recorder.Event(hpa, v1.EventTypeWarning, r.reason, r.detail)
		}
	}
	out := combine(results, sc.Spec.Replicas)
	if out.invalid != nil {
		setCondition(hpa, autoscalingv2.ScalingActive, v1.ConditionFalse, out.invalid.reason, "the HPA was unable to compute the replica count: %v", now, out.invalid.detail)
		return out
	}
	setCondition(hpa, autoscalingv2.ScalingActive, v1.ConditionTrue, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from %s", now, out.metric)
	return out
}

// alsoSelecting records hpa's selector and returns it with the keys of
// other HPAs of its namespace whose selectors pick any of pods, as
// upstream's selector tracker does; nil when hpa is alone.
func (c *Controller) alsoSelecting(hpa *autoscalingv2.HorizontalPodAutoscaler, selector labels.Selector, pods []*v1.Pod) []string {
	key := hpa.Namespace + "/" + hpa.Name
	c.mu.Lock()
	defer c.mu.Unlock()
	c.selectors[key] = selector
	return ambiguous(key, hpa.Namespace, c.selectors, pods)
}

// ambiguous is the keys, key first, of the namespace's selectors that
// match some pod, when more than key's does.
func ambiguous(key, namespace string, selectors map[string]labels.Selector, pods []*v1.Pod) []string {
	var others []string
	for k, sel := range selectors {
		if k == key || !strings.HasPrefix(k, namespace+"/") {
			continue
		}
		for _, p := range pods {
			if sel.Matches(labels.Set(p.Labels)) {
				others = append(others, k)
				break
			}
		}
	}
	if len(others) == 0 {
		return nil
	}
	sort.Strings(others)
	return append([]string{key}, others...)
}

func (c *Controller) setStatus(hpa *autoscalingv2.HorizontalPodAutoscaler, current, desired int32, statuses []autoscalingv2.MetricStatus, rescale bool, now time.Time) {
	gen := hpa.Generation
	hpa.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		CurrentReplicas:    current,
		DesiredReplicas:    desired,
		LastScaleTime:      hpa.Status.LastScaleTime,
		CurrentMetrics:     statuses,
		Conditions:         hpa.Status.Conditions,
		ObservedGeneration: &gen,
	}
	if rescale {
		t := metav1.NewTime(now)
		hpa.Status.LastScaleTime = &t
	}
}

func (c *Controller) updateStatusIfNeeded(ctx context.Context, original *autoscalingv2.HorizontalPodAutoscalerStatus, hpa *autoscalingv2.HorizontalPodAutoscaler) error {
	if equality.Semantic.DeepEqual(original, &hpa.Status) {
		return nil
	}
	if _, err := c.client.AutoscalingV2().HorizontalPodAutoscalers(hpa.Namespace).UpdateStatus(ctx, hpa, metav1.UpdateOptions{}); err != nil {
		c.recorder.Event(hpa, v1.EventTypeWarning, "FailedUpdateStatus", err.Error())
		return fmt.Errorf("failed to update status for %s: %w", hpa.Name, err)
	}
	return nil
}
