package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// These tests follow upstream's node conformance specs closely (their
// pods, commands and the way they read the result), with the project's
// busybox image in place of upstream's test images.

// podOutput runs a pod to completion, as upstream's TestContainerOutput
// does, and returns its container's log read through the API.
func podOutput(t *testing.T, p *v1.Pod) string {
	t.Helper()
	createPod(t, p)
	waitPod(t, p.Namespace, p.Name, time.Minute, "Succeeded", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded })
	b, err := client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &v1.PodLogOptions{Container: p.Spec.Containers[0].Name}).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("logs of %s: %v", p.Name, err)
	}
	return string(b)
}

func TestEnvFromWithKeysThatAreNotShellNames(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := context.Background()
	data := map[string]string{"data-1": "value-1", "data-2": "value-2", "data-3": "value-3"}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: data}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := map[string][]byte{}
	for k, v := range data {
		secret[k] = []byte(v + "\n")
	}
	if _, err := client.CoreV1().Secrets(ns).Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sec"}, Data: secret}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cmRef := &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cm"}}
	secRef := &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "sec"}}
	for _, tc := range []struct {
		name string
		from []v1.EnvFromSource
		want []string
	}{
		{"configmap", []v1.EnvFromSource{{ConfigMapRef: cmRef}, {Prefix: "p-", ConfigMapRef: cmRef}},
			[]string{"data-1=value-1", "data-2=value-2", "data-3=value-3", "p-data-1=value-1", "p-data-2=value-2", "p-data-3=value-3"}},
		{"secret", []v1.EnvFromSource{{SecretRef: secRef}, {Prefix: "p-", SecretRef: secRef}},
			[]string{"data-1=value-1", "data-2=value-2", "data-3=value-3", "p-data-1=value-1", "p-data-2=value-2", "p-data-3=value-3"}},
		{"prefixes", []v1.EnvFromSource{{SecretRef: secRef}, {Prefix: "1-", SecretRef: secRef}, {Prefix: "$_-", SecretRef: secRef}, {Prefix: "a.b:", ConfigMapRef: cmRef}},
			[]string{"1-data-1=value-1", "$_-data-2=value-2", "a.b:data-3=value-3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "env-" + tc.name, Namespace: ns},
				Spec: v1.PodSpec{
					RestartPolicy: v1.RestartPolicyNever,
					Containers: []v1.Container{{
						Name: "env-test", Image: busybox, ImagePullPolicy: v1.PullNever,
						// Upstream's specs run `sh -c env`; the image's shell
						// (Debian's busybox ash) drops variables whose names
						// are not shell names before `env` runs, where
						// upstream's busybox passes them on. The kubelet's
						// part is what reaches the container's process.
						Command: []string{"env"}, EnvFrom: tc.from,
					}},
				},
			}
			out := podOutput(t, p)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// hostsFileIsManaged is upstream's KubeletManagedEtcHosts check: the file
// starts with the kubelet's header and differs from the node's.
func hostsFileIsManaged(t *testing.T, ns, pod, container string) bool {
	t.Helper()
	hosts := kubectlOK(t, "", "exec", pod, "-n", ns, "-c", container, "--", "cat", "/etc/hosts")
	original := kubectlOK(t, "", "exec", pod, "-n", ns, "-c", container, "--", "cat", "/etc/hosts-original")
	if hosts == "" || original == "" {
		t.Fatalf("%s/%s: empty hosts files %q %q", pod, container, hosts, original)
	}
	return strings.HasPrefix(hosts, "# Kubernetes-managed hosts file.") && hosts != original
}

func TestKubeletManagedEtcHosts(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	fileOrCreate := v1.HostPathFileOrCreate
	volumes := []v1.Volume{{Name: "host-etc-hosts", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/etc/hosts", Type: &fileOrCreate}}}}
	original := v1.VolumeMount{Name: "host-etc-hosts", MountPath: "/etc/hosts-original"}
	ctr := func(name string, mounts ...v1.VolumeMount) v1.Container {
		return v1.Container{Name: name, Image: busybox, ImagePullPolicy: v1.PullNever, Command: []string{"sleep", "3600"}, VolumeMounts: mounts}
	}
	grace := int64(0)
	podNet := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "test-pod", Namespace: ns},
		Spec: v1.PodSpec{TerminationGracePeriodSeconds: &grace, Volumes: volumes, Containers: []v1.Container{
			ctr("busybox-1", original), ctr("busybox-2", original),
			ctr("busybox-3", original, v1.VolumeMount{Name: "host-etc-hosts", MountPath: "/etc/hosts"}),
		}},
	}
	hostNet := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "test-host-network-pod", Namespace: ns},
		Spec: v1.PodSpec{HostNetwork: true, TerminationGracePeriodSeconds: &grace, Volumes: volumes, Containers: []v1.Container{
			ctr("busybox-1", original), ctr("busybox-2", original),
		}},
	}
	createPod(t, podNet)
	createPod(t, hostNet)
	waitPod(t, ns, podNet.Name, time.Minute, "Running", running)
	p := waitPod(t, ns, hostNet.Name, time.Minute, "Running", running)
	if p.Status.PodIP != bridgeIP {
		t.Errorf("host-network pod IP %q, want the node's %s", p.Status.PodIP, bridgeIP)
	}
	for _, c := range []string{"busybox-1", "busybox-2"} {
		if !hostsFileIsManaged(t, ns, podNet.Name, c) {
			t.Errorf("%s: /etc/hosts of a pod-network container is not the kubelet's", c)
		}
		if hostsFileIsManaged(t, ns, hostNet.Name, c) {
			t.Errorf("%s: /etc/hosts of a host-network container looks like a pod-network one", c)
		}
	}
	if hostsFileIsManaged(t, ns, podNet.Name, "busybox-3") {
		t.Error("busybox-3 mounts /etc/hosts itself, yet the kubelet's file is there")
	}
	// The host-network pod sees the node's host name and its own header.
	hosts := kubectlOK(t, "", "exec", hostNet.Name, "-n", ns, "-c", "busybox-1", "--", "cat", "/etc/hosts")
	if !strings.HasPrefix(hosts, "# Kubernetes-managed hosts file (host network).\n") {
		t.Errorf("host-network /etc/hosts:\n%s", hosts)
	}
	nodeHost, _ := os.Hostname()
	if got := strings.TrimSpace(kubectlOK(t, "", "exec", hostNet.Name, "-n", ns, "-c", "busybox-1", "--", "hostname")); got != nodeHost {
		t.Errorf("host-network pod's hostname %q, want the node's %q", got, nodeHost)
	}
}

