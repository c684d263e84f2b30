package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orca-project/orca/internal/audit"
	"github.com/orca-project/orca/internal/server"
)

// privilegedPodYAML is the simplest pod the restricted level refuses for
// every reason a bare privileged container gives.
const privilegedPodYAML = `apiVersion: v1
kind: Pod
metadata:
  name: priv
spec:
  containers:
  - name: c
    image: busybox
    securityContext:
      privileged: true
`

// Upstream's reasons, in upstream's order, for privilegedPodYAML.
const (
	psaPrivileged        = `privileged (container "c" must not set securityContext.privileged=true)`
	psaRestrictedReasons = psaPrivileged +
		`, allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)` +
		`, unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])` +
		`, runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)` +
		`, seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
)

func labelNamespace(t *testing.T, ns string, labels ...string) kubectlResult {
	t.Helper()
	return runKubectl(t, "", append([]string{"label", "namespace", ns, "--overwrite"}, labels...)...)
}

// TestPodSecurityKubectl drives the PodSecurity levels the way a user
// meets them: refusals, warnings and namespace label checks as kubectl
// prints them.
func TestPodSecurityKubectl(t *testing.T) {
	ctx := context.Background()

	// enforce: the pod is refused with upstream's message.
	restricted := testNamespace(t, "psa-restricted")
	if res := labelNamespace(t, restricted, "pod-security.kubernetes.io/enforce=restricted"); res.Code != 0 {
		t.Fatalf("label: %s", res.Stderr)
	}
	res := runKubectl(t, privilegedPodYAML, "apply", "-n", restricted, "-f", "-")
	want := `Error from server (Forbidden): error when creating "STDIN": pods "priv" is forbidden: violates PodSecurity "restricted:latest": ` + psaRestrictedReasons
	if res.Code == 0 || strings.TrimSpace(res.Stderr) != want {
		t.Errorf("privileged pod in a restricted namespace: exit %d\n got %s\nwant %s", res.Code, res.Stderr, want)
	}
	if _, err := client.CoreV1().Pods(restricted).Get(ctx, "priv", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("refused pod was stored: %v", err)
	}

	// Workloads are warned, never refused: their pods are checked
	// when they are made.
	res = runKubectl(t, "", "create", "deployment", "web", "-n", restricted, "--image=busybox")
	if res.Code != 0 {
		t.Fatalf("deployment in a restricted namespace: %s", res.Stderr)
	}
	wantWarning := `Warning: would violate PodSecurity "restricted:latest": ` +
		`allowPrivilegeEscalation != false (container "busybox" must set securityContext.allowPrivilegeEscalation=false)` +
		`, unrestricted capabilities (container "busybox" must set securityContext.capabilities.drop=["ALL"])` +
		`, runAsNonRoot != true (pod or container "busybox" must set securityContext.runAsNonRoot=true)` +
		`, seccompProfile (pod or container "busybox" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	if strings.TrimSpace(res.Stderr) != wantWarning {
		t.Errorf("deployment warning\n got %s\nwant %s", res.Stderr, wantWarning)
	}

	// warn: the pod is created and kubectl prints the warning.
	warned := testNamespace(t, "psa-warn")
	if res := labelNamespace(t, warned, "pod-security.kubernetes.io/warn=baseline"); res.Code != 0 {
		t.Fatalf("label: %s", res.Stderr)
	}
	res = runKubectl(t, privilegedPodYAML, "apply", "-n", warned, "-f", "-")
	if res.Code != 0 {
		t.Fatalf("privileged pod in a warn namespace: %s", res.Stderr)
	}
	if want := `Warning: would violate PodSecurity "baseline:latest": ` + psaPrivileged; strings.TrimSpace(res.Stderr) != want {
		t.Errorf("warning\n got %s\nwant %s", res.Stderr, want)
	}

	// Enforcing on a namespace warns about the pods already there.
	res = labelNamespace(t, warned, "pod-security.kubernetes.io/enforce=baseline")
	if res.Code != 0 {
		t.Fatalf("enforce on a namespace with a privileged pod: %s", res.Stderr)
	}
	wantLines := "Warning: existing pods in namespace \"" + warned + "\" violate the new PodSecurity enforce level \"baseline:latest\"\n" +
		"Warning: priv: privileged"
	if strings.TrimSpace(res.Stderr) != wantLines {
		t.Errorf("enforce label warnings\n got %s\nwant %s", res.Stderr, wantLines)
	}

	// Invalid values are refused with upstream's validation message.
	res = labelNamespace(t, warned, "pod-security.kubernetes.io/enforce=strict")
	want = `The Namespace "` + warned + `" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted`
	if res.Code == 0 || strings.TrimSpace(res.Stderr) != want {
		t.Errorf("invalid label: exit %d\n got %s\nwant %s", res.Code, res.Stderr, want)
	}
	bad := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "psa-bad-version", Labels: map[string]string{"pod-security.kubernetes.io/warn-version": "1.30"}}}
	_, err := client.CoreV1().Namespaces().Create(ctx, bad, metav1.CreateOptions{})
	want = `Namespace "psa-bad-version" is invalid: metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.30": must be "latest" or "v1.x"`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("namespace with an invalid version label: %v", err)
	}
}

