package volume

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/orca-project/orca/internal/kubelet/volume/atomicdir"
)

// getConfigMap fetches a configMap; a missing optional one reads as empty.
// A missing one is reported as upstream's kubelet does (`configmap "x" not
// found`), whatever the client's wording.
func (m *Manager) getConfigMap(ctx context.Context, namespace, name string, optional bool) (*v1.ConfigMap, error) {
	cm, err := m.Sources.ConfigMap(ctx, namespace, name)
	if apierrors.IsNotFound(err) {
		if optional {
			return &v1.ConfigMap{}, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmap"}, name)
	}
	return cm, err
}

func (m *Manager) getSecret(ctx context.Context, namespace, name string, optional bool) (*v1.Secret, error) {
	s, err := m.Sources.Secret(ctx, namespace, name)
	if apierrors.IsNotFound(err) {
		if optional {
			return &v1.Secret{}, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secret"}, name)
	}
	return s, err
}

func (m *Manager) setupConfigMap(ctx context.Context, pod *v1.Pod, spec *v1.Volume) (Volume, error) {
	src := spec.ConfigMap
	optional := src.Optional != nil && *src.Optional
	cm, err := m.getConfigMap(ctx, pod.Namespace, src.Name, optional)
	if err != nil {
		return Volume{}, err
	}
	payload, err := configMapPayload(cm, src.Items, modeOr(src.DefaultMode, defaultMode), optional)
	if err != nil {
		return Volume{}, err
	}
	return m.publish(pod, pluginConfigMap, spec.Name, payload, false)
}

func (m *Manager) setupSecret(ctx context.Context, pod *v1.Pod, spec *v1.Volume) (Volume, error) {
	src := spec.Secret
	optional := src.Optional != nil && *src.Optional
	s, err := m.getSecret(ctx, pod.Namespace, src.SecretName, optional)
	if err != nil {
		return Volume{}, err
	}
	payload, err := secretPayload(s, src.Items, modeOr(src.DefaultMode, defaultMode), optional)
	if err != nil {
		return Volume{}, err
	}
	return m.publish(pod, pluginSecret, spec.Name, payload, true)
}

func (m *Manager) setupDownwardAPI(pod *v1.Pod, spec *v1.Volume) (Volume, error) {
	src := spec.DownwardAPI
	payload, err := downwardAPIPayload(pod, src.Items, modeOr(src.DefaultMode, defaultMode), m.NodeAllocatable)
	if err != nil {
		return Volume{}, err
	}
	return m.publish(pod, pluginDownwardAPI, spec.Name, payload, false)
}

// setupProjected merges its sources into one payload. As upstream, a
// failing source fails the volume, with every source's error aggregated.
func (m *Manager) setupProjected(ctx context.Context, pod *v1.Pod, spec *v1.Volume) (Volume, error) {
	src := spec.Projected
	mode := modeOr(src.DefaultMode, defaultMode)
	payload := map[string]atomicdir.File{}
	var errs []error
	add := func(p map[string]atomicdir.File, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		for k, v := range p {
			payload[k] = v
		}
	}
	for i, s := range src.Sources {
		switch {
		case s.Secret != nil:
			optional := s.Secret.Optional != nil && *s.Secret.Optional
			secret, err := m.getSecret(ctx, pod.Namespace, s.Secret.Name, optional)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			add(secretPayload(secret, s.Secret.Items, mode, optional))
		case s.ConfigMap != nil:
			optional := s.ConfigMap.Optional != nil && *s.ConfigMap.Optional
			cm, err := m.getConfigMap(ctx, pod.Namespace, s.ConfigMap.Name, optional)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			add(configMapPayload(cm, s.ConfigMap.Items, mode, optional))
		case s.DownwardAPI != nil:
			add(downwardAPIPayload(pod, s.DownwardAPI.Items, mode, m.NodeAllocatable))
		case s.ServiceAccountToken != nil:
			add(m.tokenPayload(ctx, pod, s.ServiceAccountToken, mode))
		case s.ClusterTrustBundle != nil:
			add(m.trustBundlePayload(ctx, s.ClusterTrustBundle, mode))
		case s.PodCertificate != nil:
			add(m.podCertificatePayload(ctx, pod, spec.Name, i, s.PodCertificate, mode))
		}
	}
	if err := utilerrors.NewAggregate(errs); err != nil {
		return Volume{}, err
	}
	return m.publish(pod, pluginProjected, spec.Name, payload, true)
}

func (m *Manager) tokenPayload(ctx context.Context, pod *v1.Pod, src *v1.ServiceAccountTokenProjection, mode int32) (map[string]atomicdir.File, error) {
	var audiences []string
	if src.Audience != "" {
		audiences = []string{src.Audience}
	}
	tr, err := m.token(ctx, pod.Namespace, pod.Spec.ServiceAccountName, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences:         audiences,
			ExpirationSeconds: src.ExpirationSeconds,
			BoundObjectRef: &authenticationv1.BoundObjectReference{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
			},
		},
	}, pod.UID)
	if err != nil {
		return nil, err
	}
	// With an fsGroup the token is 0600 and gains group read (0640) with
	// the group, as upstream: other users of the pod cannot read it.
	if fsGroup(pod) != nil {
		mode = 0o600
	}
	return map[string]atomicdir.File{src.Path: {Data: []byte(tr.Status.Token), Mode: fileMode(mode)}}, nil
}

// publish writes payload into the volume's directory atomically.
func (m *Manager) publish(pod *v1.Pod, plugin, name string, payload map[string]atomicdir.File, memory bool) (Volume, error) {
	dir := m.volumeDir(pod.UID, plugin, name)
	// Every time, not only the first: after a node reboot the directory is
	// there but its tmpfs is not.
	if err := m.makeProjectionDir(dir, pod, memory); err != nil {
		return Volume{}, err
	}
	changed, err := atomicdir.Write(dir, payload, atomicdir.Options{FSGroup: fsGroup(pod), Now: m.now})
	if err != nil {
		return Volume{}, err
	}
	if changed {
		m.log().Debug("volume contents updated", "pod", pod.Namespace+"/"+pod.Name, "volume", name)
	}
	return Volume{HostPath: dir, ReadOnly: true}, nil
}
