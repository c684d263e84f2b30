// Package clusterroleaggregation fills the rules of every ClusterRole that
// has an aggregationRule with the union of the rules of the ClusterRoles
// its selectors match, as upstream's clusterrole-aggregation controller
// does: the admin, edit and view roles are empty until it runs, and a role
// labelled rbac.authorization.k8s.io/aggregate-to-view=true (say) extends
// view, edit and admin at once.
package clusterroleaggregation

import (
	"context"
	"fmt"
	"log/slog"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// FieldManager owns the rules of aggregated roles, under upstream's name.
const FieldManager = "clusterrole-aggregation-controller"

// Controller aggregates ClusterRoles. Keys are ClusterRole names.
type Controller struct {
	client kubernetes.Interface
	roles  rbaclisters.ClusterRoleLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
	log    *slog.Logger
}

// New builds the controller over the shared informers.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	inf := factory.Rbac().V1().ClusterRoles()
	c := &Controller{
		client: client,
		roles:  inf.Lister(),
		synced: inf.Informer().HasSynced,
		queue:  controllerutil.NewQueue[string]("clusterrole_aggregation", metrics),
		log:    log.With("controller", "clusterrole-aggregation"),
	}
	// Which aggregated role a change concerns would take the selectors
	// of every aggregated role to tell; there are few ClusterRoles, so
	// any change requeues every aggregated role, as upstream does.
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.enqueueAggregated() },
		UpdateFunc: func(_, _ any) { c.enqueueAggregated() },
		DeleteFunc: func(any) { c.enqueueAggregated() },
	}); err != nil {
		return nil, fmt.Errorf("clusterrole-aggregation: handler: %w", err)
	}
	return c, nil
}

// Name names the controller as upstream's controller manager does.
func (c *Controller) Name() string { return "clusterrole-aggregation" }

func (c *Controller) enqueueAggregated() {
	all, err := c.roles.List(labels.Everything())
	if err != nil {
		return
	}
	for _, r := range all {
		if r.AggregationRule != nil {
			c.queue.Add(r.Name)
		}
	}
}

// Run processes roles until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: "clusterrole-aggregation", Synced: []cache.InformerSynced{c.synced},
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "clusterrole")},
	}.Run(ctx)
}

// sync writes the aggregated rules of one role when they differ from its
// current ones.
func (c *Controller) sync(ctx context.Context, name string) error {
	role, err := c.roles.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if role.AggregationRule == nil {
		return nil
	}
	all, err := c.roles.List(labels.Everything())
	if err != nil {
		return err
	}
	rules, err := Aggregate(role, all)
	if err != nil {
		// An invalid selector stays invalid until the role is edited,
		// which requeues it.
		c.log.Warn("invalid aggregation selector", "clusterrole", name, "err", err)
		return nil
	}
	if equality.Semantic.DeepEqual(rules, role.Rules) {
		return nil
	}
	err = c.apply(ctx, name, rules)
	if apierrors.IsUnsupportedMediaType(err) {
		// A server without server-side apply.
		err = c.update(ctx, role, rules)
	}
	if err != nil {
		return fmt.Errorf("write rules of clusterrole %s: %w", name, err)
	}
	c.log.Debug("aggregated rules", "clusterrole", name, "rules", len(rules))
	return nil
}

// apply owns the rules field alone, forcing: the rules of an aggregated
// role are the controller's by definition, and apply leaves the rest of
// the object to its other writers without a read-modify-write conflict.
func (c *Controller) apply(ctx context.Context, name string, rules []rbacv1.PolicyRule) error {
	cfg := rbacv1ac.ClusterRole(name)
	for _, r := range rules {
		cfg.WithRules(rbacv1ac.PolicyRule().
			WithVerbs(r.Verbs...).
			WithAPIGroups(r.APIGroups...).
			WithResources(r.Resources...).
			WithResourceNames(r.ResourceNames...).
			WithNonResourceURLs(r.NonResourceURLs...))
	}
	_, err := c.client.RbacV1().ClusterRoles().Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return err
}

func (c *Controller) update(ctx context.Context, role *rbacv1.ClusterRole, rules []rbacv1.PolicyRule) error {
	next := role.DeepCopy()
	next.Rules = rules
	_, err := c.client.RbacV1().ClusterRoles().Update(ctx, next, metav1.UpdateOptions{FieldManager: FieldManager})
	return err
}