// warningCollector keeps the warnings a client-go client is given.
type warningCollector struct {
	mu   sync.Mutex
	seen []string
}

func (w *warningCollector) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warningCollector) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.seen
	w.seen = nil
	return out
}

// TestPodSecurityConfiguration runs a control plane with an
// AdmissionConfiguration file: cluster-wide defaults stricter than
// upstream's, an exempt namespace and an exempt user, and the audit
// annotations each decision leaves.
func TestPodSecurityConfiguration(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "admission.yaml")
	psaPath := filepath.Join(dir, "podsecurity.yaml")
	policyPath := filepath.Join(dir, "audit-policy.yaml")
	logPath := filepath.Join(dir, "audit.log")
	for path, content := range map[string]string{
		// The PodSecurity configuration in a file of its own, by a
		// relative path, as upstream allows.
		cfgPath: `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  path: podsecurity.yaml
`,
		psaPath: `apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
defaults:
  enforce: baseline
  audit: restricted
exemptions:
  namespaces: [psa-exempt]
  usernames: [psa-exempt-user]
`,
		policyPath: `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  resources: [{group: "", resources: ["pods"]}]
`,
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cp := startControlPlane(t, server.Options{
		AdmissionControlConfigFile: cfgPath,
		AuditPolicyFile:            policyPath,
		AuditLog:                   audit.LogFile{Path: logPath},
	})
	warnings := &warningCollector{}
	clientAs := func(name string, groups ...string) kubernetes.Interface {
		cert := cp.user(t, name, groups...)
		return kubernetes.NewForConfigOrDie(&rest.Config{
			Host:            cp.inst.URL,
			TLSClientConfig: rest.TLSClientConfig{CAData: cp.ca.CertPEM, CertData: cert.CertPEM, KeyData: cert.KeyPEM},
			WarningHandler:  warnings,
		})
	}
	admin := clientAs("system:admin", "system:masters")
	exemptUser := clientAs("psa-exempt-user", "system:masters")
	ctx := context.Background()
	pod := func(name string) *corev1.Pod {
		yes := true
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: &yes},
			}}},
		}
	}
	mkNS := func(name string, labels map[string]string) {
		t.Helper()
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// No controllers run here to make the account pods default to.
		if _, err := admin.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The configured default enforces baseline where no label says
	// otherwise.
	mkNS("psa-default", nil)
	_, err := admin.CoreV1().Pods("psa-default").Create(ctx, pod("by-default"), metav1.CreateOptions{})
	if want := `pods "by-default" is forbidden: violates PodSecurity "baseline:latest": ` + psaPrivileged; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("privileged pod under the default level: %v", err)
	}

	// An exempt user passes where others are refused.
	if _, err := exemptUser.CoreV1().Pods("psa-default").Create(ctx, pod("by-exempt-user"), metav1.CreateOptions{}); err != nil {
		t.Errorf("exempt user: %v", err)
	}

	// An exempt namespace passes whatever its labels say, and whoever
	// labels it is told so.
	warnings.take()
	mkNS("psa-exempt", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	want := []string{`namespace "psa-exempt" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored`}
	if got := warnings.take(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("exempt namespace warnings %q, want %q", got, want)
	}
	if _, err := admin.CoreV1().Pods("psa-exempt").Create(ctx, pod("in-exempt-ns"), metav1.CreateOptions{}); err != nil {
		t.Errorf("exempt namespace: %v", err)
	}

	// Every decision is in the audit log, under upstream's keys.
	annotations := map[string]map[string]string{}
	eventually(t, 10*time.Second, func() error {
		for _, ev := range readAuditLog(t, logPath) {
			if ev.ObjectRef != nil && ev.ObjectRef.Resource == "pods" && ev.Verb == "create" && ev.Stage == auditv1.StageResponseComplete {
				annotations[ev.ObjectRef.Name] = ev.Annotations
			}
		}
		if len(annotations) < 3 {
			return fmt.Errorf("pod creates audited: %v", annotations)
		}
		return nil
	})
	for name, want := range map[string]map[string]string{
		"by-default": {
			"pod-security.kubernetes.io/enforce-policy":   "baseline:latest",
			"pod-security.kubernetes.io/audit-violations": `would violate PodSecurity "restricted:latest": ` + psaRestrictedReasons,
		},
		"by-exempt-user": {"pod-security.kubernetes.io/exempt": "user"},
		"in-exempt-ns":   {"pod-security.kubernetes.io/exempt": "namespace"},
	} {
		got := annotations[name]
		for k, v := range want {
			if got[k] != v {
				t.Errorf("pod %s: audit annotation %s = %q, want %q (all: %v)", name, k, got[k], v, got)
			}
		}
	}
}
