// Package bootstrapsigner signs kube-public/cluster-info with every
// bootstrap token marked for signing, as upstream's bootstrapsigner
// controller: a JWS detached signature per token under
// jws-kubeconfig-ID, so that a joining machine (kubeadm join, without a
// CA hash to pin) can tell that whoever wrote the ConfigMap knew its
// token. Signatures of tokens that are gone, expired or no longer for
// signing are removed.
package bootstrapsigner

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
	bootstrapsecrets "k8s.io/cluster-bootstrap/util/secrets"

	"github.com/orca-project/orca/internal/auth/bootstraptoken"
	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Controller keeps cluster-info's signatures current; there is one key,
// the ConfigMap.
type Controller struct {
	client     kubernetes.Interface
	factories  []informers.SharedInformerFactory
	secrets    corelisters.SecretLister
	configMaps corelisters.ConfigMapLister
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
	now        func() time.Time
	log        *slog.Logger
}

// New builds the controller. Its roles read Secrets in kube-system and
// update cluster-info in kube-public, so it watches through informers of
// its own, limited to those namespaces.
func New(client kubernetes.Interface, metrics workqueue.MetricsProvider, log *slog.Logger) (*Controller, error) {
	tokens := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(metav1.NamespaceSystem),
		informers.WithTweakListOptions(bootstraptoken.OnlyTokens))
	public := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(metav1.NamespacePublic),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", bootstrapapi.ConfigMapClusterInfo).String()
		}))
	sInf, cInf := tokens.Core().V1().Secrets(), public.Core().V1().ConfigMaps()
	c := &Controller{
		client: client, factories: []informers.SharedInformerFactory{tokens, public},
		secrets: sInf.Lister(), configMaps: cInf.Lister(),
		synced: []cache.InformerSynced{sInf.Informer().HasSynced, cInf.Informer().HasSynced},
		queue:  controllerutil.NewQueue[string]("bootstrap_signer", metrics),
		now:    time.Now, log: log.With("controller", "bootstrapsigner"),
	}
	kick := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.queue.Add(bootstrapapi.ConfigMapClusterInfo) },
		UpdateFunc: func(any, any) { c.queue.Add(bootstrapapi.ConfigMapClusterInfo) },
		DeleteFunc: func(any) { c.queue.Add(bootstrapapi.ConfigMapClusterInfo) },
	}
	for _, inf := range []cache.SharedIndexInformer{sInf.Informer(), cInf.Informer()} {
		if _, err := inf.AddEventHandler(kick); err != nil {
			return nil, fmt.Errorf("bootstrapsigner: handler: %w", err)
		}
	}
	return c, nil
}

// Name names the controller.
func (c *Controller) Name() string { return "bootstrapsigner" }

// Run signs until ctx ends; one worker is enough for one ConfigMap.
func (c *Controller) Run(ctx context.Context, _ int) error {
	for _, f := range c.factories {
		f.Start(ctx.Done())
		defer f.Shutdown()
	}
	return controllerutil.Loop{
		Name: "bootstrapsigner", Synced: c.synced,
		Workers: []controllerutil.Workers{controllerutil.NewWorkers(1, c.queue, c.sync, c.log, "configmap")},
	}.Run(ctx)
}

// signingTokens maps the IDs of the Secrets that may sign to their
// secrets.
func signingTokens(secrets []*v1.Secret, now time.Time) map[string]string {
	out := map[string]string{}
	for _, s := range secrets {
		if s.Type != bootstrapapi.SecretTypeBootstrapToken || s.DeletionTimestamp != nil || bootstrapsecrets.HasExpired(s, now) ||
			bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenUsageSigningKey) != "true" {
			continue
		}
		id := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenIDKey)
		secret := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenSecretKey)
		if id == "" || secret == "" || s.Name != bootstrapapi.BootstrapTokenSecretPrefix+id {
			continue
		}
		out[id] = secret
	}
	return out
}

// signatures is the ConfigMap's data with one signature per signing
// token over its kubeconfig and none other; changed is false when the
// data already is so.
func signatures(data map[string]string, tokens map[string]string) (map[string]string, bool, error) {
	content, ok := data[bootstrapapi.KubeConfigKey]
	if !ok {
		return data, false, nil
	}
	out := maps.Clone(data)
	changed := false
	for k := range data {
		id, isSig := strings.CutPrefix(k, bootstrapapi.JWSSignatureKeyPrefix)
		if _, live := tokens[id]; isSig && !live {
			delete(out, k)
			changed = true
		}
	}
	for id, secret := range tokens {
		key := bootstrapapi.JWSSignatureKeyPrefix + id
		if old, ok := data[key]; ok && jws.DetachedTokenIsValid(old, content, id, secret) {
			continue
		}
		sig, err := jws.ComputeDetachedSignature(content, id, secret)
		if err != nil {
			return nil, false, fmt.Errorf("sign cluster-info with token %s: %w", id, err)
		}
		out[key] = sig
		changed = true
	}
	return out, changed, nil
}

func (c *Controller) sync(ctx context.Context, name string) error {
	cm, err := c.configMaps.ConfigMaps(metav1.NamespacePublic).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	secrets, err := c.secrets.Secrets(metav1.NamespaceSystem).List(labels.Everything())
	if err != nil {
		return err
	}
	data, changed, err := signatures(cm.Data, signingTokens(secrets, c.now()))
	if err != nil || !changed {
		return err
	}
	cm = cm.DeepCopy()
	cm.Data = data
	if _, err := c.client.CoreV1().ConfigMaps(metav1.NamespacePublic).Update(ctx, cm, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("update cluster-info: %w", err)
	}
	return nil
}
