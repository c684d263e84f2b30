package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"math"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	clientv3 "go.etcd.io/etcd/client/v3"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orca-project/orca/internal/auth/bootstrappolicy"
	"github.com/orca-project/orca/internal/auth/bootstraptoken"
	"github.com/orca-project/orca/internal/controller/etcdmember"
	"github.com/orca-project/orca/internal/server"
)

// haServer is an `orca server` (without a node agent) in a network
// namespace of its own, as a machine of its own.
type haServer struct {
	name, ip, netns, dir string
	proc                 *exec.Cmd
	// exited closes when proc has ended.
	exited chan struct{}
	client kubernetes.Interface
}

func (s *haServer) url() string { return "https://" + s.ip + ":6443" }

// start runs the server; join and tokenFile join another server's
// cluster (ignored by a server whose data dir holds its member already).
func (s *haServer) start(join, tokenFile string) error {
	cmd := exec.Command("nsenter", "--net=/run/netns/"+s.netns, os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=server", "ORCA_TEST_DATA_DIR="+s.dir, "ORCA_TEST_NODE_IP="+s.ip,
		"ORCA_TEST_JOIN_SERVER="+join, "ORCA_TEST_JOIN_TOKEN_FILE="+tokenFile)
	logf, err := os.OpenFile(s.dir+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.name, err)
	}
	s.proc, s.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) { _ = cmd.Wait(); close(exited) }(s.exited)
	return nil
}

// kill ends the server with SIGKILL, as a machine that loses power.
func (s *haServer) kill() {
	if s.proc == nil {
		return
	}
	_ = s.proc.Process.Kill()
	<-s.exited
	s.proc = nil
}

// waitReady waits for the server's /readyz and makes its admin client.
func (s *haServer) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if s.client == nil {
			cfg := &rest.Config{Host: s.url(), QPS: 1000, Burst: 1000, Timeout: 15 * time.Second, TLSClientConfig: rest.TLSClientConfig{
				CAFile: filepath.Join(s.dir, "tls", "ca.crt"), CertFile: filepath.Join(s.dir, "tls", "admin.crt"), KeyFile: filepath.Join(s.dir, "tls", "admin.key"),
			}}
			if c, err := kubernetes.NewForConfig(cfg); err == nil {
				if _, err := os.Stat(cfg.KeyFile); err == nil {
					s.client = c
				}
			}
		}
		if s.client != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, last = s.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			cancel()
			if last == nil {
				return nil
			}
		}
		select {
		case <-s.exited:
			deadline = time.Now()
		case <-time.After(200 * time.Millisecond):
		}
	}
	b, _ := os.ReadFile(s.dir + ".log")
	return fmt.Errorf("server %s not ready after %v (%v); log:\n%s", s.name, timeout, last, tail(string(b), 40))
}

func runServerProcess() int {
	token := ""
	if f := os.Getenv("ORCA_TEST_JOIN_TOKEN_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		token = strings.TrimSpace(string(b))
	}
	ctx, stop := signalContext()
	defer stop()
	inst, err := server.Start(ctx, server.Options{
		DataDir: os.Getenv("ORCA_TEST_DATA_DIR"), Port: 6443, AdvertiseAddress: os.Getenv("ORCA_TEST_NODE_IP"),
		EtcdPeerPort: 2380, EtcdClientPort: 2379, ClusterDNSPort: -1, AnonymousAuth: true,
		JoinServer: os.Getenv("ORCA_TEST_JOIN_SERVER"), JoinToken: token,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Out: os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 1
	}
	if err := inst.Wait(); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 1
	}
	return 0
}

