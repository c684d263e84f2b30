package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/simnode"
)

// simTaint keeps the other tests' pods off the simulated nodes.
const simTaint = "orca.test/simulated"

// TestSimulatedNodesRunADeployment runs 100 simulated nodes in-process:
// a Deployment of 1,000 pods becomes available on them, each pod with an
// address from its node's podCIDR, and once the simulator stops the node
// lifecycle controller finds its nodes silent.
func TestSimulatedNodesRunADeployment(t *testing.T) {
	const nodes, replicas = 100, 1000
	run := fmt.Sprintf("simit%d", time.Now().UnixNano()%100000)
	prefix := run + "-"
	ctx := context.Background()
	ns := newNamespace(t, client, "simnode")
	opts := simnode.Options{
		Client: client, Nodes: nodes, Prefix: prefix,
		Labels: map[string]string{simTaint: run},
		Taints: []corev1.Taint{{Key: simTaint, Value: run, Effect: corev1.TaintEffectNoSchedule}},
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	sim, err := simnode.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	simCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sim.Run(simCtx) }()
	var simErr error
	stopSim := sync.OnceFunc(func() { stop(); simErr = <-done })
	defer func() {
		stopSim()
		for _, name := range sim.NodeNames() {
			_ = client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
			_ = client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, name, metav1.DeleteOptions{})
		}
		_ = client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	}()

	labels := map[string]string{"app": "sim"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "sim", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{simTaint: run},
					Tolerations:  []corev1.Toleration{{Key: simTaint, Operator: corev1.TolerationOpEqual, Value: run, Effect: corev1.TaintEffectNoSchedule}},
					Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}},
				},
			},
		},
	}
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Minute, func() error {
		d, err := client.AppsV1().Deployments(ns).Get(ctx, "sim", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Status.AvailableReplicas != replicas {
			time.Sleep(time.Second)
			return fmt.Errorf("%d of %d replicas available", d.Status.AvailableReplicas, replicas)
		}
		return nil
	})

	// Every pod runs on a simulated node, with an address of that node's
	// range that no other pod has, and a container no runtime knows.
	cidrs := map[string]netip.Prefix{}
	nodeList, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: simTaint + "=" + run})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodeList.Items) != nodes {
		t.Fatalf("%d simulated nodes registered, want %d", len(nodeList.Items), nodes)
	}
	for _, n := range nodeList.Items {
		cidrs[n.Name] = netip.MustParsePrefix(n.Spec.PodCIDR)
		if n.Labels[simnode.SimulatedLabel] != "true" || !strings.HasPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "simulated://orca-") {
			t.Errorf("node %s: labels %v runtime %q", n.Name, n.Labels, n.Status.NodeInfo.ContainerRuntimeVersion)
		}
	}
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	perNode := map[string]int{}
	for _, p := range pods.Items {
		ip, err := netip.ParseAddr(p.Status.PodIP)
		if err != nil || !cidrs[p.Spec.NodeName].Contains(ip) {
			t.Errorf("pod %s on %s has address %q outside %v", p.Name, p.Spec.NodeName, p.Status.PodIP, cidrs[p.Spec.NodeName])
		}
		if other, ok := seen[p.Status.PodIP]; ok {
			t.Errorf("pods %s and %s share %s", p.Name, other, p.Status.PodIP)
		}
		seen[p.Status.PodIP] = p.Name
		perNode[p.Spec.NodeName]++
		if id := p.Status.ContainerStatuses[0].ContainerID; !strings.HasPrefix(id, "simulated://") {
			t.Errorf("pod %s container ID %q", p.Name, id)
		}
	}
	t.Logf("1,000 pods over %d nodes; %+v", len(perNode), sim.Counts())

	// A restarted simulator adopts its nodes and leaves the running pods'
	// statuses as they are.
	stopSim()
	if simErr != nil {
		t.Fatal(simErr)
	}
	sim, err = simnode.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	simCtx, stop = context.WithCancel(ctx)
	go func() { done <- sim.Run(simCtx) }()
	stopSim = sync.OnceFunc(func() { stop(); simErr = <-done })
	time.Sleep(5 * time.Second)
	if c := sim.Counts(); c.PodStatuses != 0 || c.PodDeletions != 0 {
		t.Errorf("restarted simulator wrote %+v; want no pod writes", c)
	}

	// A stopped simulator is a stopped kubelet: the node lifecycle
	// controller marks its nodes Unknown after its grace period (50 s).
	stopSim()
	if simErr != nil {
		t.Fatal(simErr)
	}
	eventually(t, 2*time.Minute, func() error {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: simTaint + "=" + run})
		if err != nil {
			return err
		}
		for _, n := range list.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status != corev1.ConditionUnknown {
					time.Sleep(time.Second)
					return fmt.Errorf("node %s Ready=%s", n.Name, c.Status)
				}
			}
		}
		return nil
	})
	if _, err := client.CoreV1().Nodes().Get(ctx, prefix+"0", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Fatal("simulated node gone")
	}
}
