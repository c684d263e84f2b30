package podsecurity

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/pod-security-admission/api"

	"github.com/orca-project/orca/internal/admission"
)

// Upstream's wording for the checks a bare privileged container fails.
const (
	privileged      = `privileged (container "c" must not set securityContext.privileged=true)`
	escalation      = `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)`
	capabilities    = `unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])`
	nonRoot         = `runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)`
	seccomp         = `seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	restrictedFails = privileged + ", " + escalation + ", " + capabilities + ", " + nonRoot + ", " + seccomp
)

func lv(level api.Level, version string) api.LevelVersion {
	v, err := api.ParseVersion(version)
	if err != nil {
		panic(err)
	}
	return api.LevelVersion{Level: level, Version: v}
}

func mustChecker(t *testing.T, cfg *Config) *Checker {
	t.Helper()
	c, err := NewChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func config(t *testing.T, yaml string) *Config {
	t.Helper()
	cfg, err := ParseConfig([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestPolicy(t *testing.T) {
	privLatest, restLatest := lv(api.LevelPrivileged, "latest"), lv(api.LevelRestricted, "latest")
	baselineDefaults := `
apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
defaults:
  enforce: baseline
  enforce-version: v1.30
  audit: restricted
`
	for _, tc := range []struct {
		name     string
		defaults string
		labels   map[string]string
		want     api.Policy
		errs     string
	}{
		{name: "no labels, upstream's defaults", want: api.Policy{Enforce: privLatest, Audit: privLatest, Warn: privLatest}},
		{
			name:   "enforce alone also warns at that level",
			labels: map[string]string{api.EnforceLevelLabel: "restricted"},
			want:   api.Policy{Enforce: restLatest, Audit: privLatest, Warn: restLatest},
		},
		{
			name:   "enforce version carries to warn",
			labels: map[string]string{api.EnforceLevelLabel: "baseline", api.EnforceVersionLabel: "v1.30"},
			want:   api.Policy{Enforce: lv(api.LevelBaseline, "v1.30"), Audit: privLatest, Warn: lv(api.LevelBaseline, "v1.30")},
		},
		{
			name:   "explicit warn is kept",
			labels: map[string]string{api.EnforceLevelLabel: "restricted", api.WarnLevelLabel: "privileged", api.AuditLevelLabel: "baseline", api.AuditVersionLabel: "latest"},
			want:   api.Policy{Enforce: restLatest, Audit: lv(api.LevelBaseline, "latest"), Warn: privLatest},
		},
		{
			name:     "configured defaults fill what labels leave out",
			defaults: baselineDefaults,
			labels:   map[string]string{api.WarnLevelLabel: "restricted"},
			want:     api.Policy{Enforce: lv(api.LevelBaseline, "v1.30"), Audit: restLatest, Warn: restLatest},
		},
		{
			name:   "invalid enforce fails closed, invalid warn open",
			labels: map[string]string{api.EnforceLevelLabel: "strict", api.WarnLevelLabel: "loud", api.AuditVersionLabel: "1.30"},
			want:   api.Policy{Enforce: restLatest, Audit: privLatest, Warn: privLatest},
			errs: `metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted, ` +
				`metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "1.30": must be "latest" or "v1.x", ` +
				`metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "loud": must be one of privileged, baseline, restricted`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg *Config
			if tc.defaults != "" {
				cfg = config(t, tc.defaults)
			}
			got, errs := mustChecker(t, cfg).Policy(tc.labels)
			if got != tc.want {
				t.Errorf("policy %v, want %v", got.String(), tc.want.String())
			}
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			if s := strings.Join(msgs, ", "); s != tc.errs {
				t.Errorf("errors\n got %s\nwant %s", s, tc.errs)
			}
		})
	}
}

func namespace(name string, labels ...string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i < len(labels); i += 2 {
		ns.Labels["pod-security.kubernetes.io/"+labels[i]] = labels[i+1]
	}
	return ns
}

func privilegedPod() *corev1.Pod {
	yes := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: &yes},
		}}},
	}
}

func restrictedPod() *corev1.Pod {
	no, yes := false, true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name: "c", Image: "busybox",
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
		},
	}
}

func podCreate(pod *corev1.Pod) *admission.Attributes {
	return &admission.Attributes{Operation: admission.Create, Resource: podsGVR, Namespace: pod.Namespace, Name: pod.Name, Object: pod, UserName: "alice"}
}

// result flattens a Decision for comparison.
type result struct {
	Err      string
	Warnings []string
	Audit    map[string]string
}

func flatten(d Decision) result {
	r := result{Warnings: d.Warnings, Audit: d.Audit}
	if d.Err != nil {
		r.Err = d.Err.Error()
	}
	if len(r.Audit) == 0 {
		r.Audit = nil
	}
	return r
}

const exemptions = `
apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
exemptions:
  usernames: [ci-bot]
  namespaces: [ns-exempt]
  runtimeClasses: [kata]
`

func TestPod(t *testing.T) {
	forbidden := `pods "x" is forbidden: violates PodSecurity "restricted:latest": ` + restrictedFails
	for _, tc := range []struct {
		name   string
		config string
		ns     *corev1.Namespace
		attrs  func() *admission.Attributes
		want   result
	}{
		{
			name:  "privileged namespace allows anything",
			ns:    namespace("ns"),
			attrs: func() *admission.Attributes { return podCreate(privilegedPod()) },
			want:  result{Audit: map[string]string{"enforce-policy": "privileged:latest"}},
		},
		{
			name:  "enforce refuses with every failed check, no warning",
			ns:    namespace("ns", "enforce", "restricted"),
			attrs: func() *admission.Attributes { return podCreate(privilegedPod()) },
			want:  result{Err: forbidden, Audit: map[string]string{"enforce-policy": "restricted:latest"}},
		},
		{
			name:  "a pod meeting the level passes",
			ns:    namespace("ns", "enforce", "restricted", "audit", "restricted"),
			attrs: func() *admission.Attributes { return podCreate(restrictedPod()) },
			want:  result{Audit: map[string]string{"enforce-policy": "restricted:latest"}},
		},
		{
			name:  "warn and audit at their own levels",
			ns:    namespace("ns", "enforce", "baseline", "enforce-version", "v1.30", "warn", "baseline", "audit", "restricted"),
			attrs: func() *admission.Attributes { return podCreate(privilegedPod()) },
			want: result{Err: `pods "x" is forbidden: violates PodSecurity "baseline:v1.30": ` + privileged, Audit: map[string]string{
				"enforce-policy":   "baseline:v1.30",
				"audit-violations": `would violate PodSecurity "restricted:latest": ` + restrictedFails,
			}},
		},
		{
			name:  "warn only",
			ns:    namespace("ns", "warn", "baseline"),
			attrs: func() *admission.Attributes { return podCreate(privilegedPod()) },
			want: result{
				Warnings: []string{`would violate PodSecurity "baseline:latest": ` + privileged},
				Audit:    map[string]string{"enforce-policy": "privileged:latest"},
			},
		},
		{
			name:  "invalid enforce label enforces restricted",
			ns:    namespace("ns", "enforce", "strict"),
			attrs: func() *admission.Attributes { return podCreate(privilegedPod()) },
			want: result{Err: forbidden, Audit: map[string]string{
				"enforce-policy": "restricted:latest",
				"error":          `Failed to parse policy: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted`,
			}},
		},
		{
			name:   "exempt namespace",
			config: exemptions,
			ns:     namespace("ns-exempt", "enforce", "restricted"),
			attrs: func() *admission.Attributes {
				a := podCreate(privilegedPod())
				a.Namespace = "ns-exempt"
				return a
			},
			want: result{Audit: map[string]string{"exempt": "namespace"}},
		},
		{
			name:   "exempt user",
			config: exemptions,
			ns:     namespace("ns", "enforce", "restricted"),
			attrs: func() *admission.Attributes {
				a := podCreate(privilegedPod())
				a.UserName = "ci-bot"
				return a
			},
			want: result{Audit: map[string]string{"exempt": "user"}},
		},
		{
			name:   "exempt runtime class",
			config: exemptions,
			ns:     namespace("ns", "enforce", "restricted"),
			attrs: func() *admission.Attributes {
				pod := privilegedPod()
				kata := "kata"
				pod.Spec.RuntimeClassName = &kata
				return podCreate(pod)
			},
			want: result{Audit: map[string]string{"exempt": "runtimeClass"}},
		},
		{
			name:   "an exemption for another user does not apply",
			config: exemptions,
			ns:     namespace("ns", "enforce", "restricted"),
			attrs:  func() *admission.Attributes { return podCreate(privilegedPod()) },
			want:   result{Err: forbidden, Audit: map[string]string{"enforce-policy": "restricted:latest"}},
		},
		{
			name: "update that keeps the images is not checked",
			ns:   namespace("ns", "enforce", "restricted"),
			attrs: func() *admission.Attributes {
				a := podCreate(privilegedPod())
				a.Operation, a.OldObject = admission.Update, privilegedPod()
				a.Object.(*corev1.Pod).Labels = map[string]string{"new": "label"}
				return a
			},
		},
		{
			name: "update of an image is checked",
			ns:   namespace("ns", "enforce", "restricted"),
			attrs: func() *admission.Attributes {
				a := podCreate(privilegedPod())
				a.Operation, a.OldObject = admission.Update, privilegedPod()
				a.Object.(*corev1.Pod).Spec.Containers[0].Image = "busybox:2"
				return a
			},
			want: result{Err: forbidden, Audit: map[string]string{"enforce-policy": "restricted:latest"}},
		},
		{
			name: "status writes are not checked",
			ns:   namespace("ns", "enforce", "restricted"),
			attrs: func() *admission.Attributes {
				a := podCreate(privilegedPod())
				a.Operation, a.OldObject, a.Subresource = admission.Update, privilegedPod(), "status"
				return a
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg *Config
			if tc.config != "" {
				cfg = config(t, tc.config)
			}
			got := flatten(mustChecker(t, cfg).Pod(tc.attrs(), tc.ns))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func deployment(pod *corev1.Pod) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns"},
		Spec:       appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: pod.Spec}},
	}
}

func TestPodController(t *testing.T) {
	deploymentsGVR := appsv1.SchemeGroupVersion.WithResource("deployments")
	create := func(d *appsv1.Deployment) *admission.Attributes {
		return &admission.Attributes{Operation: admission.Create, Resource: deploymentsGVR, Namespace: "ns", Name: d.Name, Object: d}
	}
	for _, tc := range []struct {
		name  string
		ns    *corev1.Namespace
		attrs *admission.Attributes
		want  result
	}{
		{
			name:  "enforce warns, never refuses",
			ns:    namespace("ns", "enforce", "restricted"),
			attrs: create(deployment(privilegedPod())),
			want:  result{Warnings: []string{`would violate PodSecurity "restricted:latest": ` + restrictedFails}},
		},
		{
			name:  "enforce alone with warn privileged says nothing",
			ns:    namespace("ns", "enforce", "restricted", "warn", "privileged"),
			attrs: create(deployment(privilegedPod())),
		},
		{
			name:  "audit",
			ns:    namespace("ns", "audit", "baseline"),
			attrs: create(deployment(privilegedPod())),
			want:  result{Audit: map[string]string{"audit-violations": `would violate PodSecurity "baseline:latest": ` + privileged}},
		},
		{
			name:  "a compliant template",
			ns:    namespace("ns", "enforce", "restricted"),
			attrs: create(deployment(restrictedPod())),
		},
		{
			name: "scale is not checked",
			ns:   namespace("ns", "enforce", "restricted"),
			attrs: func() *admission.Attributes {
				a := create(deployment(privilegedPod()))
				a.Operation, a.Subresource = admission.Update, "scale"
				return a
			}(),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := flatten(mustChecker(t, nil).PodController(tc.attrs, tc.ns))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNamespace(t *testing.T) {
	namespacesKind := corev1.SchemeGroupVersion.WithKind("Namespace")
	write := func(op admission.Operation, ns, old *corev1.Namespace) *admission.Attributes {
		a := &admission.Attributes{Operation: op, Resource: namespacesGVR, Kind: namespacesKind, Name: ns.Name, Object: ns}
		if old != nil {
			a.OldObject = old
		}
		return a
	}
	restricted := lv(api.LevelRestricted, "latest")
	for _, tc := range []struct {
		name      string
		attrs     *admission.Attributes
		want      result
		checkPods *api.LevelVersion
	}{
		{
			name:  "valid labels",
			attrs: write(admission.Create, namespace("ns", "enforce", "restricted", "warn-version", "v1.25"), nil),
		},
		{
			name:  "invalid label on create",
			attrs: write(admission.Create, namespace("ns", "enforce", "strict"), nil),
			want:  result{Err: `Namespace "ns" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted`},
		},
		{
			name:  "invalid version on update",
			attrs: write(admission.Update, namespace("ns", "enforce-version", "1.30"), namespace("ns")),
			want:  result{Err: `Namespace "ns" is invalid: metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "1.30": must be "latest" or "v1.x"`},
		},
		{
			name:  "labels invalid before and after in the same way",
			attrs: write(admission.Update, namespace("ns", "enforce", "strict"), namespace("ns", "enforce", "strict")),
		},
		{
			name:      "tightened enforce checks the pods",
			attrs:     write(admission.Update, namespace("ns", "enforce", "restricted"), namespace("ns", "enforce", "baseline")),
			checkPods: &restricted,
		},
		{
			name:  "relaxed enforce does not",
			attrs: write(admission.Update, namespace("ns", "enforce", "baseline"), namespace("ns", "enforce", "restricted")),
		},
		{
			name: "status is not checked",
			attrs: func() *admission.Attributes {
				a := write(admission.Update, namespace("ns", "enforce", "x"), namespace("ns"))
				a.Subresource = "status"
				return a
			}(),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, check := mustChecker(t, nil).Namespace(tc.attrs)
			if diff := cmp.Diff(tc.want, flatten(d)); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
			if (check == nil) != (tc.checkPods == nil) || check != nil && *check != *tc.checkPods {
				t.Errorf("pods checked against %v, want %v", check, tc.checkPods)
			}
		})
	}
}

func TestExemptNamespaceLabels(t *testing.T) {
	c := mustChecker(t, config(t, exemptions))
	ns := namespace("ns-exempt", "enforce", "restricted", "audit", "privileged", "warn", "baseline")
	d, check := c.Namespace(&admission.Attributes{Operation: admission.Create, Resource: namespacesGVR, Name: ns.Name, Object: ns})
	want := []string{`namespace "ns-exempt" is exempt from Pod Security, and the policy (enforce=restricted:latest, warn=baseline:latest) will be ignored`}
	if diff := cmp.Diff(want, d.Warnings); diff != "" || d.Err != nil || check != nil {
		t.Errorf("warnings (-want +got):\n%s\nerr %v, check %v", diff, d.Err, check)
	}
}

func TestExistingPods(t *testing.T) {
	pod := func(name string, owner string, p *corev1.Pod) *corev1.Pod {
		p.Name = name
		if owner != "" {
			yes := true
			p.OwnerReferences = []metav1.OwnerReference{{UID: types.UID("uid-" + owner), Name: owner, Controller: &yes}}
		}
		return p
	}
	hostNet := privilegedPod()
	hostNet.Spec.Containers[0].SecurityContext = nil
	hostNet.Spec.HostNetwork = true
	pods := []*corev1.Pod{
		pod("web-2", "web", privilegedPod()),
		pod("web-1", "web", privilegedPod()),
		pod("fine", "", restrictedPod()),
		pod("lone", "", privilegedPod()),
		pod("net", "", hostNet),
	}
	got := mustChecker(t, nil).ExistingPods(context.Background(), "ns", lv(api.LevelBaseline, "latest"), pods)
	want := []string{
		`existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"`,
		`lone (and 2 other pods): privileged`,
		`net: host namespaces`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
