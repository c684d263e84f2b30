package netpol

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"

	"github.com/orca-project/orca/internal/nftplan"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The test cluster: namespaces prod (team=a) and dev (team=b); in prod a
// db pod and a web pod on this node and an api pod on another; in dev a
// client pod on another node.
func cluster() Input {
	return Input{
		Namespaces: map[string]map[string]string{"prod": {"team": "a"}, "dev": {"team": "b"}},
		Pods: []Pod{
			{Namespace: "prod", Name: "db", IP: "10.42.0.5", Labels: map[string]string{"app": "db"}, Local: true,
				Ports: []NamedPort{{Name: "pg", Protocol: v1.ProtocolTCP, Port: 5432}}},
			{Namespace: "prod", Name: "web", IP: "10.42.0.6", Labels: map[string]string{"app": "web"}, Local: true,
				Ports: []NamedPort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 8080}}},
			{Namespace: "prod", Name: "api", IP: "10.42.1.7", Labels: map[string]string{"app": "api"},
				Ports: []NamedPort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 9090}}},
			{Namespace: "dev", Name: "client", IP: "10.42.2.8", Labels: map[string]string{"app": "client"}},
		},
		DNS: []string{"10.43.0.10"},
	}
}

func policy(name string, sel map[string]string, types []networkingv1.PolicyType, mod func(*networkingv1.NetworkPolicySpec)) *networkingv1.NetworkPolicy {
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: sel}, PolicyTypes: types}}
	if mod != nil {
		mod(&np.Spec)
	}
	return np
}

var (
	ingressOnly = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
	egressOnly  = []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
	tcp         = ptr.To(v1.ProtocolTCP)
)

func port(p intstr.IntOrString) networkingv1.NetworkPolicyPort {
	return networkingv1.NetworkPolicyPort{Protocol: tcp, Port: &p}
}

func render(rs *Ruleset) string {
	tx := knftables.NewFake(Family, Table).NewTransaction()
	nftplan.Plan(tx, nil, rs.Ruleset, true, tableComment)
	return tx.String()
}

func TestBuildGolden(t *testing.T) {
	cases := map[string][]*networkingv1.NetworkPolicy{
		"none": nil,
		// An empty selector and no rules: every pod of prod here isolated.
		"deny-all-ingress": {policy("deny", nil, ingressOnly, nil)},
		"allow-from-namespace": {policy("from-b", map[string]string{"app": "db"}, ingressOnly, func(s *networkingv1.NetworkPolicySpec) {
			s.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
				{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}}}}}
		})},
		"allow-from-pods": {policy("from-web", map[string]string{"app": "db"}, ingressOnly, func(s *networkingv1.NetworkPolicySpec) {
			s.Ingress = []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
				Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromInt32(5432))},
			}}
		})},
		// Both selectors in one peer: those pods in those namespaces only.
		"pods-in-namespaces": {policy("both", map[string]string{"app": "db"}, ingressOnly, func(s *networkingv1.NetworkPolicySpec) {
			s.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{
				NamespaceSelector: &metav1.LabelSelector{},
				PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "client"}},
			}}}}
		})},
		"egress-to-cidr": {policy("cidr", map[string]string{"app": "web"}, egressOnly, func(s *networkingv1.NetworkPolicySpec) {
			s.Egress = []networkingv1.NetworkPolicyEgressRule{{
				To:    []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "192.0.2.0/24", Except: []string{"192.0.2.128/25", "192.0.2.7/32"}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: tcp, Port: ptr.To(intstr.FromInt32(30000)), EndPort: ptr.To(int32(32767))}},
			}}
		})},
		// A named port is the destination pod's: the local pod's own for
		// ingress, each peer's for egress.
		"named-ports": {
			policy("named-in", map[string]string{"app": "web"}, ingressOnly, func(s *networkingv1.NetworkPolicySpec) {
				s.Ingress = []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromString("http"))}}}
			}),
			policy("named-out", map[string]string{"app": "web"}, egressOnly, func(s *networkingv1.NetworkPolicySpec) {
				s.Egress = []networkingv1.NetworkPolicyEgressRule{{
					To:    []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}},
					Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromString("http")), port(intstr.FromString("pg"))},
				}}
			}),
		},
		// Two policies selecting one pod: their rules add up.
		"union": {
			policy("a", map[string]string{"app": "db"}, ingressOnly, func(s *networkingv1.NetworkPolicySpec) {
				s.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}}}}}
			}),
			policy("b", nil, ingressOnly, func(s *networkingv1.NetworkPolicySpec) {
				s.Ingress = []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(v1.ProtocolUDP)}}}}
			}),
		},
		// No policyTypes: ingress, and egress for having egress rules.
		"default-types": {policy("both-ways", map[string]string{"app": "db"}, nil, func(s *networkingv1.NetworkPolicySpec) {
			s.Egress = []networkingv1.NetworkPolicyEgressRule{{}}
		})},
		// Selects no pod of this node: nothing.
		"elsewhere": {policy("api-only", map[string]string{"app": "api"}, ingressOnly, nil)},
	}
	for name, pols := range cases {
		t.Run(name, func(t *testing.T) {
			in := cluster()
			in.Policies = pols
			got := render(Build(in))
			path := filepath.Join("testdata", name+".nft")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("rules differ from %s (run with -update to accept):\n%s", path, got)
			}
			nftCheck(t, got)
		})
	}
}

