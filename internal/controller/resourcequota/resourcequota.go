// Package resourcequota is the quota controller: it keeps every
// ResourceQuota's status.hard equal to spec.hard and status.used equal to
// what the namespace's objects actually use. Admission charges usage as
// objects are created; this controller recounts when a quota changes,
// when objects go away or stop counting (a pod that finished), and
// periodically, which is how usage is released.
package resourcequota

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
	"github.com/orca-project/orca/internal/quota"
)

// ResyncPeriod is how often every quota is recounted regardless of
// events (upstream's --resource-quota-sync-period default).
const ResyncPeriod = 5 * time.Minute

// lister lists one resource's objects in a namespace.
type lister func(ns string) ([]runtime.Object, error)

// Controller recounts quotas. Keys are namespace/name of quotas.
type Controller struct {
	client   kubernetes.Interface
	rqLister corelisters.ResourceQuotaLister
	listers  map[schema.GroupResource]lister
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	log      *slog.Logger

	// Resync overrides ResyncPeriod (tests).
	Resync time.Duration

	// versions caches the served version of groups counted through
	// count/<resource>.<group> without an informer.
	mu       sync.Mutex
	versions map[string]string
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) *Controller {
	core := factory.Core().V1()
	c := &Controller{
		client:   client,
		rqLister: core.ResourceQuotas().Lister(),
		listers:  map[schema.GroupResource]lister{},
		queue:    controllerutil.NewQueue[string]("resourcequota", metrics),
		log:      log.With("controller", "resourcequota"),
		Resync:   ResyncPeriod,
		versions: map[string]string{},
	}
	rqInf := core.ResourceQuotas().Informer()
	c.synced = append(c.synced, rqInf.HasSynced)
	_, _ = rqInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueQuota,
		// Status updates are this controller's and admission's own; only
		// a change of spec (or a status that does not reflect it) needs a
		// recount.
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.ResourceQuota)
			n, ok2 := cur.(*corev1.ResourceQuota)
			if ok1 && ok2 && quota.Equals(o.Spec.Hard, n.Spec.Hard) && quota.Equals(n.Spec.Hard, n.Status.Hard) &&
				apiequality.Semantic.DeepEqual(o.Spec.Scopes, n.Spec.Scopes) && apiequality.Semantic.DeepEqual(o.Spec.ScopeSelector, n.Spec.ScopeSelector) {
				return
			}
			c.enqueueQuota(cur)
		},
	})
	c.listers[gr("resourcequotas")] = func(ns string) ([]runtime.Object, error) {
		return toObjects(core.ResourceQuotas().Lister().ResourceQuotas(ns).List(labels.Everything()))
	}

	pods := core.Pods()
	c.watch(pods.Informer(), gr("pods"), func(old, cur any) bool {
		o, ok1 := old.(*corev1.Pod)
		n, ok2 := cur.(*corev1.Pod)
		if !ok1 || !ok2 {
			return false
		}
		now := time.Now()
		// A pod that finished (or is overdue for deletion) stops counting;
		// a resize changes what it counts.
		return quota.CountsAgainstQuota(o, now) != quota.CountsAgainstQuota(n, now) ||
			!apiequality.Semantic.DeepEqual(o.Spec.Containers, n.Spec.Containers)
	}, func(ns string) ([]runtime.Object, error) {
		return toObjects(pods.Lister().Pods(ns).List(labels.Everything()))
	})
	services := core.Services()
	c.watch(services.Informer(), gr("services"), func(old, cur any) bool {
		o, ok1 := old.(*corev1.Service)
		n, ok2 := cur.(*corev1.Service)
		return ok1 && ok2 && (o.Spec.Type != n.Spec.Type || len(o.Spec.Ports) != len(n.Spec.Ports))
	}, func(ns string) ([]runtime.Object, error) {
		return toObjects(services.Lister().Services(ns).List(labels.Everything()))
	})
	claims := core.PersistentVolumeClaims()
	c.watch(claims.Informer(), gr("persistentvolumeclaims"), func(old, cur any) bool {
		o, ok1 := old.(*corev1.PersistentVolumeClaim)
		n, ok2 := cur.(*corev1.PersistentVolumeClaim)
		return ok1 && ok2 && !apiequality.Semantic.DeepEqual(o.Spec.Resources, n.Spec.Resources)
	}, func(ns string) ([]runtime.Object, error) {
		return toObjects(claims.Lister().PersistentVolumeClaims(ns).List(labels.Everything()))
	})
	configMaps := core.ConfigMaps()
	c.watch(configMaps.Informer(), gr("configmaps"), nil, func(ns string) ([]runtime.Object, error) {
		return toObjects(configMaps.Lister().ConfigMaps(ns).List(labels.Everything()))
	})
	secrets := core.Secrets()
	c.watch(secrets.Informer(), gr("secrets"), nil, func(ns string) ([]runtime.Object, error) {
		return toObjects(secrets.Lister().Secrets(ns).List(labels.Everything()))
	})
	rcs := core.ReplicationControllers()
	c.watch(rcs.Informer(), gr("replicationcontrollers"), nil, func(ns string) ([]runtime.Object, error) {
		return toObjects(rcs.Lister().ReplicationControllers(ns).List(labels.Everything()))
	})
	return c
}

