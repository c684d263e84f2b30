package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// newPod returns a minimal valid pod, not yet defaulted.
func newPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "nginx:1.25"}},
		},
	}
}

func TestValidatePodCreate(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Pod)
		want   []string
	}{
		{"minimal", func(*corev1.Pod) {}, nil},
		{"full", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
			}
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Command: []string{"true"}}}
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80}, {Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}}
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "cfg", MountPath: "/etc/cfg", ReadOnly: true}}
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("128Mi")},
			}
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("http")}}}
			p.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
			p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptrTo(int64(300))}}
			p.Spec.Hostname, p.Spec.Subdomain = "web-0", "web"
			p.Spec.ServiceAccountName = "default"
		}, nil},
		{"no containers", func(p *corev1.Pod) { p.Spec.Containers = nil },
			[]string{"spec.containers: Required value"}},
		{"missing image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" },
			[]string{"spec.containers[0].image: Required value"}},
		{"image whitespace", func(p *corev1.Pod) { p.Spec.Containers[0].Image = " nginx" },
			[]string{"spec.containers[0].image: Invalid value"}},
		{"bad container name", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "App_1" },
			[]string{"spec.containers[0].name: Invalid value"}},
		{"missing container name", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "" },
			[]string{"spec.containers[0].name: Required value"}},
		{"duplicate container names", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "app", Image: "x"})
		}, []string{"spec.containers[1].name: Duplicate value"}},
		{"init container clashes with container", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "app", Image: "x"}}
		}, []string{"spec.initContainers[0].name: Duplicate value"}},
		{"port out of range", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 70000}, {ContainerPort: 80, HostPort: -1}}
		}, []string{"spec.containers[0].ports[0].containerPort: Invalid value", "spec.containers[0].ports[1].hostPort: Invalid value"}},
		{"port required", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http"}}
		}, []string{"spec.containers[0].ports[0].containerPort: Required value"}},
		{"port protocol", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: "ICMP"}}
		}, []string{"spec.containers[0].ports[0].protocol: Unsupported value"}},
		{"port names", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80}, {Name: "http", ContainerPort: 81}, {Name: "not_iana", ContainerPort: 82}}
		}, []string{"spec.containers[0].ports[1].name: Duplicate value", "spec.containers[0].ports[2].name: Invalid value"}},
		{"host port conflict", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "b", Image: "x", Ports: []corev1.ContainerPort{{ContainerPort: 81, HostPort: 8080}}})
		}, []string{"spec.containers[1].ports[0].hostPort: Duplicate value"}},
		{"env names", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: ""}, {Name: "A=B"}}
		}, []string{"spec.containers[0].env[0].name: Required value", "spec.containers[0].env[1].name: Invalid value"}},
		{"env valueFrom", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{
				{Name: "A", ValueFrom: &corev1.EnvVarSource{}},
				{Name: "B", Value: "x", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}},
				{Name: "C", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.phase"}}},
				{Name: "D", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.gpu"}}},
			}
		}, []string{
			"spec.containers[0].env[0].valueFrom: Invalid value",
			"spec.containers[0].env[1].valueFrom: Invalid value",
			"spec.containers[0].env[2].valueFrom.fieldRef.fieldPath: Unsupported value",
			"spec.containers[0].env[3].valueFrom.resourceFieldRef.resource: Unsupported value",
		}},
		{"volume errors", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{
				{Name: "Bad_Name", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "a", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "a", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "two", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}, HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}},
				{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{DefaultMode: ptrTo(int32(01000))}}},
			}
		}, []string{
			"spec.volumes[0].name: Invalid value",
			"spec.volumes[2].name: Duplicate value",
			"spec.volumes[3].hostPath: Forbidden",
			"spec.volumes[4].secret.defaultMode: Invalid value",
			"spec.volumes[4].secret.secretName: Required value",
		}},
		{"volume mounts", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "data"}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
				{Name: "missing", MountPath: "/m"},
				{Name: "data"},
				{Name: "data", MountPath: "/m"},
			}
		}, []string{
			"spec.containers[0].volumeMounts[0].name: Not found",
			"spec.containers[0].volumeMounts[1].mountPath: Required value",
			"spec.containers[0].volumeMounts[2].mountPath: Invalid value",
		}},
		{"restart and dns policy", func(p *corev1.Pod) {
			p.Spec.RestartPolicy = "Sometimes"
			p.Spec.DNSPolicy = "Google"
		}, []string{"spec.dnsPolicy: Unsupported value", "spec.restartPolicy: Unsupported value"}},
		{"requests over limits", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: q("2")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: q("1")},
			}
		}, []string{"spec.containers[0].resources.requests: Invalid value"}},
		{"resource names and quantities", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceMemory: q("-1Mi"), "gpus": q("1"), "example.com/foo": q("1")},
			}
		}, []string{
			"spec.containers[0].resources.limits: Required value", // extended resources need a limit
			// Unknown to both the general and the container rules.
			"spec.containers[0].resources.requests[gpus]: Invalid value",
			"spec.containers[0].resources.requests[gpus]: Invalid value",
			"spec.containers[0].resources.requests[memory]: Invalid value",
		}},
		{"probe with two handlers and bad thresholds", func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
				ProbeHandler:     corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}, TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}},
				PeriodSeconds:    -1,
				FailureThreshold: -2,
			}
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, SuccessThreshold: 2}
			p.Spec.Containers[0].StartupProbe = &corev1.Probe{}
		}, []string{
			"spec.containers[0].livenessProbe.successThreshold: Invalid value",
			"spec.containers[0].readinessProbe.failureThreshold: Invalid value",
			"spec.containers[0].readinessProbe.periodSeconds: Invalid value",
			"spec.containers[0].readinessProbe.tcpSocket: Forbidden",
			"spec.containers[0].startupProbe: Required value",
		}},
		{"probe on init container", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "x", ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}}}
		}, []string{"spec.initContainers[0].readinessProbe: Forbidden"}},
		{"negative grace period", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptrTo(int64(-5)) },
			[]string{"spec.terminationGracePeriodSeconds: Invalid value"}},
		{"activeDeadlineSeconds", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptrTo(int64(0)) },
			[]string{"spec.activeDeadlineSeconds: Invalid value"}},
		{"nodeSelector", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"bad key!": "v", "k": "bad value!"} },
			[]string{"spec.nodeSelector: Invalid value", "spec.nodeSelector: Invalid value"}},
		{"tolerations", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{
				{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"},
				{Key: "k", Effect: "Sometimes"},
				{Operator: corev1.TolerationOpEqual, Value: "v"},
				{Key: "k", Operator: "Maybe"},
				{Key: "k", Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptrTo(int64(10))},
			}
		}, []string{
			"spec.tolerations[0].operator: Invalid value",
			"spec.tolerations[1].effect: Unsupported value",
			"spec.tolerations[2].operator: Invalid value",
			"spec.tolerations[3].operator: Unsupported value",
			"spec.tolerations[4].effect: Invalid value",
		}},
		{"hostname and subdomain", func(p *corev1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "Web", "a.b" },
			[]string{"spec.hostname: Invalid value", "spec.subdomain: Invalid value"}},
		{"hostNetwork hostPort must match", func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 81}}
		}, []string{"spec.containers[0].ports[0].hostPort: Invalid value"}},
		{"ephemeral containers on create", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
		}, []string{"spec.ephemeralContainers: Forbidden"}},
		{"token projection without service account", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "tok", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}}
		}, []string{"spec.volumes[0].projected.sources[0].serviceAccountToken: Forbidden"}},
		{"pod certificate and trust bundle projections", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "certs", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{PodCertificate: &corev1.PodCertificateProjection{SignerName: "example.com/pods", KeyType: "ECDSAP256", CredentialBundlePath: "creds.pem"}},
					{PodCertificate: &corev1.PodCertificateProjection{SignerName: "kubernetes.io/pods", KeyType: "DSA", MaxExpirationSeconds: ptrTo(int32(2 * 86400))}},
					{PodCertificate: &corev1.PodCertificateProjection{SignerName: "pods", KeyType: "ED25519", KeyPath: "creds.pem", UserAnnotations: map[string]string{"plain": "x"}}},
					{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptrTo("example.com:foo:Bad"), Path: "ca.pem"}},
					{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{SignerName: ptrTo("example.com"), Path: "ca2.pem"}},
				}}}}}
		}, []string{
			"spec.volumes[0].projected: Invalid value",
			"spec.volumes[0].projected.sources[1].podCertificate: Required value",
			"spec.volumes[0].projected.sources[1].podCertificate.keyType: Unsupported value",
			"spec.volumes[0].projected.sources[1].podCertificate.maxExpirationSeconds: Invalid value",
			"spec.volumes[0].projected.sources[2].podCertificate.signerName: Invalid value",
			"spec.volumes[0].projected.sources[2].podCertificate.userAnnotations: Invalid value",
			"spec.volumes[0].projected.sources[3].clusterTrustBundle.name: Invalid value",
			"spec.volumes[0].projected.sources[4].clusterTrustBundle.signerName: Invalid value",
		}},
		{"security context", func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptrTo(int64(-1)), SeccompProfile: &corev1.SeccompProfile{Type: "Custom"}}
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptrTo(false), Privileged: ptrTo(true)}
		}, []string{
			"spec.containers[0].securityContext: Invalid value",
			"spec.securityContext.runAsUser: Invalid value",
			"spec.securityContext.seccompProfile.type: Unsupported value",
		}},
		{"affinity", func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}},
				PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
					{Weight: 0, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}}}},
			}
		}, []string{
			"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value",
			"spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value",
		}},
		{"dnsPolicy None needs config", func(p *corev1.Pod) { p.Spec.DNSPolicy = corev1.DNSNone },
			[]string{"spec.dnsConfig: Required value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod()
			tc.mutate(pod)
			expectErrs(t, runCreate(Pods, pod), tc.want...)
		})
	}
}

