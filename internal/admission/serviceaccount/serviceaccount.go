// Package serviceaccount is upstream's ServiceAccount admission plugin:
// every pod runs as a service account that exists ("default" unless it
// names one), and gets that account's token, the cluster's CA bundle and
// its namespace in a projected volume unless automounting is turned off.
package serviceaccount

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/orca-project/orca/internal/admission"
)

// PluginName is upstream's name for the plugin.
const PluginName = "ServiceAccount"

const (
	// DefaultName is the service account a pod runs as when it names none.
	DefaultName = "default"
	// VolumePrefix starts the name of the projected token volume.
	VolumePrefix = "kube-api-access-"
	// MountPath is where every container finds the token.
	MountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// tokenExpirationSeconds is upstream's bound-token lifetime that
	// kubelets treat as "legacy, warn only": 1 hour and 7 seconds.
	tokenExpirationSeconds = 3607
	mirrorPodAnnotation    = "kubernetes.io/config.mirror"
)

var (
	podsGVR            = corev1.SchemeGroupVersion.WithResource("pods")
	serviceAccountsGVR = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
)

// Plugin defaults and checks pods' service accounts.
type Plugin struct {
	objects admission.Objects
	// defaultAttempts is how many times the default account is looked up
	// before a pod is refused: the serviceaccount controller creates it
	// moments after its namespace, and a pod created right after the
	// namespace should not fail for that.
	defaultAttempts int
	retryInterval   func() time.Duration
}

// New builds the plugin over the server's storage.
func New(objects admission.Objects) *Plugin {
	return &Plugin{
		objects: objects, defaultAttempts: 10,
		retryInterval: func() time.Duration { return time.Duration(100+rand.IntN(100)) * time.Millisecond },
	}
}

func (*Plugin) Name() string { return PluginName }

func handles(a *admission.Attributes) bool {
	return a.Resource == podsGVR && a.Subresource == "" && a.Operation == admission.Create
}

// Admit names the default service account, checks that the account
// exists and mounts its token.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if !handles(a) {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
	}
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultName
		// The deprecated alias always reads as the name, as upstream's
		// conversion writes it.
		pod.Spec.DeprecatedServiceAccount = DefaultName
	}
	sa, err := p.serviceAccount(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if automount(sa, pod) {
		mountToken(pod)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		pod.Spec.ImagePullSecrets = append([]corev1.LocalObjectReference(nil), sa.ImagePullSecrets...)
	}
	return nil
}

// Validate holds mirror pods (a kubelet's static pods) to upstream's
// rules: they may not reference service accounts or API credentials.
func (p *Plugin) Validate(_ context.Context, a *admission.Attributes) error {
	if !handles(a) {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; !mirror {
		if pod.Spec.ServiceAccountName == "" {
			return admission.NewForbidden(a, fmt.Errorf("no service account specified for pod %s/%s", a.Namespace, pod.Name))
		}
		return nil
	}
	if pod.Spec.ServiceAccountName != "" {
		return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not reference service accounts"))
	}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil {
			return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not reference secrets"))
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil {
					return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not use ServiceAccountToken volume projections"))
				}
			}
		}
	}
	return nil
}

// serviceAccount reads the account, retrying a missing default account
// for a while as upstream does.
func (p *Plugin) serviceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	attempts := 1
	if name == DefaultName {
		attempts = p.defaultAttempts
	}
	for i := 0; i < attempts; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(p.retryInterval()):
			}
		}
		obj, err := p.objects.Get(ctx, serviceAccountsGVR, ns, name)
		if err == nil {
			sa, ok := obj.(*corev1.ServiceAccount)
			if !ok {
				return nil, fmt.Errorf("stored serviceaccount %s/%s is a %T", ns, name, obj)
			}
			return sa, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return nil, apierrors.NewNotFound(corev1.Resource("serviceaccount"), name)
}

// automount: the pod's choice wins, then the account's, then yes.
func automount(sa *corev1.ServiceAccount, pod *corev1.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// mountToken mounts the token volume in every container and init
// container that has nothing at the token's path yet, adding the volume
// if some container needs it and the pod does not already carry one.
func mountToken(pod *corev1.Pod) {
	volume := ""
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, VolumePrefix) {
			volume = v.Name
			break
		}
	}
	hasVolume := volume != ""
	if !hasVolume {
		volume = VolumePrefix + utilrand.String(5)
	}
	mount := corev1.VolumeMount{Name: volume, ReadOnly: true, MountPath: MountPath}
	needed := false
	add := func(cs []corev1.Container) {
		for i := range cs {
			mounted := false
			for _, m := range cs[i].VolumeMounts {
				if m.MountPath == MountPath {
					mounted = true
					break
				}
			}
			if !mounted {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
				needed = true
			}
		}
	}
	add(pod.Spec.InitContainers)
	add(pod.Spec.Containers)
	if !hasVolume && needed {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{Projected: TokenVolumeSource()}})
	}
}

// TokenVolumeSource is upstream's projected token volume: a bound token,
// the cluster CA from the kube-root-ca.crt ConfigMap, and the namespace.
func TokenVolumeSource() *corev1.ProjectedVolumeSource {
	mode := corev1.ProjectedVolumeSourceDefaultMode
	exp := int64(tokenExpirationSeconds)
	return &corev1.ProjectedVolumeSource{
		// Set explicitly, as upstream does, so that the stored pod does
		// not change when defaults are applied again.
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &exp}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}
}
