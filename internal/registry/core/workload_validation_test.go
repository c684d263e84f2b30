package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func newRC() *corev1.ReplicationController {
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ReplicationControllerSpec{
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}
}

func TestValidateReplicationController(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.ReplicationController)
		want   []string
	}{
		{"selector from template", func(*corev1.ReplicationController) {}, nil},
		{"explicit selector", func(rc *corev1.ReplicationController) { rc.Spec.Selector = map[string]string{"app": "web"} }, nil},
		{"selector does not match", func(rc *corev1.ReplicationController) { rc.Spec.Selector = map[string]string{"app": "db"} },
			[]string{"spec.template.metadata.labels: Invalid value"}},
		{"no template", func(rc *corev1.ReplicationController) {
			rc.Spec.Template = nil
			rc.Spec.Selector = map[string]string{"app": "web"}
		}, []string{"spec.template: Required value"}},
		{"no selector or labels", func(rc *corev1.ReplicationController) { rc.Spec.Template.Labels = nil },
			[]string{"spec.selector: Required value"}},
		{"negative replicas", func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptrTo(int32(-1)) },
			[]string{"spec.replicas: Invalid value"}},
		{"restart policy", func(rc *corev1.ReplicationController) {
			rc.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		},
			[]string{"spec.template.spec.restartPolicy: Unsupported value"}},
		{"template container", func(rc *corev1.ReplicationController) { rc.Spec.Template.Spec.Containers[0].Image = "" },
			[]string{"spec.template.spec.containers[0].image: Required value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := newRC()
			tc.mutate(rc)
			expectErrs(t, runCreate(Replicationcontrollers, rc), tc.want...)
		})
	}
	rc := newRC()
	rc.Spec.Selector = map[string]string{"app": "db"}
	expectDetail(t, runCreate(Replicationcontrollers, rc), "spec.template.metadata.labels", "`selector` does not match template `labels`")
}

func newPV() *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv1"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/pv1"}},
		},
	}
}

func TestValidatePersistentVolume(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.PersistentVolume)
		want   []string
	}{
		{"hostPath", func(*corev1.PersistentVolume) {}, nil},
		{"nfs", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath = nil
			pv.Spec.NFS = &corev1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports"}
		}, nil},
		{"no capacity", func(pv *corev1.PersistentVolume) { pv.Spec.Capacity = nil },
			[]string{"spec.capacity: Required value", "spec.capacity: Unsupported value"}},
		{"zero capacity", func(pv *corev1.PersistentVolume) { pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("0") },
			[]string{"spec.capacity[storage]: Invalid value"}},
		{"no access modes", func(pv *corev1.PersistentVolume) { pv.Spec.AccessModes = nil },
			[]string{"spec.accessModes: Required value"}},
		{"bad access mode", func(pv *corev1.PersistentVolume) {
			pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadSometimes"}
		},
			[]string{"spec.accessModes: Unsupported value"}},
		{"no source", func(pv *corev1.PersistentVolume) { pv.Spec.HostPath = nil },
			[]string{"spec: Required value"}},
		{"two sources", func(pv *corev1.PersistentVolume) { pv.Spec.NFS = &corev1.NFSVolumeSource{Server: "s", Path: "/p"} },
			[]string{"spec.nfs: Forbidden"}},
		{"local needs node affinity", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath = nil
			pv.Spec.Local = &corev1.LocalVolumeSource{Path: "/mnt/disk"}
		}, []string{"spec.nodeAffinity: Required value"}},
		{"recycle root", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath.Path = "/"
			pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRecycle
		}, []string{"spec.persistentVolumeReclaimPolicy: Forbidden"}},
		{"reclaim policy", func(pv *corev1.PersistentVolume) { pv.Spec.PersistentVolumeReclaimPolicy = "Keep" },
			[]string{"spec.persistentVolumeReclaimPolicy: Unsupported value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pv := newPV()
			tc.mutate(pv)
			expectErrs(t, runCreate(Persistentvolumes, pv), tc.want...)
		})
	}
}

func TestValidatePersistentVolumeUpdate(t *testing.T) {
	old := newPV()
	old.ResourceVersion = "1"
	Persistentvolumes.Default(old)

	upd := old.DeepCopy()
	upd.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("20Gi")
	upd.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
	expectErrs(t, runUpdate(Persistentvolumes, upd, old))

	upd = old.DeepCopy()
	upd.Spec.HostPath.Path = "/elsewhere"
	errs := runUpdate(Persistentvolumes, upd, old)
	expectErrs(t, errs, "spec.persistentvolumesource: Forbidden")
	expectDetail(t, errs, "spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation")

	upd = old.DeepCopy()
	upd.Spec.VolumeMode = ptrTo(corev1.PersistentVolumeBlock)
	expectErrs(t, runUpdate(Persistentvolumes, upd, old), "volumeMode: Invalid value")
}

func newPVC() *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}

