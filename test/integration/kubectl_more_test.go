package integration

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var nsSeq atomic.Int64

// testNamespace creates a namespace for one test run: base plus a number,
// so that -count=N runs do not collide on the shared server.
func testNamespace(t *testing.T, base string) string {
	t.Helper()
	ns := fmt.Sprintf("%s-%d", base, nsSeq.Add(1))
	mkNamespace(t, ns)
	return ns
}

// tableRow returns the fields of the line of a `kubectl get` table whose
// first column is name, and fails the test if there is none.
func tableRow(t *testing.T, out, name string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return f
		}
	}
	t.Fatalf("no row %q in:\n%s", name, out)
	return nil
}

// header returns the column names of a `kubectl get` table. Names with a
// space (LAST SEEN) come out as two words.
func header(out string) string {
	first, _, _ := strings.Cut(out, "\n")
	return strings.Join(strings.Fields(first), " ")
}

func TestKubectlExplain(t *testing.T) {
	out := mustKubectl(t, "", "explain", "deployment.spec.strategy")
	for _, want := range []string{
		"KIND:", "Deployment", "VERSION:", "v1",
		"FIELD: strategy <DeploymentStrategy>", "DESCRIPTION:",
		"The deployment strategy to use to replace existing pods with new ones.",
		"FIELDS:", "rollingUpdate", "<RollingUpdateDeployment>", "type", "<string>",
		// The enum comes from OpenAPI v3 only; v2 does not carry it.
		"enum: Recreate, RollingUpdate",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain deployment.spec.strategy lacks %q:\n%s", want, out)
		}
	}

	out = mustKubectl(t, "", "explain", "pods", "--recursive")
	for _, want := range []string{"KIND:", "Pod", "FIELDS:", "containers", "<[]Container>", "readinessProbe", "terminationGracePeriodSeconds", "podIP"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain pods --recursive lacks %q", want)
		}
	}
	// Recursive output nests fields: the container's image is indented
	// deeper than spec itself.
	var specIndent, imageIndent int
	for _, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case specIndent == 0 && strings.HasPrefix(trimmed, "spec\t"):
			specIndent = len(line) - len(trimmed)
		case specIndent > 0 && imageIndent == 0 && strings.HasPrefix(trimmed, "image\t"):
			imageIndent = len(line) - len(trimmed)
		}
	}
	if specIndent == 0 || imageIndent <= specIndent {
		t.Errorf("explain --recursive does not nest: spec at %d, image at %d", specIndent, imageIndent)
	}

	res := runKubectl(t, "", "explain", "deployment.spec.nosuchfield")
	if res.Code == 0 || !strings.Contains(res.Stderr, "nosuchfield") {
		t.Errorf("explain of a missing field: code %d stderr %q", res.Code, res.Stderr)
	}
}

