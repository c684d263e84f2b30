package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestDefaultPullPolicy(t *testing.T) {
	for image, want := range map[string]corev1.PullPolicy{
		"nginx":                             corev1.PullAlways,
		"nginx:latest":                      corev1.PullAlways,
		"nginx:1.25":                        corev1.PullIfNotPresent,
		"library/nginx":                     corev1.PullAlways,
		"docker.io/library/nginx:1.25":      corev1.PullIfNotPresent,
		"localhost:5000/nginx":              corev1.PullAlways,
		"localhost:5000/nginx:v1":           corev1.PullIfNotPresent,
		"nginx@sha256:" + sha:               corev1.PullIfNotPresent,
		"nginx:latest@sha256:" + sha:        corev1.PullAlways,
		"registry.example.com:443/team/app": corev1.PullAlways,
		"":                                  corev1.PullIfNotPresent,
		"NGINX":                             corev1.PullIfNotPresent, // not a valid reference
	} {
		if got := defaultPullPolicy(image); got != want {
			t.Errorf("defaultPullPolicy(%q) = %s, want %s", image, got, want)
		}
	}
}

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestDefaultPod(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1.36"}},
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "nginx",
				Ports: []corev1.ContainerPort{{ContainerPort: 80}},
				Env: []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
					HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
					GRPC: &corev1.GRPCAction{Port: 9000}}},
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
					HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("http")}}},
			}},
			Volumes: []corev1.Volume{
				{Name: "none"},
				{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
				{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}},
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp"}}},
				{Name: "down", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}},
				{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}},
				{Name: "eph", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
					VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{}}}},
			},
		},
	}
	Pods.Default(pod)
	s := pod.Spec

	if s.RestartPolicy != corev1.RestartPolicyAlways || s.DNSPolicy != corev1.DNSClusterFirst ||
		s.SchedulerName != "default-scheduler" || s.SecurityContext == nil {
		t.Errorf("pod-level defaults: restart %q dns %q scheduler %q securityContext %v", s.RestartPolicy, s.DNSPolicy, s.SchedulerName, s.SecurityContext)
	}
	if s.TerminationGracePeriodSeconds == nil || *s.TerminationGracePeriodSeconds != 30 {
		t.Errorf("terminationGracePeriodSeconds = %v, want 30", s.TerminationGracePeriodSeconds)
	}
	if s.EnableServiceLinks == nil || !*s.EnableServiceLinks {
		t.Errorf("enableServiceLinks = %v, want true", s.EnableServiceLinks)
	}

	c := s.Containers[0]
	if c.TerminationMessagePath != "/dev/termination-log" || c.TerminationMessagePolicy != corev1.TerminationMessageReadFile {
		t.Errorf("termination message defaults: %q %q", c.TerminationMessagePath, c.TerminationMessagePolicy)
	}
	if c.ImagePullPolicy != corev1.PullAlways || s.InitContainers[0].ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("pull policies: %s, init %s", c.ImagePullPolicy, s.InitContainers[0].ImagePullPolicy)
	}
	if s.InitContainers[0].TerminationMessagePolicy != corev1.TerminationMessageReadFile {
		t.Errorf("init container not defaulted")
	}
	if c.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("port protocol = %q", c.Ports[0].Protocol)
	}
	if c.Env[0].ValueFrom.FieldRef.APIVersion != "v1" {
		t.Errorf("fieldRef apiVersion = %q", c.Env[0].ValueFrom.FieldRef.APIVersion)
	}
	// Requests come from limits for a Pod.
	if q := c.Resources.Requests[corev1.ResourceCPU]; q.String() != "500m" {
		t.Errorf("cpu request = %s, want 500m", q.String())
	}
	if q := c.Resources.Requests[corev1.ResourceMemory]; q.String() != "128Mi" {
		t.Errorf("memory request = %s, want 128Mi", q.String())
	}
	lp := c.LivenessProbe
	if lp.TimeoutSeconds != 1 || lp.PeriodSeconds != 10 || lp.SuccessThreshold != 1 || lp.FailureThreshold != 3 {
		t.Errorf("probe defaults: %+v", lp)
	}
	if lp.HTTPGet.Path != "/" || lp.HTTPGet.Scheme != corev1.URISchemeHTTP {
		t.Errorf("httpGet defaults: path %q scheme %q", lp.HTTPGet.Path, lp.HTTPGet.Scheme)
	}
	if g := c.ReadinessProbe.GRPC.Service; g == nil || *g != "" {
		t.Errorf("grpc service = %v, want empty string", g)
	}
	if h := c.Lifecycle.PreStop.HTTPGet; h.Path != "/" || h.Scheme != corev1.URISchemeHTTP {
		t.Errorf("preStop httpGet defaults: %+v", h)
	}

	v := s.Volumes
	if v[0].EmptyDir == nil {
		t.Errorf("volume without source should default to emptyDir: %+v", v[0].VolumeSource)
	}
	if m := v[1].Secret.DefaultMode; m == nil || *m != 420 {
		t.Errorf("secret defaultMode = %v, want 420", m)
	}
	if m := v[2].ConfigMap.DefaultMode; m == nil || *m != 420 {
		t.Errorf("configMap defaultMode = %v, want 420", m)
	}
	if ht := v[3].HostPath.Type; ht == nil || *ht != corev1.HostPathUnset {
		t.Errorf("hostPath type = %v, want \"\"", ht)
	}
	if m := v[4].DownwardAPI.DefaultMode; m == nil || *m != 420 || v[4].DownwardAPI.Items[0].FieldRef.APIVersion != "v1" {
		t.Errorf("downwardAPI defaults: %+v", v[4].DownwardAPI)
	}
	if m := v[5].Projected.DefaultMode; m == nil || *m != 420 {
		t.Errorf("projected defaultMode = %v, want 420", m)
	}
	if e := v[5].Projected.Sources[0].ServiceAccountToken.ExpirationSeconds; e == nil || *e != 3600 {
		t.Errorf("token expirationSeconds = %v, want 3600", e)
	}
	if vm := v[6].Ephemeral.VolumeClaimTemplate.Spec.VolumeMode; vm == nil || *vm != corev1.PersistentVolumeFilesystem {
		t.Errorf("ephemeral claim volumeMode = %v", vm)
	}
}

