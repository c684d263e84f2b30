package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/cri"
	"github.com/orca-project/orca/internal/images"
)

// The test network: a bridge on this machine that the main node (in the
// machine's own network namespace) and the extra nodes (each in a network
// namespace of its own, like separate machines) share.
const (
	testBridge = "orcae2e-br"
	bridgeIP   = "172.31.250.1"
)

// extraNode is a node in its own network namespace, with its own agent
// and containerd.
type extraNode struct {
	name, ip, netns, dir string
	// kubeconfig is the node's credentials, or joinToken the token it
	// joins with (then it has no kubeconfig at all).
	kubeconfig, joinToken string
	// server is the URL it joins at; the test cluster's server when
	// empty.
	server string
	// args are extra `orca agent` node-pressure flags for this node
	// alone (see agent.PressureFlags).
	args []string
	proc *exec.Cmd
}

var (
	extraMu    sync.Mutex
	extraNodes []*extraNode
)

func runCmd(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func makeBridge() error {
	_ = runCmd("ip", "link", "del", testBridge)
	for _, c := range [][]string{
		{"ip", "link", "add", testBridge, "type", "bridge"},
		{"ip", "addr", "add", bridgeIP + "/24", "dev", testBridge},
		{"ip", "link", "set", testBridge, "up"},
		{"sysctl", "-qw", "net.ipv4.ip_forward=1"},
		// The test bridge is the switch between the nodes' machines: the
		// frames it carries must not pass this machine's netfilter, where
		// the main node's service proxy would take the traffic of the
		// others' load balancer addresses. Pod bridges carry their own
		// nf_call_iptables flag.
		{"sh", "-c", "[ -d /proc/sys/net/bridge ] || modprobe br_netfilter"},
		{"sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=0"},
	} {
		if err := runCmd(c...); err != nil {
			return fmt.Errorf("test bridge: %w", err)
		}
	}
	return nil
}

// needNodes makes sure the cluster has n nodes (the main one plus n-1 in
// network namespaces) and returns their names, main node first. The extra
// nodes are tainted with extraNodeTaint: pods reach them by nodeName or by
// tolerating it.
func needNodes(t *testing.T, n int) []string {
	t.Helper()
	needCluster(t)
	extraMu.Lock()
	defer extraMu.Unlock()
	for i := len(extraNodes); i < n-1; i++ {
		x, err := addNode(i + 2)
		if err != nil {
			t.Fatalf("add node: %v", err)
		}
		extraNodes = append(extraNodes, x)
	}
	names := []string{nodeName}
	for _, x := range extraNodes[:n-1] {
		if err := waitReady(x.name, 2*time.Minute); err != nil {
			b, _ := os.ReadFile(filepath.Join(x.dir, "agent.log"))
			t.Fatalf("%v; agent log:\n%s", err, tail(string(b), 40))
		}
		names = append(names, x.name)
	}
	return names
}

// addNode creates node-<i> at 172.31.250.<i> and starts its agent, with
// the admin kubeconfig.
func addNode(i int) (*extraNode, error) { return addNodeJoining(i, "") }

// addNodeJoining is addNode for a node that joins with a token, and has
// no kubeconfig at all, when joinToken is set.
func addNodeJoining(i int, joinToken string) (*extraNode, error) {
	return addNodeWith(i, joinToken, nil)
}

// addNodeWith is addNodeJoining for a node whose agent gets extra
// node-pressure flags.
func addNodeWith(i int, joinToken string, args []string) (*extraNode, error) {
	x := &extraNode{name: fmt.Sprintf("e2e-node-%d", i), ip: fmt.Sprintf("172.31.250.%d", i), netns: fmt.Sprintf("orcae2e-%d", i), joinToken: joinToken, args: args}
	x.dir = filepath.Join(workDir, x.name)
	if err := bridgedNetns(x.netns, fmt.Sprintf("vorcae2e%d", i), x.ip); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(x.dir, 0o755); err != nil {
		return nil, err
	}
	if joinToken == "" {
		if err := x.writeKubeconfig(); err != nil {
			return nil, err
		}
	}
	if err := x.start(); err != nil {
		return nil, err
	}
	if err := waitReady(x.name, 2*time.Minute); err != nil {
		b, _ := os.ReadFile(filepath.Join(x.dir, "agent.log"))
		return nil, fmt.Errorf("%v; agent log:\n%s", err, tail(string(b), 40))
	}
	tar := filepath.Join(workDir, "busybox.tar")
	if _, err := images.Import(context.Background(), images.SocketPath(x.dir), tar); err != nil {
		return nil, fmt.Errorf("import busybox on %s: %w", x.name, err)
	}
	return x, nil
}

// bridgedNetns makes a network namespace, as a machine of its own, with
// an address on the test bridge through the veth pair host/host+"p".
func bridgedNetns(netns, host, ip string) error {
	peer := host + "p"
	_ = runCmd("ip", "netns", "del", netns)
	_ = runCmd("ip", "link", "del", host)
	for _, c := range [][]string{
		{"ip", "netns", "add", netns},
		{"ip", "link", "add", host, "type", "veth", "peer", "name", peer},
		{"ip", "link", "set", host, "master", testBridge, "up"},
		{"ip", "link", "set", peer, "netns", netns},
		{"ip", "-n", netns, "link", "set", peer, "name", "eth0"},
		{"ip", "-n", netns, "addr", "add", ip + "/24", "dev", "eth0"},
		{"ip", "-n", netns, "link", "set", "eth0", "up"},
		{"ip", "-n", netns, "link", "set", "lo", "up"},
		{"ip", "-n", netns, "route", "add", "default", "via", bridgeIP},
	} {
		if err := runCmd(c...); err != nil {
			return err
		}
	}
	return nil
}

// writeKubeconfig gives the node the admin kubeconfig, pointed at the
// API server over the bridge; the serving certificate names localhost,
// so the name is kept for TLS.
func (x *extraNode) writeKubeconfig() error {
	kc, err := clientcmd.LoadFromFile(inst.Kubeconfig)
	if err != nil {
		return err
	}
	port := inst.URL[strings.LastIndex(inst.URL, ":")+1:]
	for _, c := range kc.Clusters {
		c.Server = "https://" + bridgeIP + ":" + port
		c.TLSServerName = "localhost"
	}
	x.kubeconfig = filepath.Join(x.dir, "kubeconfig")
	return clientcmd.WriteToFile(*kc, x.kubeconfig)
}

// start runs the node's agent inside its network namespace.
func (x *extraNode) start() error {
	// nsenter changes only the network namespace: `ip netns exec` would also
	// remount /sys, hiding the cgroup file systems runc needs.
	cmd := exec.Command("nsenter", "--net=/run/netns/"+x.netns, os.Args[0])
	creds := "ORCA_TEST_KUBECONFIG=" + x.kubeconfig
	if x.joinToken != "" {
		creds = "ORCA_TEST_SERVER=https://" + bridgeIP + ":" + inst.URL[strings.LastIndex(inst.URL, ":")+1:]
		if x.server != "" {
			creds = "ORCA_TEST_SERVER=" + x.server
		}
	}
	cmd.Env = append(os.Environ(), roleEnv+"=agent", creds, "ORCA_TEST_JOIN_TOKEN="+x.joinToken,
		"ORCA_TEST_DATA_DIR="+x.dir,
		"ORCA_TEST_PAUSE="+pauseBin, "ORCA_TEST_KUBELET_PORT=10250",
		"ORCA_TEST_NODE_NAME="+x.name, "ORCA_TEST_NODE_IP="+x.ip, "ORCA_TEST_POD_CIDR=", "ORCA_TEST_EXTRA_NODE=true",
		"ORCA_TEST_AGENT_ARGS="+strings.Join(x.args, "\n"))
	logf, err := os.OpenFile(filepath.Join(x.dir, "agent.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start agent of %s: %w", x.name, err)
	}
	x.proc = cmd
	return nil
}

// kill ends the node's agent with SIGKILL; its containerd and containers
// keep running, as on a machine whose agent crashed.
func (x *extraNode) kill() {
	if x.proc == nil {
		return
	}
	_ = x.proc.Process.Kill()
	_ = x.proc.Wait()
	x.proc = nil
}

func waitReady(name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		n, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			for _, c := range n.Status.Conditions {
				if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
					return nil
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("node %s not Ready after %v", name, timeout)
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// remove stops the node's pods, agent and namespace.
func (x *extraNode) remove() {
	if rt, err := cri.Dial(images.SocketPath(x.dir)); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{}); err == nil {
			for _, sb := range sbs.Items {
				_, _ = rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id})
				_, _ = rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id})
			}
		}
		cancel()
		rt.Close()
	}
	if x.proc != nil {
		_ = x.proc.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = x.proc.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = x.proc.Process.Kill()
		}
	}
	killShims(x.dir)
	_ = runCmd("ip", "netns", "del", x.netns)
	i, _ := strconv.Atoi(x.name[strings.LastIndex(x.name, "-")+1:])
	_ = runCmd("ip", "link", "del", fmt.Sprintf("vorcae2e%d", i))
}