// Upstream's PrivilegedPod spec: a privileged container may change the
// pod's network; one that is not, in the same pod, may not.
func TestPrivilegedPod(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	yes, no := true, false
	grace := int64(0)
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "privileged-pod", Namespace: ns},
		Spec: v1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []v1.Container{
			{Name: "privileged-container", Image: busybox, ImagePullPolicy: v1.PullNever, Command: []string{"/bin/sleep", "10000"}, SecurityContext: &v1.SecurityContext{Privileged: &yes}},
			{Name: "not-privileged-container", Image: busybox, ImagePullPolicy: v1.PullNever, Command: []string{"/bin/sleep", "10000"}, SecurityContext: &v1.SecurityContext{Privileged: &no}},
		}},
	}
	createPod(t, p)
	waitPod(t, ns, p.Name, time.Minute, "Running", running)
	// A bridge rather than upstream's dummy link: not every kernel has
	// the dummy driver. Either lives in the pod's network namespace.
	add := []string{"ip", "link", "add", "orcatest1", "type", "bridge"}
	kubectlOK(t, "", append([]string{"exec", p.Name, "-n", ns, "-c", "privileged-container", "--"}, add...)...)
	kubectlOK(t, "", "exec", p.Name, "-n", ns, "-c", "privileged-container", "--", "ip", "link", "del", "orcatest1")
	res := runKubectl(t, nil, "", append([]string{"exec", p.Name, "-n", ns, "-c", "not-privileged-container", "--"}, add...)...)
	if res.Code == 0 {
		t.Errorf("an unprivileged container added a link: %s", res.Stdout)
	}
}

