package flowcontrol

import (
	"context"
	"errors"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	flowcontrolapply "k8s.io/client-go/applyconfigurations/flowcontrol/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// ConfigConsumerFieldManager is the field manager of the Dangling
// conditions, upstream's.
const ConfigConsumerFieldManager = "api-priority-and-fairness-config-consumer-v1"

// Run is upstream's config controller: it follows the FlowSchemas and
// PriorityLevelConfigurations client serves, gives every change to the
// dispatcher, writes the FlowSchemas' Dangling conditions, and moves seats
// between levels every 10 seconds. It returns when ctx ends.
func (d *Dispatcher) Run(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	fsInformer := factory.Flowcontrol().V1().FlowSchemas()
	plInformer := factory.Flowcontrol().V1().PriorityLevelConfigurations()
	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	// Only what the dispatcher reads triggers a new digest: a level's
	// spec, a schema's spec or status.
	if _, err := plInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { notify() },
		UpdateFunc: func(o, n any) {
			if !apiequality.Semantic.DeepEqual(o.(*flowcontrolv1.PriorityLevelConfiguration).Spec, n.(*flowcontrolv1.PriorityLevelConfiguration).Spec) {
				notify()
			}
		},
		DeleteFunc: func(any) { notify() },
	}); err != nil {
		return err
	}
	if _, err := fsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { notify() },
		UpdateFunc: func(o, n any) {
			of, nf := o.(*flowcontrolv1.FlowSchema), n.(*flowcontrolv1.FlowSchema)
			if !apiequality.Semantic.DeepEqual(of.Spec, nf.Spec) || !apiequality.Semantic.DeepEqual(of.Status, nf.Status) {
				notify()
			}
		},
		DeleteFunc: func(any) { notify() },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), fsInformer.Informer().HasSynced, plInformer.Informer().HasSynced) {
		return nil
	}
	d.log.Info("API Priority and Fairness configuration synced")
	notify()

	borrow := time.NewTicker(adjustPeriod)
	defer borrow.Stop()
	var retry <-chan time.Time
	backoff := time.Second
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-borrow.C:
			d.adjust()
			continue
		case <-changed:
		case <-retry:
		}
		pls, _ := plInformer.Lister().List(labels.Everything())
		fss, _ := fsInformer.Lister().List(labels.Everything())
		err := d.writeConditions(ctx, client, d.update(pls, fss))
		d.syncOnce.Do(func() { close(d.synced) })
		if err == nil {
			retry, backoff = nil, time.Second
			continue
		}
		if ctx.Err() != nil {
			return nil
		}
		d.log.Warn("writing FlowSchema conditions failed; retrying", "err", err, "after", backoff)
		retry = time.After(backoff)
		backoff = min(2*backoff, time.Minute)
	}
}

// writeConditions applies each condition to its schema's status, as
// upstream does, forcing ownership of the condition.
func (d *Dispatcher) writeConditions(ctx context.Context, client kubernetes.Interface, updates []conditionUpdate) error {
	var errs []error
	for _, u := range updates {
		c := u.condition
		ac := flowcontrolapply.FlowSchema(u.schema).WithStatus(flowcontrolapply.FlowSchemaStatus().WithConditions(
			flowcontrolapply.FlowSchemaCondition().WithType(c.Type).WithStatus(c.Status).WithReason(c.Reason).
				WithLastTransitionTime(c.LastTransitionTime).WithMessage(c.Message)))
		_, err := client.FlowcontrolV1().FlowSchemas().ApplyStatus(ctx, ac, metav1.ApplyOptions{FieldManager: ConfigConsumerFieldManager, Force: true})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