func gr(resource string) schema.GroupResource { return schema.GroupResource{Resource: resource} }

// groupResource parses count/<resource>[.<group>].
func (n countName) groupResource() schema.GroupResource {
	s := strings.TrimPrefix(string(n), "count/")
	if i := strings.Index(s, "."); i >= 0 {
		return schema.GroupResource{Resource: s[:i], Group: s[i+1:]}
	}
	return schema.GroupResource{Resource: s}
}

type countName corev1.ResourceName

func toObjects[T runtime.Object](items []T, err error) ([]runtime.Object, error) {
	if err != nil {
		return nil, err
	}
	out := make([]runtime.Object, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out, nil
}

// watch registers a resource: deleting one of its objects, or an update
// that changes(old, cur), recounts the quotas of its namespace. Creates
// do not: admission already charged them.
func (c *Controller) watch(inf cache.SharedIndexInformer, g schema.GroupResource, changes func(old, cur any) bool, l lister) {
	c.listers[g] = l
	c.synced = append(c.synced, inf.HasSynced)
	h := cache.ResourceEventHandlerFuncs{DeleteFunc: c.enqueueNamespaceOf}
	if changes != nil {
		h.UpdateFunc = func(old, cur any) {
			if changes(old, cur) {
				c.enqueueNamespaceOf(cur)
			}
		}
	}
	_, _ = inf.AddEventHandler(h)
}

// Name names the controller.
func (c *Controller) Name() string { return "resourcequota" }

func (c *Controller) enqueueQuota(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) enqueueNamespaceOf(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	c.enqueueNamespace(m.GetNamespace())
}

func (c *Controller) enqueueNamespace(ns string) {
	qs, err := c.rqLister.ResourceQuotas(ns).List(labels.Everything())
	if err != nil {
		return
	}
	for _, q := range qs {
		c.queue.Add(q.Namespace + "/" + q.Name)
	}
}

func (c *Controller) enqueueAll() {
	qs, err := c.rqLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, q := range qs {
		c.queue.Add(q.Namespace + "/" + q.Name)
	}
}

// Run recounts quotas until ctx ends, and every quota each Resync.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "resourcequota", Synced: c.synced,
		// A conflict is admission's write crossing ours; the retry
		// recounts over the newer object.
		Workers:   []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "quota", controllerutil.Expected(apierrors.IsConflict))},
		Alongside: []func(context.Context){controllerutil.Every(c.Resync, func(context.Context) { c.enqueueAll() })},
	}.Run(ctx)
}

