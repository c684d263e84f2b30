// Package validatingadmissionpolicystatus type-checks the CEL expressions
// of every ValidatingAdmissionPolicy against the schemas of the kinds it
// matches and reports what it finds in status.typeChecking, as upstream's
// validatingadmissionpolicy-status-controller does. An expression that
// names a field the kind lacks (object.spec.replicass on a Deployment)
// still admits or denies as it always did: the warning is advice for the
// policy's author, who otherwise learns of the mistake only when the
// expression errors at admission time.
//
// Each policy is checked once per generation: status.observedGeneration
// tells which spec the warnings describe.
package validatingadmissionpolicystatus

import (
	"context"
	"fmt"
	"log/slog"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	admissionregistrationlisters "k8s.io/client-go/listers/admissionregistration/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// FieldManager owns observedGeneration and typeChecking of the status,
// under upstream's name, so that upstream's and Orca's controllers take
// over each other's fields without conflict.
const FieldManager = "validatingadmissionpolicy-status"

// controllerName is upstream's name of the controller, and its service
// account's.
const controllerName = "validatingadmissionpolicy-status-controller"

// Controller reports type checking. Keys are policy names.
type Controller struct {
	client   kubernetes.Interface
	policies admissionregistrationlisters.ValidatingAdmissionPolicyLister
	synced   cache.InformerSynced
	checker  checker
	queue    workqueue.TypedRateLimitingInterface[string]
	log      *slog.Logger
}

// New builds the controller over the shared informers; disc reaches the
// API server's discovery and OpenAPI v3 documents.
func New(client kubernetes.Interface, disc discovery.DiscoveryInterface, factory informers.SharedInformerFactory, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	return newController(client, factory, newDiscoveryChecker(disc), metrics, log)
}

func newController(client kubernetes.Interface, factory informers.SharedInformerFactory, chk checker, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	inf := factory.Admissionregistration().V1().ValidatingAdmissionPolicies()
	c := &Controller{
		client:   client,
		policies: inf.Lister(),
		synced:   inf.Informer().HasSynced,
		checker:  chk,
		queue:    controllerutil.NewQueue[string](FieldManager, metrics),
		log:      log.With("controller", controllerName),
	}
	// Deletes need nothing: the status goes with the policy.
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
	}); err != nil {
		return nil, fmt.Errorf("%s: handler: %w", controllerName, err)
	}
	return c, nil
}

// Name names the controller as upstream's controller manager does.
func (c *Controller) Name() string { return controllerName }

// enqueue queues every policy, checked or not: sync decides, so that a
// policy whose write failed or raced a newer spec is looked at again on
// any event.
func (c *Controller) enqueue(obj any) {
	if p, ok := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok {
		c.queue.Add(p.Name)
	}
}

// Run processes policies until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Loop{
		Name: controllerName, Synced: []cache.InformerSynced{c.synced},
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(workers, c.queue, c.sync, c.log, "policy")},
	}.Run(ctx)
}

// sync type-checks one policy whose status lags its spec and writes the
// result.
func (c *Controller) sync(ctx context.Context, name string) error {
	p, err := c.policies.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if upToDate(p) {
		return nil
	}
	warnings, err := c.checker.Check(p)
	if err != nil {
		return fmt.Errorf("type-check policy %s: %w", name, err)
	}
	// The status names the generation it was computed from: should the
	// spec have changed since the cache saw it, the newer generation
	// stays ahead of observedGeneration and its event brings the policy
	// back here.
	if err := c.apply(ctx, name, statusFor(p, warnings)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("write status of policy %s: %w", name, err)
	}
	c.log.Debug("type-checked policy", "policy", name, "generation", p.Generation, "warnings", len(warnings))
	return nil
}

// apply owns the two status fields the controller computes, forcing, as
// upstream does: they are the controller's by definition, and an apply
// needs no read-modify-write of the conditions others write.
func (c *Controller) apply(ctx context.Context, name string, st admissionregistrationv1.ValidatingAdmissionPolicyStatus) error {
	tc := admissionregistrationv1ac.TypeChecking()
	for _, w := range st.TypeChecking.ExpressionWarnings {
		tc.WithExpressionWarnings(admissionregistrationv1ac.ExpressionWarning().WithFieldRef(w.FieldRef).WithWarning(w.Warning))
	}
	cfg := admissionregistrationv1ac.ValidatingAdmissionPolicy(name).
		WithStatus(admissionregistrationv1ac.ValidatingAdmissionPolicyStatus().
			WithObservedGeneration(st.ObservedGeneration).
			WithTypeChecking(tc))
	_, err := c.client.AdmissionregistrationV1().ValidatingAdmissionPolicies().ApplyStatus(ctx, cfg, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return err
}