// The outside client: a network namespace on the test bridge that is no
// node, so that its traffic to a node's address is what a machine
// outside the cluster sends (the main node, on the machine's own
// network, would route it through its service proxy first).
const (
	outsideNetns = "orcae2e-client"
	outsideIP    = "172.31.250.250"
)

var (
	outsideOnce sync.Once
	outsideErr  error
)

// needOutside makes the outside client's namespace, once per run.
func needOutside(t *testing.T) {
	t.Helper()
	outsideOnce.Do(func() { outsideErr = bridgedNetns(outsideNetns, "vorcae2eclient", outsideIP) })
	if outsideErr != nil {
		t.Fatalf("outside client: %v", outsideErr)
	}
}

// outsideGet fetches url from the outside client with busybox's wget,
// with Host: host when host is set, within three seconds.
func outsideGet(url, host string) (string, error) {
	args := []string{"--net=/run/netns/" + outsideNetns, "timeout", "3", "busybox", "wget", "-qO-"}
	if host != "" {
		args = append(args, "--header", "Host: "+host)
	}
	out, err := exec.Command("nsenter", append(args, url)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s from outside: %v: %s", url, err, out)
	}
	return string(out), nil
}

// removeExtraNodes stops the extra nodes' pods, agents and namespaces.
func removeExtraNodes() {
	extraMu.Lock()
	defer extraMu.Unlock()
	for _, x := range extraNodes {
		x.remove()
	}
	_ = runCmd("ip", "netns", "del", outsideNetns)
	_ = runCmd("ip", "link", "del", "vorcae2eclient")
	extraNodes = nil
}

