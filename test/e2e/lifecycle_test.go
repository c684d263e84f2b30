package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodRunsAndBecomesReady(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createPod(t, simplePod(ns, "sleeper", "echo started; exec sleep 3600"))
	p := waitPod(t, ns, "sleeper", time.Minute, "Running and Ready", func(p *v1.Pod) bool { return running(p) && ready(p) })
	if p.Status.PodIP == "" || p.Status.HostIP != bridgeIP || p.Status.StartTime == nil {
		t.Errorf("pod IPs and start time not reported: %s", describeStatus(p))
	}
	cs := containerStatus(p, "main")
	if cs == nil || !strings.HasPrefix(cs.ContainerID, "containerd://") || cs.ImageID == "" || cs.Started == nil || !*cs.Started {
		t.Errorf("container status incomplete: %+v", cs)
	}
	out := kubectlOK(t, "", "get", "pod", "sleeper", "-n", ns)
	if !strings.Contains(out, "1/1") || !strings.Contains(out, "Running") {
		t.Errorf("kubectl get pod:\n%s", out)
	}
	// Events are written asynchronously; they arrive shortly after.
	eventually(t, 10*time.Second, func() error {
		evs := events(t, ns, "sleeper")
		for _, want := range []string{"Pulled: Container image", "Created: Created container: main", "Started: Started container main"} {
			if !hasEvent(evs, want) {
				return fmt.Errorf("missing event %q in %v", want, evs)
			}
		}
		return nil
	})
}

func TestCrashingContainerBacksOff(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createPod(t, simplePod(ns, "crasher", "echo failing; exit 3"))
	p := waitPod(t, ns, "crasher", time.Minute, "restarted twice and in CrashLoopBackOff", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.RestartCount >= 2 && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff"
	})
	cs := containerStatus(p, "main")
	if lt := cs.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 3 || lt.Reason != "Error" {
		t.Errorf("last state %+v", cs.LastTerminationState)
	}
	if !strings.Contains(cs.State.Waiting.Message, "back-off 20s restarting failed container=main") {
		t.Errorf("waiting message %q", cs.State.Waiting.Message)
	}
	out := kubectlOK(t, "", "get", "pod", "crasher", "-n", ns)
	if !strings.Contains(out, "CrashLoopBackOff") {
		t.Errorf("kubectl get pod does not show CrashLoopBackOff:\n%s", out)
	}
	eventually(t, 10*time.Second, func() error {
		if evs := events(t, ns, "crasher"); !hasEvent(evs, "BackOff: Back-off restarting failed container main") {
			return fmt.Errorf("no BackOff event: %v", evs)
		}
		return nil
	})
	// The back-off grows: the third restart comes no sooner than 20 s
	// after the second crash.
	finished := cs.LastTerminationState.Terminated.FinishedAt.Time
	p = waitPod(t, ns, "crasher", time.Minute, "restarted a third time", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.RestartCount >= 3
	})
	started := containerStatus(p, "main").LastTerminationState.Terminated
	if cs3 := containerStatus(p, "main"); cs3.State.Running != nil {
		started = &v1.ContainerStateTerminated{StartedAt: cs3.State.Running.StartedAt}
	}
	if started != nil && started.StartedAt.Time.Sub(finished) < 19*time.Second {
		t.Errorf("third run started %v after the second crash, want at least 20s", started.StartedAt.Time.Sub(finished))
	}
}

func TestRestartPolicyNeverEndsSucceededOrFailed(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ok := simplePod(ns, "ok", "exit 0")
	ok.Spec.RestartPolicy = v1.RestartPolicyNever
	bad := simplePod(ns, "bad", "exit 7")
	bad.Spec.RestartPolicy = v1.RestartPolicyNever
	createPod(t, ok)
	createPod(t, bad)
	waitPod(t, ns, "ok", time.Minute, "Succeeded", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded })
	p := waitPod(t, ns, "bad", time.Minute, "Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	cs := containerStatus(p, "main")
	if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 7 || cs.RestartCount != 0 {
		t.Errorf("container status %+v", cs)
	}
	out := kubectlOK(t, "", "get", "pods", "-n", ns)
	if !strings.Contains(out, "Completed") || !strings.Contains(out, "Error") {
		t.Errorf("kubectl get pods:\n%s", out)
	}
}