func TestDefaultPodHostNetwork(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{
		Name: "c", Image: "i", Ports: []corev1.ContainerPort{{ContainerPort: 8080}, {ContainerPort: 9090, HostPort: 9090}}}}}}
	Pods.Default(pod)
	if p := pod.Spec.Containers[0].Ports; p[0].HostPort != 8080 || p[1].HostPort != 9090 {
		t.Errorf("hostNetwork host ports = %d, %d", p[0].HostPort, p[1].HostPort)
	}
}

// Templates get the spec defaults but not those upstream keeps for Pods.
func TestDefaultPodTemplateSpec(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Image: "nginx:1.25",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	DefaultPodTemplateSpec(tmpl)
	s := tmpl.Spec
	if s.RestartPolicy != corev1.RestartPolicyAlways || s.TerminationGracePeriodSeconds == nil || s.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("template spec not defaulted: %+v", s)
	}
	if s.EnableServiceLinks != nil {
		t.Errorf("enableServiceLinks defaulted in a template: %v", *s.EnableServiceLinks)
	}
	if s.Containers[0].Resources.Requests != nil {
		t.Errorf("requests defaulted from limits in a template: %v", s.Containers[0].Resources.Requests)
	}
}

func TestResourceListRoundUp(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.0001")}}}}}}
	Pods.Default(pod)
	if q := pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; q.String() != "1m" {
		t.Errorf("cpu 0.0001 rounded to %s, want 1m", q.String())
	}
}

func TestPreparePodForCreate(t *testing.T) {
	cpu, mem := resource.MustParse("1"), resource.MustParse("1Gi")
	both := corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}
	for _, tc := range []struct {
		name string
		res  corev1.ResourceRequirements
		want corev1.PodQOSClass
	}{
		{"nothing", corev1.ResourceRequirements{}, corev1.PodQOSBestEffort},
		{"limits only", corev1.ResourceRequirements{Limits: both}, corev1.PodQOSGuaranteed},
		{"equal", corev1.ResourceRequirements{Limits: both, Requests: both}, corev1.PodQOSGuaranteed},
		{"requests only", corev1.ResourceRequirements{Requests: both}, corev1.PodQOSBurstable},
		{"cpu limit only", corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: cpu}}, corev1.PodQOSBurstable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{
				Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i", Resources: tc.res}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"},
			}
			Pods.PrepareForCreate(pod)
			if pod.Status.Phase != corev1.PodPending || pod.Status.PodIP != "" {
				t.Errorf("status not reset to Pending: %+v", pod.Status)
			}
			if pod.Status.QOSClass != tc.want {
				t.Errorf("qosClass = %s, want %s", pod.Status.QOSClass, tc.want)
			}
		})
	}
	gated := &corev1.Pod{Spec: corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: "example.com/gate"}}}}
	Pods.PrepareForCreate(gated)
	if c := gated.Status.Conditions; len(c) != 1 || c[0].Type != corev1.PodScheduled || c[0].Reason != corev1.PodReasonSchedulingGated {
		t.Errorf("gated pod conditions = %+v", c)
	}
}