// Upstream's "Pods should allow activeDeadlineSeconds to be updated": a
// deadline set on a running pod fails it once the pod has been active
// that long.
func TestActiveDeadlineSecondsUpdated(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	p := simplePod(ns, "deadline", "exec sleep 3600")
	createPod(t, p)
	waitPod(t, ns, p.Name, time.Minute, "Running", running)
	five := int64(5)
	eventually(t, 10*time.Second, func() error {
		cur := getPod(t, ns, p.Name)
		cur.Spec.ActiveDeadlineSeconds = &five
		_, err := client.CoreV1().Pods(ns).Update(context.Background(), cur, metav1.UpdateOptions{})
		return err
	})
	got := waitPod(t, ns, p.Name, time.Minute, "Failed with DeadlineExceeded", func(p *v1.Pod) bool {
		return p.Status.Phase == v1.PodFailed && p.Status.Reason == "DeadlineExceeded"
	})
	if got.Status.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("message %q", got.Status.Message)
	}
	if cs := containerStatus(got, "main"); cs == nil || cs.State.Terminated == nil {
		t.Errorf("container not stopped: %s", describeStatus(got))
	}
	eventually(t, 10*time.Second, func() error {
		if evs := events(t, ns, p.Name); !hasEvent(evs, "DeadlineExceeded: Pod was active on the node longer than the specified deadline") {
			return fmt.Errorf("events %v", evs)
		}
		return nil
	})
}

// Upstream's Container Lifecycle Hook specs: a handler pod serves HTTP;
// the pod under test has a sidecar (an init container with restartPolicy
// Always and a startup probe) that relays requests to the handler, so
// that httpGet hooks at the pod's own IP reach the handler, and its main
// container's postStart or preStop hook calls the handler (exec) or the
// sidecar (httpGet). The sidecar must outlive the preStop hook.
func TestLifecycleHooksWithSidecar(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	// The handler answers 200 for the hook paths (one per case, so that
	// each case sees its own request) and logs every request.
	handler := simplePod(ns, "pod-handle-http-request", "mkdir -p /www && touch /www/poststart-exec /www/prestop-exec /www/poststart-http /www/prestop-http && trap 'exit 0' TERM; httpd -f -vv -p 8080 -h /www & wait")
	handler.Spec.Containers[0].Name = "container-handle-http-request"
	createPod(t, handler)
	target := waitPod(t, ns, handler.Name, time.Minute, "Running and Ready", func(p *v1.Pod) bool { return running(p) && ready(p) }).Status.PodIP
	handlerSaw := func(path string) func() error {
		return func() error {
			b, err := client.CoreV1().Pods(ns).GetLogs(handler.Name, &v1.PodLogOptions{}).DoRaw(context.Background())
			if err != nil {
				return err
			}
			if !strings.Contains(string(b), "url:"+path+"\n") {
				return fmt.Errorf("handler has not seen %s:\n%s", path, b)
			}
			return nil
		}
	}
	relay := "mkdir -p /www/cgi-bin && touch /www/startup && " +
		`printf '#!/bin/sh\necho "Content-Type: text/plain"\necho\nwget -q -O- "http://` + target + `:8080/$QUERY_STRING"\n' > /www/cgi-bin/dial && ` +
		"chmod +x /www/cgi-bin/dial && trap 'exit 0' TERM; httpd -f -vv -p 8080 -h /www & wait"
	always := v1.ContainerRestartPolicyAlways
	exec := func(path string) *v1.LifecycleHandler {
		return &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "wget -q -O- http://" + target + ":8080" + path}}}
	}
	httpGet := func(path string) *v1.LifecycleHandler {
		return &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/cgi-bin/dial?" + strings.TrimPrefix(path, "/"), Port: intstr.FromInt32(8080)}}
	}
	for _, tc := range []struct {
		name      string
		lifecycle *v1.Lifecycle
		path      string
	}{
		{"poststart-exec", &v1.Lifecycle{PostStart: exec("/poststart-exec")}, "/poststart-exec"},
		{"prestop-exec", &v1.Lifecycle{PreStop: exec("/prestop-exec")}, "/prestop-exec"},
		{"poststart-http", &v1.Lifecycle{PostStart: httpGet("/poststart-http")}, "/poststart-http"},
		{"prestop-http", &v1.Lifecycle{PreStop: httpGet("/prestop-http")}, "/prestop-http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := simplePod(ns, "pod-with-"+tc.name+"-hook", "trap 'exit 0' TERM; while true; do sleep 1; done")
			p.Spec.Containers[0].Name = "main"
			p.Spec.Containers[0].Lifecycle = tc.lifecycle
			p.Spec.InitContainers = []v1.Container{{
				Name: "container-redirect", Image: busybox, ImagePullPolicy: v1.PullNever, RestartPolicy: &always,
				Command:      []string{"sh", "-c", relay},
				StartupProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/startup", Port: intstr.FromInt32(8080)}}},
			}}
			createPod(t, p)
			got := waitPod(t, ns, p.Name, time.Minute, "Running and Ready", func(p *v1.Pod) bool { return running(p) && ready(p) })
			if s := got.Status.InitContainerStatuses; len(s) != 1 || s[0].State.Running == nil || !s[0].Ready || s[0].Started == nil || !*s[0].Started {
				t.Errorf("sidecar status: %s", describeStatus(got))
			}
			if tc.lifecycle.PostStart != nil {
				eventually(t, 2*time.Minute, handlerSaw(tc.path))
			}
			grace := int64(15)
			if err := client.CoreV1().Pods(ns).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
				t.Fatal(err)
			}
			eventually(t, time.Minute, func() error {
				if _, err := client.CoreV1().Pods(ns).Get(context.Background(), p.Name, metav1.GetOptions{}); err == nil {
					return fmt.Errorf("pod still exists")
				}
				return nil
			})
			if tc.lifecycle.PreStop != nil {
				eventually(t, 30*time.Second, handlerSaw(tc.path))
			}
		})
	}
}