// sync recounts one quota and writes its status if it changed.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	q, err := c.rqLister.ResourceQuotas(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	used, err := c.Usage(ctx, q)
	if err != nil {
		return fmt.Errorf("count usage of quota %s: %w", key, err)
	}
	if quota.Equals(q.Status.Hard, q.Spec.Hard) && quota.Equals(q.Status.Used, used) {
		return nil
	}
	next := q.DeepCopy()
	next.Status.Hard = q.Spec.Hard.DeepCopy()
	next.Status.Used = used
	// Written against the resourceVersion the count was made from, so a
	// charge admission made meanwhile makes this a conflict and a recount.
	_, err = c.client.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, next, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Usage counts what a quota's namespace uses of the resources it limits.
func (c *Controller) Usage(ctx context.Context, q *corev1.ResourceQuota) (corev1.ResourceList, error) {
	hard := quota.Names(q.Spec.Hard)
	groups := map[schema.GroupResource]bool{}
	for g := range c.listers {
		groups[g] = true
	}
	for _, n := range hard {
		if strings.HasPrefix(string(n), "count/") {
			groups[countName(n).groupResource()] = true
		}
	}
	used := corev1.ResourceList{}
	for g := range groups {
		e := quota.ForResource(g)
		names := e.MatchingResources(hard)
		if len(names) == 0 {
			continue
		}
		objs, err := c.list(ctx, g, q.Namespace)
		if err != nil {
			return nil, err
		}
		u := corev1.ResourceList{}
		for _, n := range names {
			u[n] = *zero()
		}
		for _, obj := range objs {
			in, err := quota.InScope(q, e, obj)
			if err != nil {
				return nil, err
			}
			if !in {
				continue
			}
			ou, err := e.Usage(obj)
			if err != nil {
				return nil, err
			}
			u = quota.Add(u, ou)
		}
		used = quota.Add(used, quota.Mask(u, names))
	}
	return quota.Mask(used, hard), nil
}

func (c *Controller) list(ctx context.Context, g schema.GroupResource, ns string) ([]runtime.Object, error) {
	if l, ok := c.listers[g]; ok {
		return l(ns)
	}
	return c.listLive(ctx, g, ns)
}

// listLive lists a resource without an informer, as metadata only: an
// object count needs nothing more.
func (c *Controller) listLive(ctx context.Context, g schema.GroupResource, ns string) ([]runtime.Object, error) {
	version, err := c.version(g.Group)
	if err != nil || version == "" {
		return nil, err // a group that is not served has nothing to count
	}
	prefix := "/apis/" + g.Group + "/" + version
	if g.Group == "" {
		prefix = "/api/" + version
	}
	var out []runtime.Object
	cont := ""
	for {
		req := c.client.Discovery().RESTClient().Get().AbsPath(prefix, "namespaces", ns, g.Resource).
			SetHeader("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1").Param("limit", "500")
		if cont != "" {
			req = req.Param("continue", cont)
		}
		raw, err := req.Do(ctx).Raw()
		if apierrors.IsNotFound(err) {
			return nil, nil // not served: nothing to count
		}
		if err != nil {
			return nil, fmt.Errorf("list %s in %s: %w", g, ns, err)
		}
		var list metav1.PartialObjectMetadataList
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("decode %s list: %w", g, err)
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
		if cont = list.Continue; cont == "" {
			return out, nil
		}
	}
}

func (c *Controller) version(group string) (string, error) {
	if group == "" {
		return "v1", nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.versions[group]; ok {
		return v, nil
	}
	groups, err := c.client.Discovery().ServerGroups()
	if err != nil {
		return "", fmt.Errorf("discover API groups: %w", err)
	}
	for _, g := range groups.Groups {
		if g.Name == group {
			c.versions[group] = g.PreferredVersion.Version
			return g.PreferredVersion.Version, nil
		}
	}
	return "", nil
}

func zero() *resource.Quantity { return resource.NewQuantity(0, resource.DecimalSI) }