func TestDefaultService(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     corev1.ServiceSpec
		wantETP  corev1.ServiceExternalTrafficPolicy
		wantITP  bool
		wantALBN bool
	}{
		{"clusterIP", corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}, "", true, false},
		{"clusterIP with externalIPs", corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, ExternalIPs: []string{"1.2.3.4"}}, corev1.ServiceExternalTrafficPolicyCluster, true, false},
		{"nodePort", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}, corev1.ServiceExternalTrafficPolicyCluster, true, false},
		{"loadBalancer", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}}, corev1.ServiceExternalTrafficPolicyCluster, true, true},
		{"externalName", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{Spec: tc.spec}
			Services.Default(svc)
			s := svc.Spec
			if s.SessionAffinity != corev1.ServiceAffinityNone {
				t.Errorf("sessionAffinity = %q", s.SessionAffinity)
			}
			if s.Type == "" {
				t.Errorf("type not defaulted")
			}
			if s.ExternalTrafficPolicy != tc.wantETP {
				t.Errorf("externalTrafficPolicy = %q, want %q", s.ExternalTrafficPolicy, tc.wantETP)
			}
			if (s.InternalTrafficPolicy != nil) != tc.wantITP || (tc.wantITP && *s.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster) {
				t.Errorf("internalTrafficPolicy = %v, want set: %v", s.InternalTrafficPolicy, tc.wantITP)
			}
			if (s.AllocateLoadBalancerNodePorts != nil) != tc.wantALBN {
				t.Errorf("allocateLoadBalancerNodePorts = %v", s.AllocateLoadBalancerNodePorts)
			}
			for _, p := range s.Ports {
				if p.Protocol != corev1.ProtocolTCP || p.TargetPort != intstr.FromInt32(p.Port) {
					t.Errorf("port defaults: %+v", p)
				}
			}
		})
	}

	svc := &corev1.Service{Spec: corev1.ServiceSpec{
		SessionAffinity: corev1.ServiceAffinityClientIP,
		ClusterIP:       "10.0.0.10",
		Ports:           []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}},
	}}
	Services.Default(svc)
	if c := svc.Spec.SessionAffinityConfig; c == nil || *c.ClientIP.TimeoutSeconds != 10800 {
		t.Errorf("ClientIP affinity timeout not defaulted: %+v", c)
	}
	if tp := svc.Spec.Ports[0].TargetPort; tp != intstr.FromString("http") {
		t.Errorf("named targetPort overwritten: %v", tp)
	}
	if ips := svc.Spec.ClusterIPs; len(ips) != 1 || ips[0] != "10.0.0.10" {
		t.Errorf("clusterIPs not filled from clusterIP: %v", ips)
	}
}

func TestDefaultReplicationController(t *testing.T) {
	tmplLabels := map[string]string{"app": "web"}
	rc := &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{
		Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tmplLabels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
	Replicationcontrollers.Default(rc)
	if rc.Spec.Replicas == nil || *rc.Spec.Replicas != 1 {
		t.Errorf("replicas = %v, want 1", rc.Spec.Replicas)
	}
	if rc.Spec.Selector["app"] != "web" || rc.Labels["app"] != "web" {
		t.Errorf("selector %v / labels %v not taken from template", rc.Spec.Selector, rc.Labels)
	}
	if rc.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways || rc.Spec.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullAlways {
		t.Errorf("template not defaulted")
	}

	given := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"own": "label"}},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptrTo(int32(0)), Selector: map[string]string{"app": "x"},
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x", "tier": "y"}}}}}
	Replicationcontrollers.Default(given)
	if *given.Spec.Replicas != 0 || len(given.Spec.Selector) != 1 || given.Labels["own"] != "label" || len(given.Labels) != 1 {
		t.Errorf("given values overwritten: replicas %d selector %v labels %v", *given.Spec.Replicas, given.Spec.Selector, given.Labels)
	}
}

func TestDefaultSecret(t *testing.T) {
	s := &corev1.Secret{Data: map[string][]byte{"a": []byte("1"), "b": []byte("2")}, StringData: map[string]string{"b": "two", "c": "3"}}
	Secrets.Default(s)
	if s.Type != corev1.SecretTypeOpaque {
		t.Errorf("type = %q, want Opaque", s.Type)
	}
	if string(s.Data["a"]) != "1" || string(s.Data["b"]) != "two" || string(s.Data["c"]) != "3" || s.StringData != nil {
		t.Errorf("stringData not merged into data: data %q stringData %v", s.Data, s.StringData)
	}
	tls := &corev1.Secret{Type: corev1.SecretTypeTLS}
	Secrets.Default(tls)
	if tls.Type != corev1.SecretTypeTLS {
		t.Errorf("explicit type overwritten: %q", tls.Type)
	}
}

