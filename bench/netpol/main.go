// Command netpol measures how long a node takes to program its network
// policies: 1,000 NetworkPolicies over 5,000 pods (about 110 of them on
// the node), the whole table (the first sync), then after one pod
// elsewhere changed its labels (which moves it in and out of peer sets).
// The rules are applied to a private network namespace; the baseline is
// `nft -f` of the very same transactions in the same run, so the ratio
// shows what Orca adds over the kernel's own cost. It needs root and nft.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/knftables"

	"github.com/orca-project/orca/internal/netpol"
	"github.com/orca-project/orca/internal/nftplan"
)

const childEnv = "ORCA_BENCH_NETPOL_NETNS"

var (
	pods       = flag.Int("pods", 5000, "pods in the cluster")
	policies   = flag.Int("policies", 1000, "network policies")
	namespaces = flag.Int("namespaces", 50, "namespaces the pods and policies are spread over")
	localEvery = flag.Int("local-every", 45, "one pod in this many runs on the measured node")
	rounds     = flag.Int("rounds", 5, "measurements per figure (the median is shown)")
)

func main() {
	flag.Parse()
	if os.Getenv(childEnv) == "" {
		os.Exit(parent())
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-netpol:", err)
		os.Exit(1)
	}
}

// parent runs this program again in a network namespace of its own, which
// goes when the child exits, so the host's tables are never touched.
func parent() int {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "bench-netpol: needs root (it creates a network namespace)")
		return 1
	}
	cmd := exec.Command("unshare", append([]string{"--net", "--", os.Args[0]}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-netpol:", err)
		return 1
	}
	return 0
}

// workload is the cluster: pods with an app label (10 kinds) and a tier,
// named ports, namespaces labelled by team (5 teams), and policies that
// each select one app of a namespace (every pod is selected by the 20
// policies of its namespace) and let in the next app of the next team's
// namespaces (500 pods) on a named port, a quarter with an egress rule
// to a block too.
func workload(changed bool) netpol.Input {
	in := netpol.Input{Namespaces: map[string]map[string]string{}, DNS: []string{"10.43.0.10"}}
	for i := range *namespaces {
		in.Namespaces[fmt.Sprintf("ns-%d", i)] = map[string]string{"team": fmt.Sprintf("team-%d", i%5)}
	}
	for i := range *pods {
		p := netpol.Pod{
			Namespace: fmt.Sprintf("ns-%d", i%*namespaces), Name: fmt.Sprintf("pod-%d", i),
			IP:     fmt.Sprintf("10.42.%d.%d", i/250, i%250+2),
			Labels: map[string]string{"app": fmt.Sprintf("app-%d", i%10), "tier": fmt.Sprintf("tier-%d", i%3)},
			Ports:  []netpol.NamedPort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 8080}, {Name: "metrics", Protocol: v1.ProtocolTCP, Port: 9090}},
			Local:  i%*localEvery == 0,
		}
		in.Pods = append(in.Pods, p)
	}
	if changed {
		// A pod of another node changes app: it leaves some peer sets
		// and joins others.
		p := &in.Pods[1]
		p.Labels = map[string]string{"app": "app-9", "tier": p.Labels["tier"]}
	}
	tcp := v1.ProtocolTCP
	for i := range *policies {
		ns := fmt.Sprintf("ns-%d", i%*namespaces)
		np := &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("policy-%d", i)},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("app-%d", i%10)}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{
					From: []networkingv1.NetworkPolicyPeer{{
						NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": fmt.Sprintf("team-%d", (i+1)%5)}},
						PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("app-%d", (i+1)%10)}},
					}},
					Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: ptrTo(intstr.FromString("http"))}},
				}},
			},
		}
		if i%4 == 0 {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
			np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{
				To:    []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.43.0.0/16"}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: ptrTo(intstr.FromInt32(5432))}},
			}}
		}
		in.Policies = append(in.Policies, np)
	}
	return in
}

func ptrTo[T any](v T) *T { return &v }

func run() error {
	ctx := context.Background()
	nft, err := knftables.New(netpol.Family, netpol.Table)
	if err != nil {
		return err
	}
	before, after := workload(false), workload(true)
	var full, fullRaw, inc, incRaw, build, rebuild []time.Duration
	var fullOps, incOps int
	var rs *netpol.Ruleset
	for range *rounds {
		_ = exec.Command("nft", "delete", "table", "ip", netpol.Table).Run()
		start := time.Now()
		rs = netpol.Build(before)
		build = append(build, time.Since(start))
		s := &nftplan.Syncer{NFT: nft, Comment: "bench"}
		n, err := s.Sync(ctx, rs.Ruleset, false)
		if err != nil {
			return fmt.Errorf("full sync: %w", err)
		}
		full = append(full, time.Since(start))
		fullOps = n

		start = time.Now()
		next := netpol.Build(after)
		rebuild = append(rebuild, time.Since(start))
		n, err = s.Sync(ctx, next.Ruleset, false)
		if err != nil {
			return fmt.Errorf("incremental sync: %w", err)
		}
		inc = append(inc, time.Since(start))
		incOps = n

		_ = exec.Command("nft", "delete", "table", "ip", netpol.Table).Run()
		d, err := nftFile(render(nil, rs.Ruleset))
		if err != nil {
			return err
		}
		fullRaw = append(fullRaw, d)
		d, err = nftFile(render(rs.Ruleset, next.Ruleset))
		if err != nil {
			return err
		}
		incRaw = append(incRaw, d)
	}
	_ = exec.Command("nft", "delete", "table", "ip", netpol.Table).Run()

	local := 0
	for _, p := range before.Pods {
		if p.Local {
			local++
		}
	}
	fmt.Printf("%d policies over %d pods (%d on this node: %d isolated, %d policies selecting them), %d rounds (median)\n\n",
		*policies, *pods, local, rs.Isolated, rs.Policies, *rounds)
	fmt.Println("| figure | Orca | nft -f of the same rules | ratio |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| full sync (%d operations) | %v | %v | %.2f |\n", fullOps, med(full), med(fullRaw), ratio(full, fullRaw))
	fmt.Printf("| one pod's labels changed (%d operations) | %v | %v | %.2f |\n", incOps, med(inc), med(incRaw), ratio(inc, incRaw))
	fmt.Printf("| rule generation alone, whole cluster | %v | | |\n", med(build))
	fmt.Printf("| rule generation alone, after the change | %v | | |\n", med(rebuild))
	return nil
}

// render is the transaction turning prev into next, as nft input.
func render(prev, next *nftplan.Ruleset) string {
	tx := knftables.NewFake(netpol.Family, netpol.Table).NewTransaction()
	nftplan.Plan(tx, prev, next, prev == nil, "bench")
	return tx.String()
}

func nftFile(text string) (time.Duration, error) {
	f, err := os.CreateTemp("", "bench-netpol-*.nft")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	// A fresh transaction deletes the table first: give it one.
	if _, err := f.WriteString("add table ip " + netpol.Table + "\n" + text); err != nil {
		return 0, err
	}
	f.Close()
	start := time.Now()
	out, err := exec.Command("nft", "-f", f.Name()).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("nft -f: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return time.Since(start), nil
}

func med(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2].Round(100 * time.Microsecond)
}

func ratio(a, b []time.Duration) float64 { return float64(med(a)) / float64(med(b)) }