// nftCheck has nft parse the rules without applying them, when the test
// may.
func nftCheck(t *testing.T, rules string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	if _, err := exec.LookPath("nft"); err != nil {
		return
	}
	cmd := exec.Command("nft", "--check", "-f", "-")
	cmd.Stdin = strings.NewReader("add table ip " + Table + "\n" + rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("nft --check: %v\n%s", err, out)
	}
}

func TestBuildCounts(t *testing.T) {
	in := cluster()
	in.Policies = []*networkingv1.NetworkPolicy{
		policy("deny", nil, ingressOnly, nil),
		policy("api-only", map[string]string{"app": "api"}, ingressOnly, nil),
		policy("bad", nil, ingressOnly, func(s *networkingv1.NetworkPolicySpec) {
			s.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}}}}}
		}),
	}
	rs := Build(in)
	if rs.Policies != 2 || rs.Isolated != 2 || len(rs.Problems) != 1 || !strings.Contains(rs.Problems[0], "prod/bad/ingress/0: peer 0: podSelector") {
		t.Errorf("policies %d isolated %d problems %q; want 2, 2 and one about prod/bad", rs.Policies, rs.Isolated, rs.Problems)
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	in := cluster()
	in.Policies = []*networkingv1.NetworkPolicy{policy("a", nil, ingressOnly, nil), policy("b", map[string]string{"app": "db"}, egressOnly, nil)}
	a := render(Build(in))
	slices.Reverse(in.Policies)
	slices.Reverse(in.Pods)
	if b := render(Build(in)); a != b {
		t.Fatalf("the same input in another order gives other rules:\n%s\n%s", a, b)
	}
}

func TestElements(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ips    []string
		blocks [][]string // cidr, except...
		want   []string
	}{
		{"addresses merge into a block", []string{"10.0.0.1", "10.0.0.0", "10.0.0.3", "10.0.0.2"}, nil, []string{"10.0.0.0/30"}},
		{"a range that is not a block", []string{"10.0.0.1", "10.0.0.2"}, nil, []string{"10.0.0.1-10.0.0.2"}},
		{"an address inside a block", []string{"10.1.2.3"}, [][]string{{"10.0.0.0/8"}}, []string{"10.0.0.0/8"}},
		{"except splits a block", nil, [][]string{{"192.0.2.0/24", "192.0.2.64/26"}}, []string{"192.0.2.0/26", "192.0.2.128/25"}},
		{"except of the whole block", nil, [][]string{{"192.0.2.0/24", "192.0.0.0/16"}}, []string{}},
		{"everything", nil, [][]string{{"0.0.0.0/0", "10.0.0.0/8"}}, []string{"0.0.0.0-9.255.255.255", "11.0.0.0-255.255.255.255"}},
		{"IPv6 ignored", []string{"fd00::1"}, nil, []string{}},
	} {
		var a addrs
		for _, ip := range tc.ips {
			a.addIP(ip)
		}
		for _, b := range tc.blocks {
			a.addBlock(b[0], b[1:])
		}
		if got := a.elements(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPodOf(t *testing.T) {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"a": "b"}},
		Spec:   v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Ports: []v1.ContainerPort{{Name: "dns", Protocol: v1.ProtocolUDP, ContainerPort: 53}, {ContainerPort: 80}}}}},
		Status: v1.PodStatus{PodIP: "10.42.0.9", Phase: v1.PodRunning}}
	got, ok := PodOf(p, "n1")
	if !ok || !got.Local || got.IP != "10.42.0.9" || len(got.Ports) != 1 || got.Ports[0] != (NamedPort{"dns", v1.ProtocolUDP, 53}) {
		t.Errorf("PodOf: %+v %v", got, ok)
	}
	for name, mod := range map[string]func(*v1.Pod){
		"host network": func(p *v1.Pod) { p.Spec.HostNetwork = true },
		"no address":   func(p *v1.Pod) { p.Status.PodIP = "" },
		"finished":     func(p *v1.Pod) { p.Status.Phase = v1.PodSucceeded },
	} {
		q := p.DeepCopy()
		mod(q)
		if _, ok := PodOf(q, "n1"); ok {
			t.Errorf("%s: the policies concern it", name)
		}
	}
}