func TestDefaultNamespace(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{corev1.LabelMetadataName: "spoofed"}}}
	Namespaces.Default(ns)
	Namespaces.PrepareForCreate(ns)
	if ns.Labels[corev1.LabelMetadataName] != "team-a" {
		t.Errorf("name label = %q", ns.Labels[corev1.LabelMetadataName])
	}
	if ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("phase = %q", ns.Status.Phase)
	}
	if f := ns.Spec.Finalizers; len(f) != 1 || f[0] != corev1.FinalizerKubernetes {
		t.Errorf("finalizers = %v", f)
	}

	// On update, finalizers are the /finalize subresource's business.
	upd := ns.DeepCopy()
	upd.Spec.Finalizers = nil
	Namespaces.PrepareForUpdate(upd, ns)
	if len(upd.Spec.Finalizers) != 1 {
		t.Errorf("update changed finalizers: %v", upd.Spec.Finalizers)
	}
}

func TestDefaultPersistentVolumes(t *testing.T) {
	pv := &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}}}
	Persistentvolumes.Default(pv)
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || pv.Status.Phase != corev1.VolumePending {
		t.Errorf("pv defaults: reclaim %q phase %q", pv.Spec.PersistentVolumeReclaimPolicy, pv.Status.Phase)
	}
	if vm := pv.Spec.VolumeMode; vm == nil || *vm != corev1.PersistentVolumeFilesystem {
		t.Errorf("pv volumeMode = %v", vm)
	}
	if ht := pv.Spec.HostPath.Type; ht == nil || *ht != "" {
		t.Errorf("pv hostPath type = %v", ht)
	}

	pvc := &corev1.PersistentVolumeClaim{}
	Persistentvolumeclaims.Default(pvc)
	if vm := pvc.Spec.VolumeMode; vm == nil || *vm != corev1.PersistentVolumeFilesystem || pvc.Status.Phase != corev1.ClaimPending {
		t.Errorf("pvc defaults: volumeMode %v phase %q", vm, pvc.Status.Phase)
	}
	block := corev1.PersistentVolumeBlock
	spec := &corev1.PersistentVolumeClaimSpec{VolumeMode: &block}
	DefaultPersistentVolumeClaimSpec(spec)
	if *spec.VolumeMode != corev1.PersistentVolumeBlock {
		t.Errorf("explicit volumeMode overwritten")
	}
}

func TestDefaultLimitRange(t *testing.T) {
	q := resource.MustParse
	lr := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{
			Type: corev1.LimitTypeContainer,
			Max:  corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("1Gi")},
			Min:  corev1.ResourceList{corev1.ResourceEphemeralStorage: q("1Gi")},
			// memory's default limit is given; cpu's comes from max.
			Default: corev1.ResourceList{corev1.ResourceMemory: q("512Mi")},
		},
		{Type: corev1.LimitTypePod, Max: corev1.ResourceList{corev1.ResourceCPU: q("4")}},
	}}}
	Limitranges.Default(lr)
	c := lr.Spec.Limits[0]
	check := func(list corev1.ResourceList, name corev1.ResourceName, want string) {
		t.Helper()
		if got, ok := list[name]; !ok || got.String() != want {
			t.Errorf("%s = %v, want %s", name, list, want)
		}
	}
	check(c.Default, corev1.ResourceCPU, "2")
	check(c.Default, corev1.ResourceMemory, "512Mi")
	check(c.DefaultRequest, corev1.ResourceCPU, "2")
	check(c.DefaultRequest, corev1.ResourceMemory, "512Mi")
	check(c.DefaultRequest, corev1.ResourceEphemeralStorage, "1Gi")
	if _, ok := c.Default[corev1.ResourceEphemeralStorage]; ok {
		t.Errorf("default limit taken from min: %v", c.Default)
	}
	if p := lr.Spec.Limits[1]; p.Default != nil || p.DefaultRequest != nil {
		t.Errorf("pod limit item got defaults: %+v", p)
	}
}

func TestDefaultEndpointsAndNode(t *testing.T) {
	ep := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Port: 80}, {Port: 53, Protocol: corev1.ProtocolUDP}}}}}
	Endpoints.Default(ep)
	if p := ep.Subsets[0].Ports; p[0].Protocol != corev1.ProtocolTCP || p[1].Protocol != corev1.ProtocolUDP {
		t.Errorf("endpoint port protocols = %q, %q", p[0].Protocol, p[1].Protocol)
	}

	node := &corev1.Node{
		Spec:   corev1.NodeSpec{PodCIDR: "10.244.1.0/24"},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")}},
	}
	Nodes.Default(node)
	if q := node.Status.Allocatable[corev1.ResourcePods]; q.String() != "110" {
		t.Errorf("allocatable not defaulted from capacity: %v", node.Status.Allocatable)
	}
	if c := node.Spec.PodCIDRs; len(c) != 1 || c[0] != "10.244.1.0/24" {
		t.Errorf("podCIDRs = %v", c)
	}
}
