package integration

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/version"
)

// orcaBinary is the orca program the test runs: $ORCA_BIN when set,
// otherwise built from this tree (a link step when the build cache is
// warm) with the $LDFLAGS the test binary got from make, so that both
// carry the same version.
func orcaBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("ORCA_BIN"); p != "" {
		return p
	}
	out := filepath.Join(t.TempDir(), "orca")
	cmd := exec.Command("go", "build", "-ldflags", os.Getenv("LDFLAGS"), "-o", out, "github.com/orca-project/orca/cmd/orca")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build orca: %v\n%s", err, b)
	}
	return out
}

// TestAgentSimulateProcess runs `orca agent --simulate 3` as its own
// process, as an operator would, without root and without containerd: it
// registers three nodes that say they are simulated, and a pod scheduled
// to one runs there with a simulated container and an address from the
// node's range, and goes when deleted once its grace period has passed.
func TestAgentSimulateProcess(t *testing.T) {
	bin := orcaBinary(t)
	ctx := context.Background()
	run := fmt.Sprintf("simbin%d", time.Now().UnixNano()%100000)
	prefix := run + "-"
	var logs bytes.Buffer
	cmd := exec.Command(bin, "agent", "--simulate", "3", "--simulate-prefix", prefix, "--kubeconfig", inst.Kubeconfig,
		"--node-label", simTaint+"="+run, "--node-taint", simTaint+"="+run+":NoSchedule")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		for i := range 3 {
			name := fmt.Sprintf("%s%d", prefix, i)
			_ = client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
			_ = client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, name, metav1.DeleteOptions{})
		}
		if t.Failed() {
			t.Logf("orca agent --simulate output:\n%s", logs.String())
		}
	}()

	var node *corev1.Node
	eventually(t, time.Minute, func() error {
		select {
		case err := <-exited:
			t.Fatalf("orca agent --simulate exited: %v\n%s", err, logs.String())
		default:
		}
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: simTaint + "=" + run})
		if err != nil {
			return err
		}
		ready := 0
		for i, n := range list.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && n.Spec.PodCIDR != "" {
					ready++
				}
			}
			if n.Name == prefix+"0" {
				node = &list.Items[i]
			}
		}
		if ready != 3 {
			time.Sleep(200 * time.Millisecond)
			return fmt.Errorf("%d of 3 simulated nodes Ready with a podCIDR", ready)
		}
		return nil
	})
	info := node.Status.NodeInfo
	if node.Labels["node.orca.io/simulated"] != "true" || node.Labels[corev1.LabelTopologyZone] == "" || node.Labels[corev1.LabelInstanceTypeStable] == "" {
		t.Errorf("node labels %v", node.Labels)
	}
	if info.ContainerRuntimeVersion != "simulated://orca-"+version.Orca || info.KubeletVersion != version.KubernetesGitVersion() {
		t.Errorf("node runtime %q kubelet %q", info.ContainerRuntimeVersion, info.KubeletVersion)
	}
	// A node's first renewal comes at its slot in the 10 s period, which
	// may be after its status made it Ready.
	eventually(t, 15*time.Second, func() error {
		lease, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil || ptr.Deref(lease.Spec.HolderIdentity, "") != node.Name || ptr.Deref(lease.Spec.LeaseDurationSeconds, 0) != 40 {
			time.Sleep(200 * time.Millisecond)
			return fmt.Errorf("lease of %s: %+v, %v", node.Name, lease, err)
		}
		return nil
	})

	ns := newNamespace(t, client, "simbin")
	defer func() { _ = client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}) }()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{corev1.LabelHostname: node.Name},
			Tolerations:                   []corev1.Toleration{{Key: simTaint, Operator: corev1.TolerationOpExists}},
			TerminationGracePeriodSeconds: ptr.To(int64(2)),
			Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1",
				ReadinessProbe: &corev1.Probe{InitialDelaySeconds: 2, ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}}}},
		},
	}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *corev1.Pod
	eventually(t, time.Minute, func() error {
		p, err := client.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		got = p
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("pod %s, not Ready", p.Status.Phase)
	})
	cs := got.Status.ContainerStatuses[0]
	if got.Status.Phase != corev1.PodRunning || cs.State.Running == nil || !strings.HasPrefix(cs.ContainerID, "simulated://") || !cs.Ready {
		t.Errorf("pod phase %s container %+v", got.Status.Phase, cs)
	}
	if ready, started := condTime(got, corev1.PodReady), got.Status.StartTime.Time; ready.Sub(started) < 2*time.Second {
		t.Errorf("Ready at %v, %v after start: the readiness probe's 2 s initial delay was not kept", ready, ready.Sub(started))
	}
	ip, err := netip.ParseAddr(got.Status.PodIP)
	if err != nil || !netip.MustParsePrefix(node.Spec.PodCIDR).Contains(ip) || got.Status.HostIP != node.Status.Addresses[0].Address {
		t.Errorf("pod IP %q host IP %q; node range %s address %s", got.Status.PodIP, got.Status.HostIP, node.Spec.PodCIDR, node.Status.Addresses[0].Address)
	}

	// Deleted, it stays Terminating for its 2 s grace period, then goes.
	if err := client.CoreV1().Pods(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	eventually(t, 30*time.Second, func() error {
		_, err := client.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("pod still there: %v", err)
	})
	if d := time.Since(deleted); d < time.Second {
		t.Errorf("pod removed %v after deletion, before its grace period", d)
	}

	// SIGTERM stops the simulator cleanly.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("orca agent --simulate: %v", err)
		}
		exited <- err
	case <-time.After(10 * time.Second):
		t.Error("orca agent --simulate still running 10 s after SIGTERM")
	}
}

func condTime(p *corev1.Pod, t corev1.PodConditionType) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
