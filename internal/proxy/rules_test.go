package proxy

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/knftables"

	"github.com/orca-project/orca/internal/nftplan"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var testCfg = Config{ClusterCIDR: "10.42.0.0/16", ServiceCIDR: "10.43.0.0/16", NodeIP: "192.168.1.5"}

func web(mod func(*ServicePort)) ServicePort {
	s := ServicePort{Namespace: "ns", Name: "web", PortName: "http", Protocol: "tcp", ClusterIP: "10.43.0.10", Port: 80,
		Endpoints: []Endpoint{
			{IP: "10.42.1.2", Port: 8080, Ready: true, Serving: true, Local: true, Near: true},
			{IP: "10.42.2.3", Port: 8080, Ready: true, Serving: true},
			{IP: "10.42.2.4", Port: 8080}, // not ready: never chosen
		}}
	if mod != nil {
		mod(&s)
	}
	return s
}

// render is the transaction that installs rs on an empty table, in nft
// syntax: what the golden files hold.
func render(rs *Ruleset) string {
	tx := knftables.NewFake(Family, Table).NewTransaction()
	Plan(tx, nil, rs, true)
	return tx.String()
}

func TestBuildGolden(t *testing.T) {
	cases := map[string][]ServicePort{
		// Ready endpoints chosen at random; the unready one gets no chain.
		"clusterip": {web(nil)},
		// No endpoints: connections are rejected at once.
		"no-endpoints": {web(func(s *ServicePort) { s.Endpoints = nil })},
		// None ready: serving terminating endpoints take the traffic.
		"terminating": {web(func(s *ServicePort) {
			s.Endpoints = []Endpoint{{IP: "10.42.1.2", Port: 8080, Serving: true, Terminating: true}, {IP: "10.42.2.3", Port: 8080, Terminating: true}}
		})},
		"affinity": {web(func(s *ServicePort) { s.AffinityTimeout = 10800 * time.Second })},
		// NodePort and load-balancer IP with the Cluster policy: masquerade.
		"nodeport-lb": {web(func(s *ServicePort) { s.NodePort = 30080; s.LoadBalancerIPs = []string{"192.0.2.10"} })},
		// Local policy: local endpoints only, source kept, pods and the
		// host short-circuited to all endpoints.
		"external-local": {web(func(s *ServicePort) {
			s.NodePort, s.LoadBalancerIPs, s.ExternalLocal, s.HealthCheckNodePort = 30080, []string{"192.0.2.10"}, true, 31000
		})},
		// Local policy without a local endpoint: external traffic dropped.
		"external-local-none": {web(func(s *ServicePort) {
			s.NodePort, s.ExternalLocal = 30080, true
			s.Endpoints = s.Endpoints[1:]
		})},
		"internal-local": {web(func(s *ServicePort) { s.InternalLocal = true })},
		"internal-local-none": {web(func(s *ServicePort) {
			s.InternalLocal = true
			s.Endpoints = s.Endpoints[1:]
		})},
		"prefer-close": {web(func(s *ServicePort) { s.PreferClose = true })},
		// Source ranges: the load balancer IP only from them, and from
		// itself since they cover the node.
		"source-ranges": {web(func(s *ServicePort) {
			s.NodePort, s.LoadBalancerIPs, s.SourceRanges = 30080, []string{"192.0.2.10"}, []string{"198.51.100.0/24", "192.168.1.0/24"}
		})},
		"udp-two-ports": {
			web(func(s *ServicePort) { s.Name, s.PortName, s.Protocol, s.Port = "dns", "dns", "udp", 53 }),
			web(func(s *ServicePort) { s.Name, s.PortName, s.Port = "dns", "dns-tcp", 53 }),
		},
	}
	for name, svcs := range cases {
		t.Run(name, func(t *testing.T) {
			got := render(Build(testCfg, svcs))
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

// nftCheck has the kernel parse the rules without applying them, when
// the test may.
func nftCheck(t *testing.T, rules string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	if _, err := exec.LookPath("nft"); err != nil {
		return
	}
	// The golden transaction deletes the table first: give it one to
	// delete so that the check passes on a machine without it.
	cmd := exec.Command("nft", "--check", "-f", "-")
	cmd.Stdin = strings.NewReader("add table ip " + Table + "\n" + rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("nft --check: %v\n%s", err, out)
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	svcs := []ServicePort{web(nil), web(func(s *ServicePort) { s.Name = "api"; s.ClusterIP = "10.43.0.11" })}
	a := render(Build(testCfg, svcs))
	svcs[0], svcs[1] = svcs[1], svcs[0]
	if b := render(Build(testCfg, svcs)); a != b {
		t.Fatal("the same services in another order give other rules")
	}
}

func TestCategorize(t *testing.T) {
	ready := func(ip string, local bool) Endpoint {
		return Endpoint{IP: ip, Ready: true, Serving: true, Local: local, Near: local}
	}
	term := func(ip string, local bool) Endpoint {
		return Endpoint{IP: ip, Serving: true, Terminating: true, Local: local, Near: local}
	}
	ips := func(eps []Endpoint) string {
		var s []string
		for _, e := range eps {
			s = append(s, e.IP)
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		name           string
		s              ServicePort
		cluster, local string
	}{
		{"ready only", ServicePort{Endpoints: []Endpoint{ready("a", false), term("b", false), {IP: "c"}}}, "a", ""},
		{"terminating fallback", ServicePort{Endpoints: []Endpoint{term("b", false), {IP: "c", Terminating: true}}}, "b", ""},
		{"local policy", ServicePort{ExternalLocal: true, Endpoints: []Endpoint{ready("a", false), ready("b", true)}}, "a,b", "b"},
		{"local fallback to terminating", ServicePort{InternalLocal: true, Endpoints: []Endpoint{ready("a", false), term("b", true)}}, "a", "b"},
		{"prefer close with a near one", ServicePort{PreferClose: true, Endpoints: []Endpoint{ready("a", false), ready("b", true)}}, "b", ""},
		{"prefer close with none near", ServicePort{PreferClose: true, Endpoints: []Endpoint{ready("a", false), term("b", true)}}, "a", ""},
		{"prefer close by hint", ServicePort{PreferClose: true, Endpoints: []Endpoint{ready("a", false), {IP: "b", Ready: true, Near: true}}}, "b", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, lo := categorize(&c.s)
			if ips(cl) != c.cluster || ips(lo) != c.local {
				t.Errorf("cluster %q local %q, want %q %q", ips(cl), ips(lo), c.cluster, c.local)
			}
		})
	}
}

// TestIncrementalTouchesOnlyChangedService: one endpoint change rewrites
// that service's chains and nothing of the others'.
func TestIncrementalTouchesOnlyChangedService(t *testing.T) {
	fake := knftables.NewFake(Family, Table)
	s := &Syncer{NFT: fake}
	svcs := []ServicePort{web(nil), web(func(s *ServicePort) { s.Name = "api"; s.ClusterIP = "10.43.0.11" })}
	if _, err := s.Sync(context.Background(), Build(testCfg, svcs), false); err != nil {
		t.Fatal(err)
	}
	before := fake.Dump()

	svcs[0].Endpoints = append(svcs[0].Endpoints, Endpoint{IP: "10.42.3.9", Port: 8080, Ready: true, Serving: true})
	next := Build(testCfg, svcs)
	tx := fake.NewTransaction()
	nftplan.Plan(tx, s.s.Applied(), next.Ruleset, false, tableComment)
	ops := tx.String()
	if _, err := s.Sync(context.Background(), next, false); err != nil {
		t.Fatal(err)
	}
	webChain := "service-" + nftplan.HashAndTruncate(svcs[0].chainBase())
	apiChain := "service-" + nftplan.HashAndTruncate(svcs[1].chainBase())
	newEP := "endpoint-" + endpointBase(&svcs[0], svcs[0].Endpoints[3])
	for _, want := range []string{"flush chain ip orca-proxy " + webChain, "add chain ip orca-proxy " + newEP, "10.42.3.9:8080"} {
		if !strings.Contains(ops, want) {
			t.Errorf("transaction lacks %q:\n%s", want, ops)
		}
	}
	if strings.Contains(ops, apiChain) || strings.Contains(ops, "ns/api") {
		t.Errorf("transaction touches the unchanged service:\n%s", ops)
	}
	if n := strings.Count(ops, "\n"); n > 8 {
		t.Errorf("%d operations for one new endpoint:\n%s", n, ops)
	}
	// The table ends as a full install of the new rules would leave it.
	want := knftables.NewFake(Family, Table)
	if _, err := (&Syncer{NFT: want}).Sync(context.Background(), next, false); err != nil {
		t.Fatal(err)
	}
	if got := fake.Dump(); got != want.Dump() {
		t.Errorf("incremental table differs from a full install:\n%s\nwant:\n%s", got, want.Dump())
	}
	if fake.Dump() == before {
		t.Error("table unchanged")
	}

	// Removing the service's endpoints deletes their chains and rejects.
	svcs[0].Endpoints = nil
	if _, err := s.Sync(context.Background(), Build(testCfg, svcs), false); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.ListRules(context.Background(), newEP); err == nil {
		t.Errorf("chain %s survived its endpoint", newEP)
	}
	if e := fake.Table.Maps[noEndpointServices].FindElement("10.43.0.10", "tcp", "80"); e == nil || e.Value[0] != "goto reject-chain" {
		t.Errorf("service without endpoints not rejected: %+v", e)
	}

	// Nothing changed: nothing sent.
	if n, err := s.Sync(context.Background(), Build(testCfg, svcs), false); err != nil || n != 0 {
		t.Errorf("a sync without changes sent %d operations (err %v)", n, err)
	}
}

// TestBuilderMatchesBuild: a Builder reusing parts gives the rules Build
// gives from scratch, through changes, additions and removals.
func TestBuilderMatchesBuild(t *testing.T) {
	b := new(Builder)
	steps := [][]ServicePort{
		{web(nil), web(func(s *ServicePort) { s.Name = "api" })},
		{web(func(s *ServicePort) { s.Endpoints = s.Endpoints[:1] }), web(func(s *ServicePort) { s.Name = "api" })},
		{web(func(s *ServicePort) { s.Name = "api"; s.AffinityTimeout = time.Minute })},
		{web(nil), web(func(s *ServicePort) { s.Name = "api"; s.AffinityTimeout = time.Minute })},
	}
	for i, svcs := range steps {
		if got, want := render(b.Build(testCfg, svcs)), render(Build(testCfg, svcs)); got != want {
			t.Errorf("step %d: builder differs from Build:\n%s\nwant:\n%s", i, got, want)
		}
	}
	if got, want := render(b.Build(Config{ClusterCIDR: "10.99.0.0/16"}, steps[0])), render(Build(Config{ClusterCIDR: "10.99.0.0/16"}, steps[0])); got != want {
		t.Error("builder ignores a configuration change")
	}
}
