package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/controller/nodelifecycle"
	"github.com/orca-project/orca/internal/cri"
	"github.com/orca-project/orca/internal/images"
)

// The e2e server's node lifecycle settings (main_test.go): a node is
// Unknown after this much silence, checked every second.
const testNodeGrace = 20 * time.Second

// benchFailover runs the failover benchmark (make bench-failover) with
// upstream's node lifecycle settings instead of the tests'.
var benchFailover = os.Getenv("ORCA_BENCH_FAILOVER") != ""

func nodeLifecycle() nodelifecycle.Config {
	if benchFailover {
		return nodelifecycle.Config{}
	}
	return nodelifecycle.Config{MonitorPeriod: time.Second, MonitorGracePeriod: testNodeGrace}
}

// TestNodeFailure kills a node's agent, and cuts another node off the
// network: each time the Node goes Unknown and is tainted, the Service
// stops routing to its pod, the Deployment's pod is recreated on the other
// node once its toleration runs out, the DaemonSet's pod stays, and when
// the node comes back the taints go and the deleted pod's containers are
// stopped.
func TestNodeFailure(t *testing.T) {
	if benchFailover {
		t.Skip("timed for the tests' grace period, not upstream's")
	}
	names := needNodes(t, 3)
	for _, tc := range []struct {
		name       string
		fail, heal func(*extraNode)
	}{
		{"agent killed", func(x *extraNode) { x.kill() }, func(x *extraNode) {
			if err := x.start(); err != nil {
				t.Fatal(err)
			}
		}},
		{"network partition", func(x *extraNode) {
			if err := runCmd("ip", "-n", x.netns, "link", "set", "eth0", "down"); err != nil {
				t.Fatal(err)
			}
		}, func(x *extraNode) {
			for _, c := range [][]string{{"ip", "-n", x.netns, "link", "set", "eth0", "up"}, {"ip", "-n", x.netns, "route", "replace", "default", "via", bridgeIP}} {
				if err := runCmd(c...); err != nil {
					t.Fatal(err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { nodeFailure(t, names[1:], tc.fail, tc.heal) })
	}
}

func nodeFailure(t *testing.T, extra []string, fail, heal func(*extraNode)) {
	ctx := context.Background()
	ns := namespace(t)
	labels := map[string]string{"app": "web"}
	tolerate := []v1.Toleration{
		{Key: extraNodeTaint.Key, Operator: v1.TolerationOpExists},
		// Short, so that the test need not wait upstream's 300 s.
		{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](2)},
		{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](2)},
	}
	onExtra := &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: extra}}}},
	}}}
	web := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					Affinity: onExtra, Tolerations: tolerate, TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []v1.Container{{Name: "web", Image: busybox, ImagePullPolicy: v1.PullNever,
						Command: []string{"sh", "-c", "echo ok > /tmp/index.html; exec httpd -f -p 8080 -h /tmp"}}},
				},
			},
		},
	}
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, web, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec: v1.PodSpec{
					Affinity: onExtra, Tolerations: tolerate[:1], TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []v1.Container{{Name: "agent", Image: busybox, ImagePullPolicy: v1.PullNever, Command: []string{"sleep", "3600"}}},
				},
			},
		},
	}
	if _, err := client.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       v1.ServiceSpec{Selector: labels, Ports: []v1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if _, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var old *v1.Pod
	eventually(t, 2*time.Minute, func() error {
		p, err := onlyPod(ctx, ns, "app=web")
		if err != nil {
			return err
		}
		if !ready(p) {
			return fmt.Errorf("pod %s not ready: %s", p.Name, describeStatus(p))
		}
		old = p
		return nil
	})
	victim := nodeByName(t, old.Spec.NodeName)
	var dsPod *v1.Pod
	eventually(t, time.Minute, func() error {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=agent", FieldSelector: "spec.nodeName=" + victim.name})
		if err != nil || len(pods.Items) != 1 || !running(&pods.Items[0]) {
			return fmt.Errorf("daemon pod on %s: %v", victim.name, err)
		}
		dsPod = &pods.Items[0]
		return nil
	})
	eventually(t, 30*time.Second, func() error { return endpointReady(ctx, ns, old.Status.PodIP, true) })

	start := time.Now()
	fail(victim)
	t.Logf("%s failed", victim.name)

	// Unknown after the grace period (checked every second).
	eventually(t, testNodeGrace+30*time.Second, func() error {
		n, err := client.CoreV1().Nodes().Get(ctx, victim.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == v1.NodeReady && c.Status == v1.ConditionUnknown && c.Reason == "NodeStatusUnknown" {
				return nil
			}
		}
		return fmt.Errorf("node %s conditions %v", victim.name, n.Status.Conditions)
	})
	// The grace period runs from the last heartbeat, at most one
	// heartbeat interval (10 s) before the failure.
	unknownAfter := time.Since(start)
	if unknownAfter < testNodeGrace-10*time.Second {
		t.Errorf("node Unknown after %v, before its grace period of %v from its last heartbeat", unknownAfter, testNodeGrace)
	}
	// The Service stops sending traffic to the pod at once.
	eventually(t, 10*time.Second, func() error { return endpointReady(ctx, ns, old.Status.PodIP, false) })
	// Tainted for scheduling and for eviction.
	eventually(t, 20*time.Second, func() error {
		n, err := client.CoreV1().Nodes().Get(ctx, victim.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, t := range n.Spec.Taints {
			have[t.Key+":"+string(t.Effect)] = true
		}
		if !have[v1.TaintNodeUnreachable+":NoExecute"] || !have[v1.TaintNodeUnreachable+":NoSchedule"] {
			return fmt.Errorf("taints %v", n.Spec.Taints)
		}
		return nil
	})
	// The toleration runs out: the pod is evicted and replaced on the
	// other node.
	eventually(t, time.Minute, func() error {
		p, err := client.CoreV1().Pods(ns).Get(ctx, old.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.DeletionTimestamp == nil {
			return fmt.Errorf("pod %s not being deleted", p.Name)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue && c.Reason == "DeletionByTaintManager" {
				return nil
			}
		}
		return fmt.Errorf("pod %s conditions %v", p.Name, p.Status.Conditions)
	})
	eventually(t, 2*time.Minute, func() error {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.UID != old.UID && p.Spec.NodeName != victim.name && ready(&p) {
				return nil
			}
		}
		return fmt.Errorf("no ready replacement yet")
	})
	t.Logf("node %s: Unknown after %v, replacement ready after %v", victim.name, unknownAfter.Round(time.Second), time.Since(start).Round(time.Second))
	// The DaemonSet's pod tolerates the taints and stays.
	if p, err := client.CoreV1().Pods(ns).Get(ctx, dsPod.Name, metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
		t.Errorf("daemon pod on the failed node: %v (deletion %v)", err, p.DeletionTimestamp)
	}

	heal(victim)
	if err := waitReady(victim.name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		n, err := client.CoreV1().Nodes().Get(ctx, victim.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, t := range n.Spec.Taints {
			if t.Key == v1.TaintNodeUnreachable || t.Key == v1.TaintNodeNotReady {
				return fmt.Errorf("taints %v", n.Spec.Taints)
			}
		}
		return nil
	})
	// The returning kubelet stops what was deleted meanwhile and lets the
	// pod go.
	eventually(t, time.Minute, func() error {
		if _, err := client.CoreV1().Pods(ns).Get(ctx, old.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("old pod still there: %v", err)
		}
		if n := runningContainers(t, victim, old.UID); n != 0 {
			return fmt.Errorf("%d containers of the evicted pod still running on %s", n, victim.name)
		}
		return nil
	})
	if n := runningContainers(t, victim, dsPod.UID); n != 1 {
		t.Errorf("daemon pod has %d running containers after the node came back", n)
	}
}

func onlyPod(ctx context.Context, ns, selector string) (*v1.Pod, error) {
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	if len(pods.Items) != 1 {
		return nil, fmt.Errorf("%d pods match %s", len(pods.Items), selector)
	}
	return &pods.Items[0], nil
}

func nodeByName(t *testing.T, name string) *extraNode {
	extraMu.Lock()
	defer extraMu.Unlock()
	for _, x := range extraNodes {
		if x.name == name {
			return x
		}
	}
	t.Fatalf("pod landed on %s, not an extra node", name)
	return nil
}

// endpointReady checks the ready condition of the endpoint with the
// address ip among the namespace's EndpointSlices (absent counts as not
// ready).
func endpointReady(ctx context.Context, ns, ip string, want bool) error {
	slices, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
	if err != nil {
		return err
	}
	got := false
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			for _, a := range e.Addresses {
				if a == ip && e.Conditions.Ready != nil && *e.Conditions.Ready {
					got = true
				}
			}
		}
	}
	if got != want {
		return fmt.Errorf("endpoint %s ready %v, want %v", ip, got, want)
	}
	return nil
}