func TestKubectlApplyStrictValidation(t *testing.T) {
	ns := testNamespace(t, "kstrict")
	manifest := strings.ReplaceAll(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: typo
  namespace: NS
spec:
  selector:
    matchLabels: {app: typo}
  template:
    metadata:
      labels: {app: typo}
    spec:
      containers:
      - name: c
        image: busybox
        imagePullPolice: Always
`, "NS", ns)
	res := runKubectl(t, manifest, "apply", "--validate=strict", "-f", "-")
	if res.Code == 0 {
		t.Fatalf("strict apply of an unknown field succeeded:\n%s", res.Stdout)
	}
	if !strings.Contains(res.Stderr, `unknown field "spec.template.spec.containers[0].imagePullPolice"`) {
		t.Errorf("error does not name the unknown field by its path:\n%s", res.Stderr)
	}
	if _, err := client.AppsV1().Deployments(ns).Get(context.Background(), "typo", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("refused deployment was stored: %v", err)
	}
	// kubectl's default is strict as well; warn lets the object through
	// with a warning that names the field.
	if res := runKubectl(t, manifest, "apply", "-f", "-"); res.Code == 0 {
		t.Errorf("kubectl's default validation (strict) accepted an unknown field")
	}
	res = runKubectl(t, manifest, "apply", "--validate=warn", "-f", "-")
	if res.Code != 0 || !strings.Contains(res.Stderr, "imagePullPolice") {
		t.Errorf("apply with warnings: code %d\nstdout: %s\nstderr: %s", res.Code, res.Stdout, res.Stderr)
	}
}

func TestKubectlCreateDryRunServer(t *testing.T) {
	ns := testNamespace(t, "kdry")
	out := mustKubectl(t, "", "-n", ns, "create", "deployment", "web", "--image=busybox:1.36", "--dry-run=server", "-o", "yaml")
	// Server-side defaults show that the object went through the server's
	// create path, not just kubectl's.
	for _, want := range []string{
		"name: web", "namespace: " + ns, "uid:", "creationTimestamp:",
		"progressDeadlineSeconds: 600", "revisionHistoryLimit: 10", "type: RollingUpdate",
		"maxSurge: 25%", "maxUnavailable: 25%", "terminationMessagePath: /dev/termination-log",
		"imagePullPolicy: IfNotPresent", "restartPolicy: Always", "dnsPolicy: ClusterFirst", "schedulerName: default-scheduler",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry-run output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "resourceVersion:") {
		t.Errorf("a dry-run object was never stored and has no resourceVersion:\n%s", out)
	}
	res := runKubectl(t, "", "-n", ns, "get", "deployment", "web")
	if res.Code == 0 || !strings.Contains(res.Stderr, `"web" not found`) {
		t.Errorf("dry run stored the deployment: code %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
}

func TestKubectlGetTables(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t, "ktables")

	t.Run("pods", func(t *testing.T) {
		mustKubectl(t, "", "-n", ns, "run", "p", "--image=busybox", "--restart=Never")
		out := mustKubectl(t, "", "-n", ns, "get", "pods")
		if h := header(out); h != "NAME READY STATUS RESTARTS AGE" {
			t.Errorf("pods header %q", h)
		}
		// Nothing schedules or runs pods yet: the pod stays Pending.
		if row := tableRow(t, out, "p"); len(row) != 5 || row[1] != "0/1" || row[2] != "Pending" || row[3] != "0" {
			t.Errorf("pod row %q", row)
		}
	})

	t.Run("nodes", func(t *testing.T) {
		name := ns + "-node"
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}},
			Status: corev1.NodeStatus{
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
				NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.37.2"},
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}},
			},
		}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
		out := mustKubectl(t, "", "get", "nodes", name)
		if h := header(out); h != "NAME STATUS ROLES AGE VERSION" {
			t.Errorf("nodes header %q", h)
		}
		if row := tableRow(t, out, name); len(row) != 5 || row[1] != "Ready" || row[2] != "control-plane" || row[4] != "v1.37.2" {
			t.Errorf("node row %q", row)
		}
		if row := tableRow(t, mustKubectl(t, "", "get", "nodes", name, "-o", "wide"), name); len(row) < 6 || row[5] != "10.0.0.7" {
			t.Errorf("node wide row %q, want INTERNAL-IP 10.0.0.7", row)
		}
	})

	t.Run("services wide", func(t *testing.T) {
		mustKubectl(t, "", "-n", ns, "create", "service", "clusterip", "web", "--tcp=80:8080")
		// kubectl create service selects app=<name>.
		out := mustKubectl(t, "", "-n", ns, "get", "svc", "-o", "wide")
		if h := header(out); h != "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE SELECTOR" {
			t.Errorf("services wide header %q", h)
		}
		if row := tableRow(t, out, "web"); len(row) != 7 || row[1] != "ClusterIP" || row[4] != "80/TCP" || row[6] != "app=web" {
			t.Errorf("service row %q", row)
		}
	})

	t.Run("events", func(t *testing.T) {
		now := metav1.Now()
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "p.17a2b3c4d5e6f700", Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "p", APIVersion: "v1"},
			Reason:         "Pulling",
			Message:        "Pulling image busybox",
			Type:           corev1.EventTypeNormal,
			Source:         corev1.EventSource{Component: "kubelet"},
			FirstTimestamp: now,
			LastTimestamp:  now,
			Count:          1,
		}
		if _, err := client.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		out := mustKubectl(t, "", "-n", ns, "get", "events")
		if h := header(out); h != "LAST SEEN TYPE REASON OBJECT MESSAGE" {
			t.Errorf("events header %q\n%s", h, out)
		}
		// The scheduler reports FailedScheduling for the pending pod too;
		// the row checked is the kubelet's.
		var f []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			if strings.Contains(line, " Pulling ") {
				f = strings.Fields(line)
			}
		}
		if f == nil {
			t.Fatalf("want a Pulling event row:\n%s", out)
		}
		// LAST SEEN is an age such as 0s or 2s.
		if len(f) < 5 || !strings.HasSuffix(f[0], "s") || f[1] != "Normal" || f[2] != "Pulling" || f[3] != "pod/p" || strings.Join(f[4:], " ") != "Pulling image busybox" {
			t.Errorf("event row %q", f)
		}
	})
}

const deleteManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: NS
data: {a: "1"}
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: NS
stringData: {password: s3cret}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: NS
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: busybox
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: NS
spec:
  selector: {app: web}
  ports: [{port: 80}]
`

func TestKubectlDeleteFile(t *testing.T) {
	ns := testNamespace(t, "kdelf")
	manifest := strings.ReplaceAll(deleteManifest, "NS", ns)
	mustKubectl(t, manifest, "apply", "-f", "-")
	// kube-root-ca.crt is the namespace's, not the manifest's.
	if got := mustKubectl(t, "", "-n", ns, "get", "cm,secret,deploy,svc", "--field-selector", notRootCA, "-o", "name"); got != "configmap/cfg\nsecret/creds\ndeployment.apps/web\nservice/web\n" {
		t.Fatalf("after apply: %q", got)
	}
	out := mustKubectl(t, manifest, "delete", "-f", "-")
	for _, want := range []string{`configmap "cfg" deleted`, `secret "creds" deleted`, `deployment.apps "web" deleted`, `service "web" deleted`} {
		if !strings.Contains(out, want) {
			t.Errorf("delete -f output lacks %q:\n%s", want, out)
		}
	}
	res := runKubectl(t, "", "-n", ns, "get", "cm,secret,deploy,svc", "--field-selector", notRootCA, "-o", "name")
	if res.Code != 0 || res.Stdout != "" {
		t.Errorf("objects left after delete -f: code %d %q %q", res.Code, res.Stdout, res.Stderr)
	}
	// Deleting again reports each object as not found.
	res = runKubectl(t, manifest, "delete", "-f", "-")
	if res.Code == 0 || strings.Count(res.Stderr, "NotFound") != 4 {
		t.Errorf("second delete -f: code %d stderr %q", res.Code, res.Stderr)
	}
}

func TestKubectlWatchOutputsEvents(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := testNamespace(t, "kwev")
	mustKubectl(t, "", "-n", ns, "create", "configmap", "first", "--from-literal=a=1")
	// The field selector keeps kube-root-ca.crt, which arrives whenever the
	// publisher gets to it, out of the events counted below.
	cmd := exec.CommandContext(ctx, os.Args[0], "-n", ns, "get", "cm", "--field-selector", notRootCA, "-w", "--output-watch-events")
	cmd.Env = append(os.Environ(), roleEnv+"=kubectl", "KUBECONFIG="+inst.Kubeconfig, "HOME="+homeDir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got []string
	// expect waits for the line of an event: EVENT NAME DATA AGE.
	expect := func(event, name, data string) {
		t.Helper()
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("kubectl exited; output so far:\n%s", strings.Join(got, "\n"))
				}
				got = append(got, line)
				if f := strings.Fields(line); len(f) == 4 && f[0] == event && f[1] == name && f[2] == data {
					return
				}
			case <-ctx.Done():
				t.Fatalf("no %s %s line; output so far:\n%s", event, name, strings.Join(got, "\n"))
			}
		}
	}
	// The existing object comes first, from the initial list, so the watch
	// is open before anything changes.
	expect("ADDED", "first", "1")
	mustKubectl(t, "", "-n", ns, "create", "configmap", "second", "--from-literal=a=1", "--from-literal=b=2")
	expect("ADDED", "second", "2")
	mustKubectl(t, "", "-n", ns, "patch", "cm", "first", "-p", `{"data":{"c":"3"}}`)
	expect("MODIFIED", "first", "2")
	mustKubectl(t, "", "-n", ns, "delete", "cm", "second")
	expect("DELETED", "second", "2")
	if h := header(got[0]); h != "EVENT NAME DATA AGE" {
		t.Errorf("watch header %q", h)
	}
	if len(got) != 5 {
		t.Errorf("want a header and four events, got:\n%s", strings.Join(got, "\n"))
	}
}