func TestValidatePersistentVolumeClaim(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.PersistentVolumeClaim)
		want   []string
	}{
		{"valid", func(*corev1.PersistentVolumeClaim) {}, nil},
		{"with class and selector", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.StorageClassName = ptrTo("fast")
			c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}
		}, nil},
		{"no access modes", func(c *corev1.PersistentVolumeClaim) { c.Spec.AccessModes = nil },
			[]string{"spec.accessModes: Required value"}},
		{"no storage", func(c *corev1.PersistentVolumeClaim) { c.Spec.Resources.Requests = nil },
			[]string{"spec.resources[storage]: Required value"}},
		{"zero storage", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("0")
		},
			[]string{"spec.resources[storage]: Invalid value"}},
		{"ReadWriteOncePod with others", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteOnce}
		}, []string{"spec.accessModes: Forbidden"}},
		{"volume mode", func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeMode = ptrTo(corev1.PersistentVolumeMode("Raw")) },
			[]string{"spec.volumeMode: Unsupported value"}},
		{"class name", func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptrTo("Fast_SSD") },
			[]string{"spec.storageClassName: Invalid value"}},
		{"data source", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "Snapshot"}
		},
			[]string{"spec.dataSource: Invalid value", "spec.dataSource.name: Required value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newPVC()
			tc.mutate(c)
			expectErrs(t, runCreate(Persistentvolumeclaims, c), tc.want...)
		})
	}
	// The exported spec check works on templates too.
	spec := newPVC().Spec
	spec.AccessModes = nil
	expectErrs(t, ValidatePersistentVolumeClaimSpec(&spec, nilPath().Child("spec", "volumeClaimTemplates").Index(0).Child("spec")),
		"spec.volumeClaimTemplates[0].spec.accessModes: Required value")
}

func TestValidatePersistentVolumeClaimUpdate(t *testing.T) {
	stored := func(phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
		c := newPVC()
		c.ResourceVersion = "1"
		Persistentvolumeclaims.Default(c)
		c.Status.Phase = phase
		if phase == corev1.ClaimBound {
			c.Spec.VolumeName = "pv1"
			c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
		}
		return c
	}
	grow := func(c *corev1.PersistentVolumeClaim) {
		c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	}
	for _, tc := range []struct {
		name   string
		phase  corev1.PersistentVolumeClaimPhase
		mutate func(*corev1.PersistentVolumeClaim)
		want   []string
	}{
		{"bind", corev1.ClaimPending, func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv1" }, nil},
		{"grow bound", corev1.ClaimBound, grow, nil},
		{"grow pending", corev1.ClaimPending, grow, []string{"spec: Forbidden"}},
		{"shrink bound below capacity", corev1.ClaimBound, func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("512Mi")
		}, []string{"spec.resources.requests.storage: Forbidden"}},
		{"change access modes", corev1.ClaimBound, func(c *corev1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}, []string{"spec: Forbidden"}},
		{"change volumeName", corev1.ClaimBound, func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv2" },
			[]string{"spec: Forbidden"}},
		{"set class on a classless claim", corev1.ClaimPending, func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptrTo("standard") }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := stored(tc.phase)
			c := old.DeepCopy()
			tc.mutate(c)
			expectErrs(t, runUpdate(Persistentvolumeclaims, c, old), tc.want...)
		})
	}
	old := stored(corev1.ClaimBound)
	c := old.DeepCopy()
	c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	expectDetail(t, runUpdate(Persistentvolumeclaims, c, old), "spec",
		"spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims")
}

func TestValidateNode(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec corev1.NodeSpec
		want []string
	}{
		{"empty", corev1.NodeSpec{}, nil},
		{"podCIDR", corev1.NodeSpec{PodCIDR: "10.244.1.0/24"}, nil},
		{"dual stack", corev1.NodeSpec{PodCIDRs: []string{"10.244.1.0/24", "fd00:1::/64"}}, nil},
		{"bad podCIDR", corev1.NodeSpec{PodCIDR: "10.244.1.0/33"}, []string{"spec.podCIDRs[0]: Invalid value"}},
		{"two of a family", corev1.NodeSpec{PodCIDRs: []string{"10.244.1.0/24", "10.244.2.0/24"}}, []string{"spec.podCIDRs: Invalid value"}},
		{"taints", corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
			{Key: "bad key!", Effect: corev1.TaintEffectNoSchedule},
			{Key: "k", Effect: "Never"},
			{Key: "k2"},
			{Key: "dedicated", Value: "other", Effect: corev1.TaintEffectNoSchedule},
		}}, []string{
			"metadata.taints[1].key: Invalid value",
			"metadata.taints[2].effect: Unsupported value",
			"metadata.taints[3].effect: Required value",
			"metadata.taints[4]: Duplicate value",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Spec: tc.spec}
			expectErrs(t, runCreate(Nodes, node), tc.want...)
		})
	}
}