// runningContainers counts the pod's running containers on the node,
// asking its containerd.
func runningContainers(t *testing.T, x *extraNode, uid types.UID) int {
	rt, err := cri.Dial(images.SocketPath(x.dir))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{"io.kubernetes.pod.uid": string(uid)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return len(resp.Containers)
}

// TestFailoverTimes measures, with upstream's node lifecycle settings,
// how long after a node's agent dies its pod runs Ready elsewhere: with
// tolerationSeconds 0, and with the 300 s the DefaultTolerationSeconds
// admission gives. Run by make bench-failover only.
func TestFailoverTimes(t *testing.T) {
	if !benchFailover {
		t.Skip("a benchmark: make bench-failover")
	}
	extra := needNodes(t, 3)[1:]
	for _, tc := range []struct {
		name    string
		seconds *int64
	}{{"tolerationSeconds 0", ptr.To[int64](0)}, {"upstream defaults", nil}} {
		t.Run(tc.name, func(t *testing.T) { failoverTime(t, extra, tc.name, tc.seconds) })
	}
}

// failoverTime runs one measurement of TestFailoverTimes.
func failoverTime(t *testing.T, extra []string, name string, seconds *int64) {
	ns := namespace(t)
	tol := []v1.Toleration{{Key: extraNodeTaint.Key, Operator: v1.TolerationOpExists}}
	if seconds != nil {
		tol = append(tol, v1.Toleration{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: seconds})
	}
	labels := map[string]string{"app": "bench"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: v1.PodSpec{
				Tolerations: tol, TerminationGracePeriodSeconds: ptr.To[int64](1),
				Affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
					NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: extra}}}},
				}}},
				Containers: []v1.Container{{Name: "c", Image: busybox, ImagePullPolicy: v1.PullNever, Command: []string{"sleep", "3600"}}},
			}}},
	}
	ctx := context.Background()
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var old *v1.Pod
	eventually(t, 2*time.Minute, func() error {
		p, err := onlyPod(ctx, ns, "app=bench")
		if err == nil && !ready(p) {
			err = fmt.Errorf("not ready")
		}
		old = p
		return err
	})
	victim := nodeByName(t, old.Spec.NodeName)
	start := time.Now()
	victim.kill()
	eventually(t, 15*time.Minute, func() error {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=bench"})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.UID != old.UID && ready(&p) {
				return nil
			}
		}
		return fmt.Errorf("no replacement yet")
	})
	t.Logf("%s: agent killed → replacement Ready on another node in %v", name, time.Since(start).Round(time.Second))
	if err := victim.start(); err != nil {
		t.Fatal(err)
	}
	if err := waitReady(victim.name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
}
