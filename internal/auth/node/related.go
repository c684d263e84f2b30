package node

import corev1 "k8s.io/api/core/v1"

// kind is what a node may be related to through its pods.
type kind int

const (
	kindPod kind = iota
	kindSecret
	kindConfigMap
	kindPVC
	kindPV
	kindServiceAccount
)

// Related reports whether the object is reachable from a pod bound to
// the node, as upstream's graph relates them: node <- pod <- secret,
// configmap, pvc <- pv, service account.
func Related(src Source, node string, k kind, namespace, name string) bool {
	for _, p := range src.PodsOnNode(node) {
		if k != kindPV && p.Namespace != namespace {
			continue
		}
		if podRefers(src, p, k, name) {
			return true
		}
	}
	return false
}

func podRefers(src Source, p *corev1.Pod, k kind, name string) bool {
	switch k {
	case kindPod:
		return p.Name == name
	case kindServiceAccount:
		return p.Spec.ServiceAccountName == name
	case kindPVC:
		for _, c := range claimNames(p) {
			if c == name {
				return true
			}
		}
		return false
	case kindPV:
		for _, c := range claimNames(p) {
			if pvc := src.PersistentVolumeClaim(p.Namespace, c); pvc != nil && pvc.Spec.VolumeName == name {
				return true
			}
		}
		return false
	}
	found := false
	visitPodRefs(p, func(secret bool, ref string) {
		if ref == name && secret == (k == kindSecret) {
			found = true
		}
	})
	return found
}

// claimNames are the claims a pod uses, generic ephemeral volumes
// included (their claim is named POD-VOLUME).
func claimNames(p *corev1.Pod) []string {
	var out []string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			out = append(out, p.Name+"-"+v.Name)
		}
	}
	return out
}

// visitPodRefs calls visit for every Secret (secret=true) and ConfigMap a
// pod names: pull secrets, volumes, projections and environment.
func visitPodRefs(p *corev1.Pod, visit func(secret bool, name string)) {
	for _, s := range p.Spec.ImagePullSecrets {
		visit(true, s.Name)
	}
	for _, v := range p.Spec.Volumes {
		switch {
		case v.Secret != nil:
			visit(true, v.Secret.SecretName)
		case v.ConfigMap != nil:
			visit(false, v.ConfigMap.Name)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					visit(true, s.Secret.Name)
				}
				if s.ConfigMap != nil {
					visit(false, s.ConfigMap.Name)
				}
			}
		case v.CephFS != nil && v.CephFS.SecretRef != nil:
			visit(true, v.CephFS.SecretRef.Name)
		case v.CSI != nil && v.CSI.NodePublishSecretRef != nil:
			visit(true, v.CSI.NodePublishSecretRef.Name)
		}
	}
	containers := func(cs []corev1.Container) {
		for _, c := range cs {
			for _, e := range c.EnvFrom {
				if e.SecretRef != nil {
					visit(true, e.SecretRef.Name)
				}
				if e.ConfigMapRef != nil {
					visit(false, e.ConfigMapRef.Name)
				}
			}
			for _, e := range c.Env {
				if e.ValueFrom == nil {
					continue
				}
				if e.ValueFrom.SecretKeyRef != nil {
					visit(true, e.ValueFrom.SecretKeyRef.Name)
				}
				if e.ValueFrom.ConfigMapKeyRef != nil {
					visit(false, e.ValueFrom.ConfigMapKeyRef.Name)
				}
			}
		}
	}
	containers(p.Spec.InitContainers)
	containers(p.Spec.Containers)
	for _, e := range p.Spec.EphemeralContainers {
		containers([]corev1.Container{corev1.Container(e.EphemeralContainerCommon)})
	}
}