func TestInitContainersRunInOrder(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	p := simplePod(ns, "inits", "cat /work/order; exec sleep 3600")
	p.Spec.Volumes = []v1.Volume{{Name: "work", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	mount := []v1.VolumeMount{{Name: "work", MountPath: "/work"}}
	p.Spec.Containers[0].VolumeMounts = mount
	for _, n := range []string{"first", "second"} {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{
			Name: n, Image: busybox, ImagePullPolicy: v1.PullNever, VolumeMounts: mount,
			Command: []string{"sh", "-c", "sleep 1; echo " + n + " >> /work/order"},
		})
	}
	createPod(t, p)
	got := waitPod(t, ns, "inits", time.Minute, "Running", running)
	for _, s := range got.Status.InitContainerStatuses {
		if s.State.Terminated == nil || s.State.Terminated.Reason != "Completed" {
			t.Errorf("init container %s: %+v", s.Name, s.State)
		}
	}
	eventually(t, 20*time.Second, func() error {
		out := runKubectl(t, nil, "", "logs", "inits", "-n", ns)
		if out.Stdout != "first\nsecond\n" {
			return fmt.Errorf("logs %q (stderr %s)", out.Stdout, out.Stderr)
		}
		return nil
	})
}

func TestLivenessProbeRestartsContainer(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	p := simplePod(ns, "live", "touch /tmp/healthy; sleep 2; rm /tmp/healthy; exec sleep 3600")
	p.Spec.Containers[0].LivenessProbe = &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}},
		PeriodSeconds: 1, FailureThreshold: 2,
	}
	createPod(t, p)
	waitPod(t, ns, "live", time.Minute, "restarted by its liveness probe", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.RestartCount >= 1
	})
	eventually(t, 10*time.Second, func() error {
		evs := events(t, ns, "live")
		if !hasEvent(evs, "Unhealthy: Liveness probe failed") || !hasEvent(evs, "Killing: Container main failed liveness probe, will be restarted") {
			return fmt.Errorf("events %v", evs)
		}
		return nil
	})
}

func TestReadinessProbeFlipsReady(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	p := simplePod(ns, "readiness", "exec sleep 3600")
	p.Spec.Containers[0].ReadinessProbe = &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"cat", "/tmp/ready"}}},
		PeriodSeconds: 1,
	}
	createPod(t, p)
	got := waitPod(t, ns, "readiness", time.Minute, "Running", running)
	time.Sleep(2 * time.Second)
	if got = getPod(t, ns, "readiness"); ready(got) {
		t.Fatalf("ready before the probe passes: %s", describeStatus(got))
	}
	kubectlOK(t, "", "exec", "readiness", "-n", ns, "--", "touch", "/tmp/ready")
	waitPod(t, ns, "readiness", 30*time.Second, "Ready", ready)
	kubectlOK(t, "", "exec", "readiness", "-n", ns, "--", "rm", "/tmp/ready")
	waitPod(t, ns, "readiness", 30*time.Second, "not Ready", func(p *v1.Pod) bool { return !ready(p) })
}

