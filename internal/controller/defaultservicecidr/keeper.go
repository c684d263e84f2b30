// Package defaultservicecidr keeps the default ServiceCIDR, "kubernetes",
// which reflects the API server's --service-cidr, as upstream's API server
// keeps it: created when missing (at start and whenever it is deleted),
// marked Ready once, and never changed when it differs from the flag (the
// difference is reported instead; the range the object names is the
// administrator's to replace). Deletion, and the Ready condition of other
// ServiceCIDRs, belong to the service-cidrs controller.
package defaultservicecidr

import (
	"context"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1apply "k8s.io/client-go/applyconfigurations/networking/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/orca-project/orca/internal/registry/networking"
)

// Upstream's names and period.
const (
	// ControllerName is the events' source and the status's field manager.
	ControllerName = "kubernetes-service-cidr-controller"
	// Interval is how often the object is checked, as upstream checks the
	// kubernetes Service's endpoints.
	Interval = 10 * time.Second
	// ReadyMessage is the Ready condition's message.
	ReadyMessage = "Kubernetes default Service CIDR is ready"
)

// Action is what the keeper does about the default ServiceCIDR.
type Action int

const (
	// Nothing: the object is as it should be, or is being deleted.
	Nothing Action = iota
	// Create: there is none.
	Create
	// SetReady: it matches the flag and has no Ready condition (or an
	// Unknown one).
	SetReady
	// ReportMismatch: its CIDRs are not the flag's; it is left alone.
	ReportMismatch
	// ReportNotReady: something set Ready=False although the CIDRs match;
	// upstream leaves that to the administrator rather than fight over it.
	ReportNotReady
)

// Decide is upstream's sync for a single-stack server: cidrs is the flag,
// sc the stored object or nil.
func Decide(cidrs []string, sc *networkingv1.ServiceCIDR) Action {
	if sc == nil {
		return Create
	}
	if sc.DeletionTimestamp != nil {
		return Nothing
	}
	if !slices.Equal(cidrs, sc.Spec.CIDRs) {
		return ReportMismatch
	}
	ready := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	switch {
	case ready == nil || ready.Status == metav1.ConditionUnknown:
		return SetReady
	case ready.Status == metav1.ConditionFalse:
		return ReportNotReady
	}
	return Nothing
}

// Keeper applies Decide through the API.
type Keeper struct {
	client   kubernetes.Interface
	cidrs    []string
	log      *slog.Logger
	recorder record.EventRecorder
	// Each report is made once per process, as upstream's.
	reportedMismatch, reportedNotReady bool
}

// New returns a keeper of the default ServiceCIDR for cidrs. Its events
// are recorded until ctx ends, from the first Sync on: what start-up
// finds is what most needs reporting.
func New(ctx context.Context, client kubernetes.Interface, cidrs []string, log *slog.Logger) *Keeper {
	events := record.NewBroadcaster(record.WithContext(ctx))
	events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	context.AfterFunc(ctx, events.Shutdown)
	return &Keeper{
		client: client, cidrs: cidrs, log: log.With("controller", ControllerName),
		recorder: events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: ControllerName}),
	}
}

// Run syncs every Interval until ctx ends. Start-up should call Sync
// until it succeeds first, as upstream holds the API server's start
// until the object exists.
func (k *Keeper) Run(ctx context.Context) {
	t := time.NewTicker(Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := k.Sync(ctx); err != nil && ctx.Err() == nil {
			k.log.Warn("sync the default ServiceCIDR", "err", err)
		}
	}
}

// Sync creates the default ServiceCIDR if it is missing and sets its
// status as Decide says.
func (k *Keeper) Sync(ctx context.Context) error {
	api := k.client.NetworkingV1().ServiceCIDRs()
	sc, err := api.Get(ctx, networking.DefaultServiceCIDRName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		sc, err = nil, nil
	}
	if err != nil {
		return err
	}
	if Decide(k.cidrs, sc) == Create {
		k.log.Info("creating the default ServiceCIDR", "cidrs", k.cidrs)
		sc, err = api.Create(ctx, &networkingv1.ServiceCIDR{
			ObjectMeta: metav1.ObjectMeta{Name: networking.DefaultServiceCIDRName},
			Spec:       networkingv1.ServiceCIDRSpec{CIDRs: k.cidrs},
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			sc, err = api.Get(ctx, networking.DefaultServiceCIDRName, metav1.GetOptions{})
		}
		if err != nil {
			return err
		}
	}
	switch Decide(k.cidrs, sc) {
	case SetReady:
		k.log.Info("setting the default ServiceCIDR's condition Ready to True")
		status := networkingv1apply.ServiceCIDRStatus().WithConditions(metav1apply.Condition().
			WithType(networkingv1.ServiceCIDRConditionReady).
			WithStatus(metav1.ConditionTrue).
			WithMessage(ReadyMessage).
			WithLastTransitionTime(metav1.Now()))
		_, err := api.ApplyStatus(ctx, networkingv1apply.ServiceCIDR(networking.DefaultServiceCIDRName).WithStatus(status),
			metav1.ApplyOptions{FieldManager: ControllerName, Force: true})
		if err != nil {
			k.recorder.Eventf(sc, corev1.EventTypeWarning, "KubernetesDefaultServiceCIDRError", "The default ServiceCIDR Status can not be set to Ready=True")
			return err
		}
	case ReportMismatch:
		if !k.reportedMismatch {
			k.log.Warn("the default ServiceCIDR does not match --service-cidr; it is left as it is", "serviceCIDR", sc.Spec.CIDRs, "flag", k.cidrs)
			k.recorder.Eventf(sc, corev1.EventTypeWarning, "KubernetesDefaultServiceCIDRInconsistent", "The default ServiceCIDR %v does not match the controller flag configurations %s", sc.Spec.CIDRs, k.cidrs)
			k.reportedMismatch = true
		}
	case ReportNotReady:
		if !k.reportedNotReady {
			c := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
			k.log.Warn("the default ServiceCIDR is not Ready although it matches --service-cidr", "reason", c.Reason, "message", c.Message)
			k.recorder.Eventf(sc, corev1.EventTypeWarning, c.Reason, "Configuration matches, but %s", c.Message)
			k.reportedNotReady = true
		}
	}
	return nil
}