func TestPodToPodAcrossNodes(t *testing.T) {
	nodes := needNodes(t, 3)
	ns := namespace(t)
	var pods []*v1.Pod
	for i, n := range nodes {
		p := simplePod(ns, fmt.Sprintf("web-%d", i), "echo served by $HOSTNAME > /tmp/index.html; exec httpd -f -p 8080 -h /tmp")
		p.Spec.NodeName = n
		createPod(t, p)
	}
	for i := range nodes {
		pods = append(pods, waitPod(t, ns, fmt.Sprintf("web-%d", i), 2*time.Minute, "Running", running))
	}
	for i, from := range pods {
		to := pods[(i+1)%len(pods)]
		if from.Status.HostIP == to.Status.HostIP {
			t.Fatalf("pods %s and %s on one node", from.Name, to.Name)
		}
		eventually(t, 20*time.Second, func() error {
			res := runKubectl(t, nil, "", "exec", from.Name, "-n", ns, "--", "timeout", "5", "wget", "-qO-", "http://"+to.Status.PodIP+":8080/index.html")
			if res.Code != 0 || res.Stdout != "served by "+to.Name+"\n" {
				return fmt.Errorf("%s (%s) → %s (%s): %q %q", from.Name, from.Spec.NodeName, to.Name, to.Status.PodIP, res.Stdout, res.Stderr)
			}
			return nil
		})
	}
	// Nodes got distinct pod ranges from the cluster.
	seen := map[string]string{}
	for _, n := range nodes {
		node, err := client.CoreV1().Nodes().Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if node.Spec.PodCIDR == "" || seen[node.Spec.PodCIDR] != "" {
			t.Errorf("node %s pod CIDR %q (also %q)", n, node.Spec.PodCIDR, seen[node.Spec.PodCIDR])
		}
		seen[node.Spec.PodCIDR] = n
	}
	// kubectl logs and exec reach a node in its own network namespace.
	if out := kubectlOK(t, "", "exec", pods[2].Name, "-n", ns, "--", "hostname"); out != pods[2].Name+"\n" {
		t.Errorf("exec on %s: %q", nodes[2], out)
	}
}
