package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const demoManifest = `apiVersion: v1
kind: Namespace
metadata:
  name: kdemo
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: kdemo
  labels: {tier: web}
data:
  greeting: hello
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: kdemo
stringData:
  password: s3cret
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: kdemo
  labels: {tier: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: busybox:1.36
        ports: [{containerPort: 80}]
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: kdemo
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`

func TestKubectlApplyGetAndEdit(t *testing.T) {
	out := mustKubectl(t, demoManifest, "apply", "-f", "-")
	for _, want := range []string{"namespace/kdemo created", "configmap/cfg created", "secret/creds created", "deployment.apps/web created", "service/web created"} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	// A second apply of the same manifest changes nothing.
	out = mustKubectl(t, demoManifest, "apply", "-f", "-")
	if !strings.Contains(out, "deployment.apps/web unchanged") {
		t.Errorf("re-apply should report unchanged:\n%s", out)
	}

	t.Run("get wide", func(t *testing.T) {
		out := mustKubectl(t, "", "-n", "kdemo", "get", "deploy,cm,svc", "-o", "wide")
		for _, want := range []string{"READY", "UP-TO-DATE", "AVAILABLE", "CONTAINERS", "IMAGES", "SELECTOR", "busybox:1.36", "deployment.apps/web", "configmap/cfg", "service/web", "ClusterIP", "80/TCP", "DATA"} {
			if !strings.Contains(out, want) {
				t.Errorf("get -o wide lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("get formats", func(t *testing.T) {
		var cm struct {
			Data     map[string]string `json:"data"`
			Metadata struct {
				UID             string `json:"uid"`
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(mustKubectl(t, "", "-n", "kdemo", "get", "cm", "cfg", "-o", "json")), &cm); err != nil {
			t.Fatal(err)
		}
		if cm.Data["greeting"] != "hello" || cm.Metadata.UID == "" || cm.Metadata.ResourceVersion == "" {
			t.Errorf("unexpected configmap: %+v", cm)
		}
		if out := mustKubectl(t, "", "-n", "kdemo", "get", "cm", "cfg", "-o", "yaml"); !strings.Contains(out, "greeting: hello") {
			t.Errorf("yaml output:\n%s", out)
		}
		if out := mustKubectl(t, "", "-n", "kdemo", "get", "cm,deploy", "-l", "tier=web", "-o", "name"); out != "configmap/cfg\ndeployment.apps/web\n" {
			t.Errorf("-o name with selector: %q", out)
		}
		if out := mustKubectl(t, "", "-n", "kdemo", "get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); out != "busybox:1.36" {
			t.Errorf("jsonpath: %q", out)
		}
		if out := mustKubectl(t, "", "-n", "kdemo", "get", "cm", "-l", "tier in (db)", "-o", "name"); out != "" {
			t.Errorf("set-based selector should match nothing, got %q", out)
		}
		if out := mustKubectl(t, "", "get", "ns", "--field-selector", "metadata.name=kdemo", "-o", "name"); out != "namespace/kdemo\n" {
			t.Errorf("field selector: %q", out)
		}
	})
	t.Run("label annotate scale patch", func(t *testing.T) {
		mustKubectl(t, "", "-n", "kdemo", "label", "cm", "cfg", "color=blue")
		mustKubectl(t, "", "-n", "kdemo", "annotate", "deploy", "web", "owner=team-a")
		mustKubectl(t, "", "-n", "kdemo", "scale", "deploy", "web", "--replicas=5")
		mustKubectl(t, "", "-n", "kdemo", "patch", "deploy", "web", "--type=merge", "-p", `{"spec":{"minReadySeconds":3}}`)
		mustKubectl(t, "", "-n", "kdemo", "patch", "cm", "cfg", "--type=json", "-p", `[{"op":"add","path":"/data/extra","value":"1"}]`)
		mustKubectl(t, "", "-n", "kdemo", "set", "image", "deploy/web", "web=busybox:1.37")
		out := mustKubectl(t, "", "-n", "kdemo", "get", "deploy", "web", "-o", "jsonpath={.spec.replicas} {.metadata.annotations.owner} {.spec.minReadySeconds} {.metadata.generation} {.spec.template.spec.containers[0].image}")
		if out != "5 team-a 3 4 busybox:1.37" {
			t.Errorf("after edits got %q, want %q", out, "5 team-a 3 4 busybox:1.37")
		}
		if out := mustKubectl(t, "", "-n", "kdemo", "get", "cm", "cfg", "-o", "jsonpath={.metadata.labels.color} {.data.extra}"); out != "blue 1" {
			t.Errorf("configmap after label and json patch: %q", out)
		}
	})
	t.Run("edit via EDITOR", func(t *testing.T) {
		script := t.TempDir() + "/editor.sh"
		if err := os.WriteFile(script, []byte("#!/bin/sh\nsed -i 's/greeting: hello/greeting: edited/' \"$1\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("KUBE_EDITOR", script)
		mustKubectl(t, "", "-n", "kdemo", "edit", "cm", "cfg")
		if out := mustKubectl(t, "", "-n", "kdemo", "get", "cm", "cfg", "-o", "jsonpath={.data.greeting}"); out != "edited" {
			t.Errorf("after edit: %q", out)
		}
	})
	t.Run("delete", func(t *testing.T) {
		out := mustKubectl(t, "", "-n", "kdemo", "delete", "secret", "creds")
		if !strings.Contains(out, `secret "creds" deleted`) {
			t.Errorf("delete output: %q", out)
		}
		res := runKubectl(t, "", "-n", "kdemo", "get", "secret", "creds")
		if res.Code == 0 || !strings.Contains(res.Stderr, `secrets "creds" not found`) {
			t.Errorf("get after delete: code %d stderr %q", res.Code, res.Stderr)
		}
	})
}

func TestKubectlGetWatchSeesUpdate(t *testing.T) {
	mustKubectl(t, "", "create", "namespace", "kwatch")
	mustKubectl(t, "", "-n", "kwatch", "create", "configmap", "w", "--from-literal=a=1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-n", "kwatch", "get", "cm", "w", "-w", "-o", "jsonpath={.data.a}{\"\\n\"}")
	cmd.Env = append(os.Environ(), roleEnv+"=kubectl", "KUBECONFIG="+inst.Kubeconfig, "HOME="+homeDir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "1" {
		t.Fatalf("first watch line: %q", lines.Text())
	}
	mustKubectl(t, "", "-n", "kwatch", "patch", "cm", "w", "-p", `{"data":{"a":"2"}}`)
	if !lines.Scan() || lines.Text() != "2" {
		t.Fatalf("watch did not show the update, got %q", lines.Text())
	}
}

func TestKubectlDiscoveryAndVersion(t *testing.T) {
	out := mustKubectl(t, "", "api-resources")
	for _, want := range []string{
		"pods                              po", "deployments", "deploy", "apps/v1", "cronjobs", "cj", "namespaces", "ns",
		"leases", "coordination.k8s.io/v1", "endpointslices", "priorityclasses", "storageclasses", "clusterrolebindings",
	} {
		if !strings.Contains(out, strings.Fields(want)[0]) {
			t.Errorf("api-resources lacks %q", want)
		}
	}
	if !strings.Contains(out, "NAMESPACED") {
		t.Errorf("api-resources header missing:\n%s", out)
	}
	out = mustKubectl(t, "", "api-resources", "--namespaced=false", "-o", "name")
	for _, want := range []string{"namespaces\n", "nodes\n", "persistentvolumes\n", "clusterroles.rbac.authorization.k8s.io\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("cluster-scoped resources lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\npods\n") {
		t.Errorf("pods listed as cluster-scoped")
	}
	out = mustKubectl(t, "", "version")
	if !strings.Contains(out, "Server Version: v1.37") {
		t.Errorf("version: %s", out)
	}
}

func TestKubectlGetAll(t *testing.T) {
	mustKubectl(t, "", "create", "namespace", "kall")
	mustKubectl(t, "", "-n", "kall", "create", "deployment", "d", "--image=busybox")
	mustKubectl(t, "", "-n", "kall", "create", "job", "j", "--image=busybox")
	mustKubectl(t, "", "-n", "kall", "create", "configmap", "not-in-all")
	out := mustKubectl(t, "", "-n", "kall", "get", "all", "-o", "name")
	if !strings.Contains(out, "deployment.apps/d") || !strings.Contains(out, "job.batch/j") {
		t.Errorf("get all lacks workloads:\n%s", out)
	}
	if strings.Contains(out, "configmap") {
		t.Errorf("configmaps are not in category all:\n%s", out)
	}
}
