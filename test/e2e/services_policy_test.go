package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestUDPConntrackFlushed: a client keeps sending datagrams to a UDP
// Service from one socket, as a resolver does; its endpoint is replaced,
// and the datagrams reach the new one within seconds. Without the
// proxy's cleanup, the connection tracker would send them to the dead
// pod's address for as long as the client talks.
func TestUDPConntrackFlushed(t *testing.T) {
	nodes := needNodes(t, 1)
	importEcho(t, nodes)
	ns := namespace(t)
	ctx := context.Background()
	svc, err := client.CoreV1().Services(ns).Create(ctx, &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "dns"},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "udp"},
			Ports: []v1.ServicePort{{Name: "dns", Protocol: v1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	createPod(t, echoPod(ns, "udp-a", nodeName, "udp"))
	createPod(t, echoPod(ns, "client", nodeName, "client"))
	waitPod(t, ns, "udp-a", 2*time.Minute, "Ready", ready)
	waitPod(t, ns, "client", 2*time.Minute, "Ready", ready)
	waitReadyEndpoints(t, ns, "dns", 1)

	// 40 s of datagrams, one every 100 ms.
	out := make(chan string, 1)
	go func() {
		res := runKubectl(t, nil, "", "exec", "client", "-n", ns, "--", "/echo", "udp-client", svc.Spec.ClusterIP+":53", "400")
		out <- res.Stdout + res.Stderr
	}()
	time.Sleep(4 * time.Second)
	zero := int64(0)
	if err := client.CoreV1().Pods(ns).Delete(ctx, "udp-a", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	createPod(t, echoPod(ns, "udp-b", nodeName, "udp"))
	waitPod(t, ns, "udp-b", 2*time.Minute, "Ready", ready)
	readyAt := time.Now()
	answers := strings.Fields(<-out)
	first, last := -1, -1
	for i, a := range answers {
		if a == "udp-a" && first < 0 {
			first = i
		}
		if a == "udp-b" {
			last = i
		}
	}
	if first < 0 || last < 0 {
		t.Fatalf("answers from udp-a first and udp-b at last wanted; got %d answers: %s", len(answers), summarize(answers))
	}
	// The client ran on for long after udp-b was ready: its final second
	// must be udp-b's.
	tail := answers[len(answers)-10:]
	for _, a := range tail {
		if a != "udp-b" {
			t.Fatalf("the client's last datagrams (udp-b ready %v before the end) were not udp-b's: %s", time.Since(readyAt).Round(time.Second), summarize(answers))
		}
	}
}

// summarize compresses runs of one answer: "udp-a x40, - x12, udp-b x30".
func summarize(answers []string) string {
	var parts []string
	for i := 0; i < len(answers); {
		j := i
		for j < len(answers) && answers[j] == answers[i] {
			j++
		}
		parts = append(parts, fmt.Sprintf("%s x%d", answers[i], j-i))
		i = j
	}
	return strings.Join(parts, ", ")
}

// TestLoadBalancerSourceRangesAndLocalPolicy: a LoadBalancer Service with
// externalTrafficPolicy Local answers a machine outside the cluster on
// the address of the node of its pod, the client's own address kept; its
// source ranges let that machine in and keep another out until the
// ranges name it too.
func TestLoadBalancerSourceRangesAndLocalPolicy(t *testing.T) {
	nodes := needNodes(t, 3)
	needOutside(t)
	importEcho(t, nodes)
	ns := namespace(t)
	ctx := context.Background()
	createPod(t, echoPod(ns, "web-0", nodes[1], "lbweb"))
	waitPod(t, ns, "web-0", 2*time.Minute, "Ready", ready)
	_, err := client.CoreV1().Services(ns).Create(ctx, &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "lbweb"},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "lbweb"},
			ExternalTrafficPolicy:    v1.ServiceExternalTrafficPolicyLocal,
			LoadBalancerSourceRanges: []string{outsideIP + "/32"},
			Ports:                    []v1.ServicePort{{Name: "http", Port: 8081, TargetPort: intstr.FromString("http")}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitReadyEndpoints(t, ns, "lbweb", 1)
	ips := nodeIPs(t, nodes)
	podNode := ips[1]
	eventually(t, 30*time.Second, func() error {
		s, err := client.CoreV1().Services(ns).Get(ctx, "lbweb", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, in := range s.Status.LoadBalancer.Ingress {
			if in.IP == podNode {
				return nil
			}
		}
		return fmt.Errorf("load balancer addresses %v lack %s", s.Status.LoadBalancer.Ingress, podNode)
	})

	// From outside (in the ranges): answered by the pod, which sees the
	// client's own address.
	url := "http://" + podNode + ":8081/"
	eventually(t, 30*time.Second, func() error {
		body, err := outsideGet(url, "")
		if err != nil {
			return err
		}
		var a struct{ Pod, Remote string }
		if err := json.Unmarshal([]byte(body), &a); err != nil {
			return fmt.Errorf("%s: %q", url, body)
		}
		if a.Pod != "web-0" || a.Remote != outsideIP {
			return fmt.Errorf("%s answered by %q seeing the client as %q; want web-0 seeing %s", url, a.Pod, a.Remote, outsideIP)
		}
		return nil
	})

	// From the third node's machine (not in the ranges): dropped.
	third := extraNodeByName(nodes[2])
	fromThird := func() error {
		cmd := exec.Command("nsenter", "--net=/run/netns/"+third.netns, "timeout", "3", "busybox", "wget", "-qO-", url)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("from %s: %v: %s", third.ip, err, out)
		}
		return nil
	}
	time.Sleep(time.Second)
	if err := fromThird(); err == nil {
		t.Fatalf("a client outside loadBalancerSourceRanges reached %s", url)
	}
	kubectlOK(t, "", "-n", ns, "patch", "service", "lbweb", "--type=merge", "-p",
		fmt.Sprintf(`{"spec":{"loadBalancerSourceRanges":["%s/32","%s/32"]}}`, outsideIP, third.ip))
	eventually(t, 30*time.Second, fromThird)
}

// extraNodeByName is the extra node of that name.
func extraNodeByName(name string) *extraNode {
	extraMu.Lock()
	defer extraMu.Unlock()
	for _, x := range extraNodes {
		if x.name == name {
			return x
		}
	}
	return nil
}