func TestValidateNodeUpdate(t *testing.T) {
	old := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", ResourceVersion: "1"}}
	Nodes.Default(old)

	upd := old.DeepCopy()
	upd.Spec.PodCIDR = "10.244.1.0/24"
	upd.Spec.ProviderID = "cloud://node-1"
	upd.Spec.Unschedulable = true
	expectErrs(t, runUpdate(Nodes, upd, old))

	assigned := upd.DeepCopy()
	upd = assigned.DeepCopy()
	upd.Spec.PodCIDR, upd.Spec.PodCIDRs = "10.244.2.0/24", nil
	upd.Spec.ProviderID = "cloud://other"
	expectErrs(t, runUpdate(Nodes, upd, assigned), "spec.podCIDRs: Forbidden", "spec.providerID: Forbidden")
}

func TestValidateResourceQuota(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		name string
		spec corev1.ResourceQuotaSpec
		want []string
	}{
		{"valid", corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			corev1.ResourcePods: q("10"), corev1.ResourceRequestsCPU: q("4"), "count/deployments.apps": q("5"), "requests.example.com/gpu": q("2")}}, nil},
		{"negative", corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceLimitsMemory: q("-1Gi")}},
			[]string{"spec.hard[limits.memory]: Invalid value"}},
		{"fractional count", corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: q("1500m")}},
			[]string{"spec.hard[pods]: Invalid value"}},
		{"unknown name", corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"gpus": q("1")}},
			[]string{"spec.hard[gpus]: Invalid value", "spec.hard[gpus]: Invalid value"}},
		{"scopes", corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: q("1")},
			Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort}},
			[]string{"spec.scopes: Invalid value"}},
		{"scope for resource", corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: q("1")},
			Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}},
			[]string{"spec.scopes: Invalid value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "default"}, Spec: tc.spec}
			expectErrs(t, runCreate(Resourcequotas, rq), tc.want...)
		})
	}

	old := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", ResourceVersion: "1"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: q("1")}, Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}}}
	upd := old.DeepCopy()
	upd.Spec.Hard[corev1.ResourcePods] = q("5")
	expectErrs(t, runUpdate(Resourcequotas, upd, old))
	upd.Spec.Scopes = nil
	expectErrs(t, runUpdate(Resourcequotas, upd, old), "spec.scopes: Invalid value")
}

func TestValidateLimitRange(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		name  string
		items []corev1.LimitRangeItem
		want  []string
	}{
		{"container", []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Min: corev1.ResourceList{corev1.ResourceCPU: q("100m")}, Max: corev1.ResourceList{corev1.ResourceCPU: q("2")},
			Default: corev1.ResourceList{corev1.ResourceCPU: q("1")}, DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: q("500m")}}}, nil},
		{"pvc", []corev1.LimitRangeItem{{Type: corev1.LimitTypePersistentVolumeClaim, Max: corev1.ResourceList{corev1.ResourceStorage: q("10Gi")}}}, nil},
		{"type", []corev1.LimitRangeItem{{Type: "Node"}}, []string{"spec.limits[0].type: Invalid value"}},
		{"duplicate type", []corev1.LimitRangeItem{{Type: corev1.LimitTypePod}, {Type: corev1.LimitTypePod}},
			[]string{"spec.limits[1].type: Duplicate value"}},
		{"min over max", []corev1.LimitRangeItem{{Type: corev1.LimitTypePod,
			Min: corev1.ResourceList{corev1.ResourceMemory: q("2Gi")}, Max: corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}}},
			[]string{"spec.limits[0].min[memory]: Invalid value"}},
		{"default request over default", []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Default: corev1.ResourceList{corev1.ResourceCPU: q("1")}, DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: q("2")}}},
			[]string{"spec.limits[0].defaultRequest[cpu]: Invalid value"}},
		{"default over max", []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Max: corev1.ResourceList{corev1.ResourceCPU: q("1")}, Default: corev1.ResourceList{corev1.ResourceCPU: q("2")}}},
			// The default request is defaulted from the default, so it is over max too.
			[]string{"spec.limits[0].default[cpu]: Invalid value", "spec.limits[0].defaultRequest[cpu]: Invalid value"}},
		{"pod defaults", []corev1.LimitRangeItem{{Type: corev1.LimitTypePod, Default: corev1.ResourceList{corev1.ResourceCPU: q("1")}}},
			[]string{"spec.limits[0].default: Forbidden"}},
		{"pvc without storage", []corev1.LimitRangeItem{{Type: corev1.LimitTypePersistentVolumeClaim}},
			[]string{"spec.limits[0].limits: Required value"}},
		{"ratio", []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: corev1.ResourceList{corev1.ResourceCPU: q("500m")}}},
			[]string{"spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "l", Namespace: "default"}, Spec: corev1.LimitRangeSpec{Limits: tc.items}}
			expectErrs(t, runCreate(Limitranges, lr), tc.want...)
		})
	}
}