func TestValidatePodMessages(t *testing.T) {
	pod := newPod()
	pod.Spec.Containers[0].Image = ""
	errs := runCreate(Pods, pod)
	if len(errs) != 1 || errs[0].Error() != "spec.containers[0].image: Required value" {
		t.Errorf("got %v", errs)
	}

	pod = newPod()
	pod.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"}}
	expectDetail(t, runCreate(Pods, pod), "spec.tolerations[0].operator", "value must be empty when `operator` is 'Exists'")

	pod = newPod()
	pod.Spec.Volumes = []corev1.Volume{{Name: "a", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}, HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}}}
	expectDetail(t, runCreate(Pods, pod), "spec.volumes[0].hostPath", "may not specify more than 1 volume type")

	pod = newPod()
	pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	expectDetail(t, runCreate(Pods, pod), "spec.containers[0].resources.requests", "must be less than or equal to cpu limit of 1")
}

func TestValidatePodUpdate(t *testing.T) {
	stored := func() *corev1.Pod {
		p := newPod()
		p.ResourceVersion = "5"
		p.Spec.Tolerations = []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptrTo(int64(60))}}
		p.Spec.ActiveDeadlineSeconds = ptrTo(int64(100))
		Pods.Default(p)
		return p
	}
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Pod)
		want   []string
	}{
		{"no change", func(*corev1.Pod) {}, nil},
		{"change serviceAccountName", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "other" },
			[]string{"spec: Forbidden"}},
		{"image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.26" }, nil},
		{"lower activeDeadlineSeconds", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptrTo(int64(50)) }, nil},
		{"raise activeDeadlineSeconds", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptrTo(int64(200)) },
			[]string{"spec.activeDeadlineSeconds: Invalid value"}},
		{"unset activeDeadlineSeconds", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = nil },
			[]string{"spec.activeDeadlineSeconds: Invalid value"}},
		{"add toleration", func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "b", Operator: corev1.TolerationOpExists})
		}, nil},
		{"change tolerationSeconds", func(p *corev1.Pod) { p.Spec.Tolerations[0].TolerationSeconds = ptrTo(int64(10)) }, nil},
		{"remove toleration", func(p *corev1.Pod) { p.Spec.Tolerations = nil },
			[]string{"spec.tolerations: Forbidden"}},
		{"change env", func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "1"}} },
			[]string{"spec: Forbidden"}},
		{"change nodeName", func(p *corev1.Pod) { p.Spec.NodeName = "node-1" },
			[]string{"spec: Forbidden"}},
		{"add container", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "b", Image: "x"})
		}, []string{"spec.containers: Forbidden"}},
		{"clear image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" },
			[]string{"spec.containers[0].image: Required value", "spec.containers[0].image: Required value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := stored()
			pod := old.DeepCopy()
			tc.mutate(pod)
			expectErrs(t, runUpdate(Pods, pod, old), tc.want...)
		})
	}

	// A pod stored before its serviceAccount alias was filled in may
	// still be updated: the alias only mirrors the name.
	legacy := stored()
	legacy.Spec.ServiceAccountName, legacy.Spec.DeprecatedServiceAccount = "builder", ""
	next := legacy.DeepCopy()
	next.Spec.Containers[0].Image = "nginx:1.26"
	expectErrs(t, runUpdate(Pods, next, legacy))
	if next.Spec.DeprecatedServiceAccount != "builder" {
		t.Errorf("alias not filled in on update: %q", next.Spec.DeprecatedServiceAccount)
	}

	old := stored()
	pod := old.DeepCopy()
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
	errs := Pods.ValidateUpdate(pod, old)
	want := "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, want) {
		t.Errorf("forbidden update message: %v", errs)
	}

	// A pod stored with a negative grace period may have it set to 1.
	neg := stored()
	neg.Spec.TerminationGracePeriodSeconds = ptrTo(int64(-1))
	fixed := neg.DeepCopy()
	fixed.Spec.TerminationGracePeriodSeconds = ptrTo(int64(1))
	expectErrs(t, Pods.ValidateUpdate(fixed, neg))

	// Existing ephemeral containers do not block later updates.
	withDebug := stored()
	withDebug.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debug", Image: "busybox"}}}
	Pods.Default(withDebug)
	upd := withDebug.DeepCopy()
	upd.Spec.Containers[0].Image = "nginx:1.27"
	expectErrs(t, runUpdate(Pods, upd, withDebug))
}

func TestValidatePodTemplateSpec(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
	DefaultPodTemplateSpec(tmpl)
	p := tmpl.DeepCopy()
	expectErrs(t, ValidatePodTemplateSpec(p, nil))

	p = tmpl.DeepCopy()
	p.Labels["bad key!"] = "x"
	p.Spec.Containers[0].Image = ""
	p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debug", Image: "busybox", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent}}}
	expectErrs(t, ValidatePodTemplateSpec(p, nilPath().Child("spec", "template")),
		"spec.template.labels: Invalid value",
		"spec.template.spec.containers[0].image: Required value",
		"spec.template.spec.ephemeralContainers: Forbidden")

	// Templates may leave hostPort unset under hostNetwork; pods may not.
	p = tmpl.DeepCopy()
	p.Spec.HostNetwork = true
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}}
	expectErrs(t, ValidatePodTemplateSpec(p, nil))

	// Whitespace around an image is tolerated in templates.
	p = tmpl.DeepCopy()
	p.Spec.Containers[0].Image = " "
	expectErrs(t, ValidatePodSpec(&p.Spec, nil))
}