// TestHAServers builds a control plane of three servers joined with the
// server token, each in its own network namespace, and kills the etcd
// leader's server under a continuous load of reads and writes: writes
// resume within seconds, every acknowledged write is there afterwards,
// a watch sees every one of them once, and the history of reads and
// writes through the API is linearizable (checked with porcupine, as
// etcd's robustness tests do). With a second server gone the last one
// refuses writes with an error instead of hanging, and the cluster heals
// when both come back.
func TestHAServers(t *testing.T) {
	servers, tokenFile, nodeToken, etcd := startHACluster(t)
	leader := leaderOf(t, etcd, servers)
	var survivors []*haServer
	for _, s := range servers {
		if s != leader {
			survivors = append(survivors, s)
		}
	}
	t.Logf("etcd leader: %s; load through %s and %s", leader.name, survivors[0].name, survivors[1].name)

	// An agent joined at the leader's server with the node token: it
	// reaches every server through its load balancer.
	agent := &extraNode{name: "e2e-node-24", ip: "172.31.250.24", netns: "orcae2e-24", joinToken: strings.TrimSpace(string(nodeToken)), server: leader.url()}
	agent.dir = filepath.Join(workDir, agent.name)
	if err := bridgedNetns(agent.netns, "vorcae2e24", agent.ip); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(agent.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(agent.dir, "agent.log"))
			t.Logf("agent log:\n%s", tail(string(b), 30))
		}
		agent.remove()
	})
	if err := agent.start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, func() error { return nodeReady(survivors[0].client, agent.name) })

	ns := fmt.Sprintf("ha-%d", time.Now().UnixNano()%100000)
	a := survivors[0].client
	if _, err := a.CoreV1().Namespaces().Create(context.Background(), &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	load := newHALoad(ns, survivors)
	if err := load.prepare(); err != nil {
		t.Fatal(err)
	}
	startRV, err := a.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	watchCtx, stopWatch := context.WithCancel(context.Background())
	watched := make(chan watchResult, 1)
	go func() { watched <- watchAcks(watchCtx, survivors[1].client, ns, startRV.ResourceVersion) }()
	loadCtx, stopLoad := context.WithCancel(context.Background())
	done := load.run(loadCtx)

	time.Sleep(3 * time.Second)
	killAt, killWall := load.now(), time.Now()
	leader.kill()
	t.Logf("killed %s (the etcd leader)", leader.name)
	time.Sleep(10 * time.Second)
	stopLoad()
	<-done

	// The agent, which joined at the dead server, renews its lease
	// through another.
	eventually(t, 45*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l, err := survivors[0].client.CoordinationV1().Leases("kube-node-lease").Get(ctx, agent.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l.Spec.RenewTime == nil || !l.Spec.RenewTime.After(killWall.Add(3*time.Second)) {
			return fmt.Errorf("node lease of %s last renewed %v, the server it joined at died %v", agent.name, l.Spec.RenewTime, killWall)
		}
		return nil
	})

	resumed, ok := load.resumedAfter(killAt)
	if !ok {
		t.Fatalf("no write succeeded after the leader's server died")
	}
	t.Logf("writes resumed %v after the leader's server was killed; %d acknowledged creates, %d operations in the history", resumed.Round(time.Millisecond), len(load.acked), len(load.history))
	if resumed > 5*time.Second {
		t.Errorf("writes resumed only %v after the leader died", resumed)
	}

	// A second server gone, the last one has no quorum: a write fails
	// with an error rather than hanging.
	survivors[1].kill()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	_, err = a.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "no-quorum"}}, metav1.CreateOptions{})
	cancel()
	switch {
	case err == nil:
		t.Errorf("a write without quorum succeeded")
	case time.Since(start) > 45*time.Second:
		t.Errorf("a write without quorum took %v to fail: %v", time.Since(start), err)
	case !apierrors.IsTimeout(err) && !apierrors.IsServerTimeout(err) && !(statusCode(err) == http.StatusInternalServerError && strings.Contains(err.Error(), "etcdserver:")):
		t.Errorf("a write without quorum failed with %v, want a timeout or etcd's error from the server", err)
	default:
		t.Logf("without quorum, a write failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}

	// Both back: the cluster heals.
	for _, s := range []*haServer{leader, survivors[1]} {
		if err := s.start("", ""); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 2*time.Minute, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := a.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "healed", Labels: map[string]string{"ha": "ack"}}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	for _, s := range []*haServer{leader, survivors[1]} {
		if err := s.waitReady(time.Minute); err != nil {
			t.Fatal(err)
		}
	}

	// Every acknowledged create is there, read through a restarted
	// server.
	list, err := leader.client.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "ha=ack"})
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, cm := range list.Items {
		present[cm.Name] = true
	}
	var lost []string
	for _, name := range load.acked {
		if !present[name] {
			lost = append(lost, name)
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d acknowledged writes lost: %v", len(lost), lost)
	}

	// The watch saw each acknowledged create once, in order.
	eventually(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := survivors[0].client.CoreV1().ConfigMaps(ns).Get(ctx, "healed", metav1.GetOptions{})
		return err
	})
	time.Sleep(2 * time.Second)
	stopWatch()
	w := <-watched
	if w.err != nil {
		t.Errorf("watch: %v", w.err)
	}
	for _, name := range load.acked {
		if w.seen[name] != 1 {
			t.Errorf("the watch saw %s %d times, want once", name, w.seen[name])
		}
	}
	t.Logf("the watch restarted %d times and saw %d creates", w.restarts, len(w.seen))

	// orca server status: three members answer, one leads.
	st, err := server.Status(context.Background(), servers[0].dir, "")
	if err != nil {
		t.Fatal(err)
	}
	leaders := 0
	for _, m := range st.Members {
		if m.Leader {
			leaders++
		}
		if m.Err != "" {
			t.Errorf("status: member %s: %s", m.Name, m.Err)
		}
	}
	if len(st.Members) != 3 || leaders != 1 || !st.Healthy() {
		t.Errorf("status: %d members, %d leaders, healthy %v", len(st.Members), leaders, st.Healthy())
	}

	// orca server --remove takes a stopped server's member out; the
	// server then rejoins with the token.
	victim := servers[2]
	victim.kill()
	var out strings.Builder
	if err := server.RemoveMember(context.Background(), server.Options{DataDir: victim.dir, Out: &out}); err != nil {
		t.Fatalf("remove %s: %v", victim.name, err)
	}
	if !strings.Contains(out.String(), "removed etcd member") {
		t.Errorf("remove said: %s", out.String())
	}
	if st, err := server.Status(context.Background(), servers[0].dir, ""); err != nil || len(st.Members) != 2 || !st.Healthy() {
		t.Errorf("after removing %s: %+v, %v", victim.name, st, err)
	}
	if err := victim.start(servers[0].url(), tokenFile); err != nil {
		t.Fatal(err)
	}
	if err := victim.waitReady(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() error {
		st, err := server.Status(context.Background(), servers[0].dir, "")
		if err != nil {
			return err
		}
		if len(st.Members) != 3 || !st.Healthy() {
			return fmt.Errorf("%d members after the rejoin", len(st.Members))
		}
		for _, m := range st.Members {
			if m.Learner || m.Err != "" {
				return fmt.Errorf("member %s: learner %v, %s", m.Name, m.Learner, m.Err)
			}
		}
		return nil
	})

	// Deleting a server's Node removes its member, as k3s does: the
	// Node carries the member's name and a finalizer (a server with an
	// agent marks its own; these servers have none, so the test does).
	nameOf, err := os.ReadFile(filepath.Join(victim.dir, "etcd", "name"))
	if err != nil {
		t.Fatal(err)
	}
	victimMember := strings.TrimSpace(string(nameOf))
	c := servers[0].client
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "e2e-ha-" + victim.name,
		Annotations: map[string]string{etcdmember.NameAnnotation: victimMember}, Finalizers: []string{etcdmember.Finalizer}}}
	if _, err := c.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() error {
		if _, err := c.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("node %s still there (%v)", n.Name, err)
		}
		st, err := server.Status(context.Background(), servers[0].dir, "")
		if err != nil {
			return err
		}
		for _, m := range st.Members {
			if m.Name == victimMember {
				return fmt.Errorf("member %s still in the cluster", victimMember)
			}
		}
		return nil
	})

	// The history of reads and writes is linearizable.
	res, info := porcupine.CheckOperationsVerbose(registerModel, load.history, 2*time.Minute)
	switch res {
	case porcupine.Ok:
	case porcupine.Illegal:
		path := filepath.Join(workDir, "ha-history.html")
		if f, err := os.Create(path); err == nil {
			_ = porcupine.Visualize(registerModel, info, f)
			f.Close()
		}
		t.Errorf("the history of %d operations is not linearizable (visualization in %s)", len(load.history), path)
	default:
		t.Errorf("linearizability check of %d operations did not finish", len(load.history))
	}
}

