package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNetworkPolicy is the classic cases of upstream's network policy
// test matrix across three nodes: a server pod on one node with two
// named ports; clients in its namespace and in another, on the other
// two nodes. Each case applies policies and checks every client against
// every target, allowed or not, then removes them.
func TestNetworkPolicy(t *testing.T) {
	nodes := needNodes(t, 3)
	importEcho(t, nodes)
	ctx := context.Background()
	nsA, nsB := namespace(t), namespace(t)+"-b"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsB}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Namespaces().Delete(context.Background(), nsB, metav1.DeleteOptions{}) })
	for ns, team := range map[string]string{nsA: "a", nsB: "b"} {
		kubectlOK(t, "", "label", "namespace", ns, "team="+team)
	}
	eventually(t, 30*time.Second, func() error {
		_, err := client.CoreV1().ServiceAccounts(nsB).Get(ctx, "default", metav1.GetOptions{})
		return err
	})

	// The server: echo on 8080 ("http") and 8081 ("other").
	srv := echoPod(nsA, "srv", nodes[1], "srv")
	second := srv.Spec.Containers[0]
	second.Name, second.Ports, second.ReadinessProbe = "other", []v1.ContainerPort{{Name: "other", ContainerPort: 8081}}, nil
	second.Env = append(second.Env, v1.EnvVar{Name: "PORT", Value: "8081"})
	srv.Spec.Containers = append(srv.Spec.Containers, second)
	createPod(t, srv)
	// A second server outside the egress block of the CIDR case.
	createPod(t, echoPod(nsB, "srv2", nodes[1], "srv2"))
	clients := []struct{ ns, name, node, role string }{
		{nsA, "a-front", nodes[0], "frontend"},
		{nsA, "a-other", nodes[2], "other"},
		{nsB, "b-front", nodes[2], "frontend"},
	}
	for _, c := range clients {
		p := simplePod(c.ns, c.name, "exec sleep 3600")
		p.Spec.NodeName = c.node
		p.Labels = map[string]string{"role": c.role}
		p.Spec.Tolerations = []v1.Toleration{{Key: extraNodeTaint.Key, Operator: v1.TolerationOpExists}}
		createPod(t, p)
	}
	for _, c := range clients {
		waitPod(t, c.ns, c.name, 2*time.Minute, "Running", running)
	}
	srvIP := waitPod(t, nsA, "srv", 2*time.Minute, "Ready", ready).Status.PodIP
	srv2IP := waitPod(t, nsB, "srv2", 2*time.Minute, "Ready", ready).Status.PodIP
	targets := map[string]string{"http": srvIP + ":8080", "other": srvIP + ":8081", "srv2": srv2IP + ":8080"}

	// reach reports whether client can open target within two seconds.
	reach := func(c struct{ ns, name, node, role string }, target string) bool {
		res := runKubectl(t, nil, "", "exec", c.name, "-n", c.ns, "--", "sh", "-c", "timeout 2 wget -qO- http://"+target+"/ >/dev/null")
		return res.Code == 0
	}
	// expect checks the whole matrix, waiting for the nodes to apply the
	// policies: want names the reachable client>target pairs.
	expect := func(t *testing.T, want ...string) {
		t.Helper()
		allowed := map[string]bool{}
		for _, w := range want {
			allowed[w] = true
		}
		eventually(t, 30*time.Second, func() error {
			var wrong []string
			for _, c := range clients {
				for _, name := range []string{"http", "other", "srv2"} {
					pair := c.name + ">" + name
					if got := reach(c, targets[name]); got != allowed[pair] {
						wrong = append(wrong, fmt.Sprintf("%s reachable=%v", pair, got))
					}
				}
			}
			if len(wrong) > 0 {
				return fmt.Errorf("%s", strings.Join(wrong, ", "))
			}
			return nil
		})
	}
	everything := []string{"a-front>http", "a-front>other", "a-front>srv2", "a-other>http", "a-other>other", "a-other>srv2", "b-front>http", "b-front>other", "b-front>srv2"}
	toSrv2 := []string{"a-front>srv2", "a-other>srv2", "b-front>srv2"}
	apply := func(t *testing.T, manifest string) {
		t.Helper()
		kubectlOK(t, manifest, "-n", nsA, "apply", "-f", "-")
		t.Cleanup(func() { kubectlOK(t, "", "-n", nsA, "delete", "networkpolicy", "--all") })
	}

	t.Run("no policy", func(t *testing.T) { expect(t, everything...) })

	t.Run("deny all ingress", func(t *testing.T) {
		apply(t, `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-all}
spec:
  podSelector: {}
  policyTypes: [Ingress]
`)
		expect(t, toSrv2...)
	})

	t.Run("allow from a namespace", func(t *testing.T) {
		apply(t, `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: from-team-b}
spec:
  podSelector: {matchLabels: {app: srv}}
  ingress:
  - from:
    - namespaceSelector: {matchLabels: {team: b}}
`)
		expect(t, append([]string{"b-front>http", "b-front>other"}, toSrv2...)...)
	})

	t.Run("allow from pods with a label", func(t *testing.T) {
		apply(t, `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: from-frontend}
spec:
  podSelector: {matchLabels: {app: srv}}
  ingress:
  - from:
    - podSelector: {matchLabels: {role: frontend}}
`)
		// A pod selector alone means this namespace only.
		expect(t, append([]string{"a-front>http", "a-front>other"}, toSrv2...)...)
	})

	t.Run("named port", func(t *testing.T) {
		apply(t, `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: http-only}
spec:
  podSelector: {matchLabels: {app: srv}}
  ingress:
  - ports:
    - port: http
`)
		expect(t, append([]string{"a-front>http", "a-other>http", "b-front>http"}, toSrv2...)...)
	})

	t.Run("egress to a CIDR only", func(t *testing.T) {
		apply(t, fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: egress-to-srv}
spec:
  podSelector: {matchLabels: {role: frontend}}
  policyTypes: [Egress]
  egress:
  - to:
    - ipBlock: {cidr: %s/32}
`, srvIP))
		// a-front may only reach the server; the others are free.
		expect(t, "a-front>http", "a-front>other", "a-other>http", "a-other>other", "a-other>srv2", "b-front>http", "b-front>other", "b-front>srv2")
	})

	t.Run("policies add up", func(t *testing.T) {
		apply(t, `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: other-port}
spec:
  podSelector: {matchLabels: {app: srv}}
  ingress:
  - ports:
    - {port: 8081, protocol: TCP}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: from-b}
spec:
  podSelector: {matchLabels: {app: srv}}
  ingress:
  - from:
    - namespaceSelector: {matchLabels: {team: b}}
`)
		expect(t, append([]string{"a-front>other", "a-other>other", "b-front>http", "b-front>other"}, toSrv2...)...)
	})

	t.Run("removed", func(t *testing.T) { expect(t, everything...) })
}