func TestGracefulTermination(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	dir := t.TempDir()
	p := simplePod(ns, "graceful", "trap 'echo got TERM > /host/term; exit 0' TERM; while true; do sleep 0.2; done")
	grace := int64(10)
	p.Spec.TerminationGracePeriodSeconds = &grace
	hp := v1.HostPathDirectory
	p.Spec.Volumes = []v1.Volume{{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir, Type: &hp}}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "host", MountPath: "/host"}}
	created := createPod(t, p)
	waitPod(t, ns, "graceful", time.Minute, "Running", running)
	start := time.Now()
	if err := client.CoreV1().Pods(ns).Delete(context.Background(), "graceful", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		_, err := client.CoreV1().Pods(ns).Get(context.Background(), "graceful", metav1.GetOptions{})
		if err == nil {
			return fmt.Errorf("pod still exists")
		}
		return nil
	})
	took := time.Since(start)
	if took > 8*time.Second {
		t.Errorf("deletion took %v: the container should have exited on SIGTERM", took)
	}
	eventually(t, 5*time.Second, func() error {
		b, err := readFile(dir + "/term")
		if err != nil || strings.TrimSpace(b) != "got TERM" {
			return fmt.Errorf("term file %q: %v", b, err)
		}
		return nil
	})
	_ = created
}

func TestOOMKilled(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	p := simplePod(ns, "oom", "sleep 1; dd if=/dev/zero of=/dev/null bs=64M count=1")
	p.Spec.RestartPolicy = v1.RestartPolicyNever
	p.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("16Mi")}
	createPod(t, p)
	got := waitPod(t, ns, "oom", time.Minute, "Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	cs := containerStatus(got, "main")
	if cs.State.Terminated == nil || cs.State.Terminated.Reason != "OOMKilled" || cs.State.Terminated.ExitCode != 137 {
		t.Errorf("want OOMKilled with exit 137, got %+v", cs.State)
	}
}

func TestLifecycleHooks(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	dir := t.TempDir()
	p := simplePod(ns, "hooked", "exec sleep 3600")
	hp := v1.HostPathDirectory
	p.Spec.Volumes = []v1.Volume{{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir, Type: &hp}}}}
	c := &p.Spec.Containers[0]
	c.VolumeMounts = []v1.VolumeMount{{Name: "host", MountPath: "/host"}}
	c.Lifecycle = &v1.Lifecycle{
		PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "echo started > /host/poststart"}}},
		PreStop:   &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "echo stopping > /host/prestop"}}},
	}
	createPod(t, p)
	waitPod(t, ns, "hooked", time.Minute, "Running", running)
	if b, err := readFile(dir + "/poststart"); err != nil || b != "started\n" {
		t.Errorf("postStart hook: %q %v", b, err)
	}
	if err := client.CoreV1().Pods(ns).Delete(context.Background(), "hooked", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		if b, err := readFile(dir + "/prestop"); err != nil || b != "stopping\n" {
			return fmt.Errorf("preStop hook: %q %v", b, err)
		}
		return nil
	})

	// A failing postStart hook kills the container, as upstream.
	bad := simplePod(ns, "badhook", "exec sleep 3600")
	bad.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "exit 1"}}}}
	createPod(t, bad)
	eventually(t, 30*time.Second, func() error {
		if evs := events(t, ns, "badhook"); !hasEvent(evs, "FailedPostStartHook: Exec lifecycle hook ([sh -c exit 1]) for Container \"main\" in Pod \"badhook_"+ns) {
			return fmt.Errorf("events %v", evs)
		}
		return nil
	})
}

func TestSecurityContext(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	p := simplePod(ns, "secure", "id -u; id -g; touch /x 2>/dev/null && echo writable || echo read-only; exec sleep 3600")
	uid, gid, yes := int64(65534), int64(65534), true
	p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{RunAsUser: &uid, RunAsGroup: &gid, ReadOnlyRootFilesystem: &yes}
	createPod(t, p)
	waitPod(t, ns, "secure", time.Minute, "Running", running)
	eventually(t, 10*time.Second, func() error {
		if out := kubectlOK(t, "", "logs", "secure", "-n", ns); out != "65534\n65534\nread-only\n" {
			return fmt.Errorf("logs %q", out)
		}
		return nil
	})
}