// Upstream's "PreStop should call prestop when killing a pod": the tester
// pod's preStop hook posts to a server pod, whose state the test reads
// through the API server's pods/proxy.
func TestPreStopThroughPodProxy(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	serve := `mkdir -p /www/cgi-bin && cd /www/cgi-bin &&
cat > write <<'END'
#!/bin/sh
printf 'Content-Type: text/plain\n\n'
head -c "$CONTENT_LENGTH" >> /tmp/received; echo >> /tmp/received
END
cat > read <<'END'
#!/bin/sh
printf 'Content-Type: application/json\n\n'
n=$(grep -c prestop /tmp/received 2>/dev/null)
printf '{"Received":{"prestop":%d}}\n' "${n:-0}"
END
chmod +x write read && trap 'exit 0' TERM; httpd -f -p 8080 -h /www & wait`
	server := simplePod(ns, "server", serve)
	server.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 8080}}
	createPod(t, server)
	ip := waitPod(t, ns, "server", time.Minute, "Running", running).Status.PodIP
	tester := simplePod(ns, "tester", "")
	tester.Spec.Containers[0].Command = []string{"sleep", "600"}
	tester.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{
		Command: []string{"wget", "-O-", `--post-data={"Source": "prestop"}`, "http://" + ip + ":8080/cgi-bin/write"},
	}}}
	createPod(t, tester)
	waitPod(t, ns, "tester", time.Minute, "Running", running)
	if err := client.CoreV1().Pods(ns).Delete(context.Background(), "tester", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() error {
		body, err := client.CoreV1().RESTClient().Get().Namespace(ns).Resource("pods").SubResource("proxy").Name("server").Suffix("cgi-bin/read").DoRaw(context.Background())
		if err != nil {
			return err
		}
		var state struct{ Received map[string]int }
		if err := json.Unmarshal(body, &state); err != nil {
			return fmt.Errorf("%q: %v", body, err)
		}
		if state.Received["prestop"] == 0 {
			return fmt.Errorf("the server has not heard from the preStop hook: %s", body)
		}
		return nil
	})
}