// startHACluster starts three servers, each in a network namespace of
// its own, the second and third joined with the first's server token,
// and waits for three voting etcd members. It returns the server token
// file, the node join token and a client of the etcd members.
func startHACluster(t *testing.T) (servers []*haServer, tokenFile string, nodeToken []byte, etcd *clientv3.Client) {
	needCluster(t)
	servers = make([]*haServer, 3)
	for i := range servers {
		s := &haServer{name: fmt.Sprintf("server-%d", i+1), ip: fmt.Sprintf("172.31.250.%d", 21+i), netns: fmt.Sprintf("orcae2e-s%d", i+1)}
		s.dir = filepath.Join(workDir, "ha", s.name)
		if err := os.MkdirAll(filepath.Dir(s.dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := bridgedNetns(s.netns, fmt.Sprintf("vorcae2es%d", i+1), s.ip); err != nil {
			t.Fatal(err)
		}
		servers[i] = s
	}
	t.Cleanup(func() {
		for _, s := range servers {
			s.kill()
			if t.Failed() {
				b, _ := os.ReadFile(s.dir + ".log")
				t.Logf("log of %s:\n%s", s.name, tail(string(b), 30))
			}
			_ = runCmd("ip", "netns", "del", s.netns)
		}
	})

	// The first server, then two joined with its server token, the
	// third through the second.
	if err := servers[0].start("", ""); err != nil {
		t.Fatal(err)
	}
	if err := servers[0].waitReady(time.Minute); err != nil {
		t.Fatal(err)
	}
	tokenFile = filepath.Join(servers[0].dir, server.ServerTokenFile)
	// The tokens are written once the server has started its
	// components, a moment after it reports ready.
	eventually(t, 30*time.Second, func() error {
		if _, err := os.Stat(tokenFile); err != nil {
			return err
		}
		var err error
		nodeToken, err = os.ReadFile(filepath.Join(servers[0].dir, server.TokenFile))
		return err
	})
	// The node join token does not open the cluster's keys.
	if code := bootstrapStatus(t, servers[0], strings.TrimSpace(string(nodeToken))); code != http.StatusForbidden {
		t.Errorf("server bootstrap with the node join token: HTTP %d, want 403", code)
	}
	for i, join := range []*haServer{servers[0], servers[1]} {
		if err := servers[i+1].start(join.url(), tokenFile); err != nil {
			t.Fatal(err)
		}
		if err := servers[i+1].waitReady(2 * time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	etcd = etcdClientOf(t, servers)
	eventually(t, time.Minute, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := etcd.MemberList(ctx)
		if err != nil {
			return err
		}
		voters := 0
		for _, m := range resp.Members {
			if m.Name != "" && !m.IsLearner {
				voters++
			}
		}
		if voters != 3 {
			return fmt.Errorf("%d voting members of %d", voters, len(resp.Members))
		}
		return nil
	})
	// Every server is an endpoint of the kubernetes Service.
	eventually(t, time.Minute, func() error {
		return kubernetesEndpoints(servers[2].client, servers)
	})

	return servers, tokenFile, nodeToken, etcd
}

func statusCode(err error) int32 {
	if s, ok := err.(apierrors.APIStatus); ok {
		return s.Status().Code
	}
	return 0
}

func nodeReady(c kubernetes.Interface, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == v1.NodeReady && cond.Status == v1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("node %s not Ready", name)
}

// bootstrapStatus asks the server for the cluster's keys with a join
// token and returns the HTTP status.
func bootstrapStatus(t *testing.T, s *haServer, joinToken string) int {
	t.Helper()
	_, token, err := bootstraptoken.ParseJoinToken(joinToken)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(s.dir, "tls", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	req, _ := http.NewRequest(http.MethodGet, s.url()+bootstrappolicy.ServerBootstrapPath, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// etcdClientOf is a client of the servers' etcd members, with the first
// server's etcd certificate.
func etcdClientOf(t *testing.T, servers []*haServer) *clientv3.Client {
	t.Helper()
	var eps []string
	for _, s := range servers {
		eps = append(eps, "https://"+s.ip+":2379")
	}
	return etcdClientAt(t, filepath.Join(servers[0].dir, "tls"), eps)
}

// etcdClientAt is a client of the etcd members at eps, with the
// certificate in tlsDir.
func etcdClientAt(t *testing.T, tlsDir string, eps []string) *clientv3.Client {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(tlsDir, "etcd-peer.crt"), filepath.Join(tlsDir, "etcd-peer.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(tlsDir, "etcd-ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second,
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// leaderOf is the server whose etcd member leads.
func leaderOf(t *testing.T, c *clientv3.Client, servers []*haServer) *haServer {
	t.Helper()
	for _, s := range servers {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := c.Status(ctx, "https://"+s.ip+":2379")
		cancel()
		if err != nil {
			t.Fatalf("etcd status of %s: %v", s.name, err)
		}
		if st.Header.MemberId == st.Leader {
			return s
		}
	}
	t.Fatal("no etcd member leads")
	return nil
}

// kubernetesEndpoints checks that the kubernetes Service names every
// server.
func kubernetesEndpoints(c kubernetes.Interface, servers []*haServer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ep, err := c.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return err
	}
	var got []string
	for _, ss := range ep.Subsets {
		for _, a := range ss.Addresses {
			got = append(got, a.IP)
		}
	}
	for _, s := range servers {
		if !slices.Contains(got, s.ip) {
			return fmt.Errorf("kubernetes endpoints %v lack %s", got, s.ip)
		}
	}
	return nil
}

// haLoad is the workload of the failover test: clients that put and get
// a few ConfigMaps (the registers of the linearizability check) and a
// writer that creates ConfigMaps and records the ones acknowledged.
type haLoad struct {
	ns      string
	clients []kubernetes.Interface
	t0      time.Time

	mu      sync.Mutex
	history []porcupine.Operation
	acked   []string
	// ackTimes are the call and return times of acknowledged creates.
	ackTimes [][2]int64
}

const haKeys = 3

// haOpTimeout is how long a client of the load waits for an answer
// before it gives up and goes on with its next operation, as a client
// with a deadline does. A write in flight when the leader dies waits for
// etcd's request timeout (7 s) otherwise, and would hide how soon new
// writes succeed; given up on, it counts as possibly applied.
const haOpTimeout = 2 * time.Second

func newHALoad(ns string, servers []*haServer) *haLoad {
	l := &haLoad{ns: ns, t0: time.Now()}
	for _, s := range servers {
		l.clients = append(l.clients, s.client)
	}
	return l
}

func (l *haLoad) now() int64 { return time.Since(l.t0).Nanoseconds() }

func (l *haLoad) prepare() error {
	for k := range haKeys {
		cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("reg-%d", k)}, Data: map[string]string{"v": ""}}
		if _, err := l.clients[0].CoreV1().ConfigMaps(l.ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

type regInput struct {
	key   int
	put   bool
	value string
}

type regOutput struct {
	value string
	// unknown: the put failed or timed out; it may have happened.
	unknown bool
}

// registerModel is a register per ConfigMap: a get returns the last put.
var registerModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(regInput).key
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range byKey {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		in, out := input.(regInput), output.(regOutput)
		if in.put {
			return true, in.value
		}
		return out.value == state.(string), state
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(regInput), output.(regOutput)
		if in.put {
			return fmt.Sprintf("put(reg-%d, %q) unknown=%v", in.key, in.value, out.unknown)
		}
		return fmt.Sprintf("get(reg-%d) -> %q", in.key, out.value)
	},
}

// run starts the clients and the writer; the returned channel closes
// when they have stopped after ctx ends.
func (l *haLoad) run(ctx context.Context) <-chan struct{} {
	var wg sync.WaitGroup
	for id := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := l.clients[id%len(l.clients)]
			rnd := rand.New(rand.NewSource(int64(id)))
			for seq := 0; ctx.Err() == nil; seq++ {
				in := regInput{key: rnd.Intn(haKeys), put: rnd.Intn(2) == 0}
				name := fmt.Sprintf("reg-%d", in.key)
				call := l.now()
				opCtx, cancel := context.WithTimeout(context.Background(), haOpTimeout)
				var out regOutput
				var err error
				if in.put {
					in.value = fmt.Sprintf("%d-%d", id, seq)
					_, err = c.CoreV1().ConfigMaps(l.ns).Patch(opCtx, name, types.MergePatchType, []byte(`{"data":{"v":"`+in.value+`"}}`), metav1.PatchOptions{})
				} else {
					var cm *v1.ConfigMap
					if cm, err = c.CoreV1().ConfigMaps(l.ns).Get(opCtx, name, metav1.GetOptions{}); err == nil {
						out.value = cm.Data["v"]
					}
				}
				cancel()
				ret := l.now()
				switch {
				case err == nil:
				case in.put:
					// It may take effect at any time from its call on.
					out.unknown, ret = true, math.MaxInt64
				default:
					// A failed read says nothing.
					continue
				}
				l.mu.Lock()
				l.history = append(l.history, porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret})
				l.mu.Unlock()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		// A create starts every 20 ms whether the earlier ones have
		// answered or not, so that the first write to succeed after a
		// failure is seen to the tick, not after an earlier write's
		// timeout.
		c := l.clients[0]
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		inFlight := make(chan struct{}, 100)
		var writes sync.WaitGroup
		defer writes.Wait()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			select {
			case inFlight <- struct{}{}:
			default:
				continue
			}
			writes.Add(1)
			go func(name string) {
				defer func() { <-inFlight; writes.Done() }()
				call := l.now()
				opCtx, cancel := context.WithTimeout(context.Background(), haOpTimeout)
				defer cancel()
				_, err := c.CoreV1().ConfigMaps(l.ns).Create(opCtx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"ha": "ack"}}}, metav1.CreateOptions{})
				if err == nil {
					l.mu.Lock()
					l.acked = append(l.acked, name)
					l.ackTimes = append(l.ackTimes, [2]int64{call, l.now()})
					l.mu.Unlock()
				}
			}(fmt.Sprintf("ack-%d", i))
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

// resumedAfter is how long after at the first write called after it was
// acknowledged.
func (l *haLoad) resumedAfter(at int64) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := int64(math.MaxInt64)
	for _, ct := range l.ackTimes {
		if ct[0] >= at && ct[1] < first {
			first = ct[1]
		}
	}
	return time.Duration(first - at), first != math.MaxInt64
}

type watchResult struct {
	seen     map[string]int
	restarts int
	err      error
}

// watchAcks watches the acknowledged creates from rv until ctx ends,
// resuming from the last version seen whenever the watch ends: a resumed
// watch that the server cannot continue (410 Gone) is a gap.
func watchAcks(ctx context.Context, c kubernetes.Interface, ns, rv string) watchResult {
	res := watchResult{seen: map[string]int{}}
	for ctx.Err() == nil {
		w, err := c.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "ha=ack", ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				res.err = fmt.Errorf("resuming at %s: %w", rv, err)
				return res
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Error:
				if st, ok := ev.Object.(*metav1.Status); ok && st.Code == http.StatusGone {
					res.err = fmt.Errorf("resuming at %s: %s", rv, st.Message)
					w.Stop()
					return res
				}
			case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
				cm, ok := ev.Object.(*v1.ConfigMap)
				if !ok {
					continue
				}
				rv = cm.ResourceVersion
				if ev.Type == watch.Added {
					res.seen[cm.Name]++
				}
			}
		}
		w.Stop()
		if ctx.Err() == nil {
			res.restarts++
		}
	}
	return res
}
