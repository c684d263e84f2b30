package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/orca-project/orca/internal/auth/pki"
)

var (
	upstreamBin    = flag.String("upstream", "", "kube-apiserver binary to compare ConfigMap creates with (empty skips the comparison)")
	upstreamOnly   = flag.Bool("upstream-only", false, "run the comparison with upstream kube-apiserver alone")
	upstreamRounds = flag.Int("upstream-rounds", 2, "rounds of the upstream comparison (0 skips it): each creates ConfigMaps on a fresh Orca server and on a fresh kube-apiserver with an etcd of its own")
	serveEtcd      = flag.String("serve-etcd", "", "used by the benchmark itself: serve an etcd member on this data directory for kube-apiserver, print its client URL and run until standard input closes")
)

// runUpstreamCompare measures ConfigMap creates on Orca and on upstream
// kube-apiserver with the same clients and load, round by round, and prints
// each round's figures, their ratio and the pooled ratio. It does nothing
// without -upstream. Run with -serve-etcd, it is instead the etcd member
// that an upstream round starts as a process of its own.
func runUpstreamCompare(ctx context.Context, payload string) error {
	if *serveEtcd != "" {
		return serveEtcdMember(*serveEtcd)
	}
	if *upstreamBin == "" || *upstreamRounds < 1 {
		if *upstreamOnly {
			return errors.New("-upstream-only needs -upstream, the path of a kube-apiserver binary, and -upstream-rounds of 1 or more")
		}
		return nil
	}
	version, err := exec.CommandContext(ctx, *upstreamBin, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w", *upstreamBin, err)
	}
	fmt.Printf("Orca vs upstream kube-apiserver (%s): ConfigMap create, %d clients, %s per phase, %d rounds\n",
		strings.TrimSpace(string(version)), *concurrency, *duration, *upstreamRounds)
	fmt.Println("Orca runs its whole control plane (API server, controller manager, scheduler, etcd) in one process;")
	fmt.Println("upstream runs kube-apiserver alone, with no controller manager or scheduler, and etcd in a process of its own.")
	fmt.Println()

	orca, upstream := result{name: "Orca create ConfigMap"}, result{name: "upstream create ConfigMap"}
	var ratios []float64
	for round := 0; round < *upstreamRounds; round++ {
		var orcaRound, upstreamRound result
		type side struct {
			pooled, round *result
			create        func() (result, error)
		}
		sides := []side{
			{&orca, &orcaRound, func() (result, error) {
				r, _, err := createOnFreshServer(ctx, orca.name, payload, nil)
				return r, err
			}},
			{&upstream, &upstreamRound, func() (result, error) { return createOnUpstream(ctx, upstream.name, payload) }},
		}
		// Every other round starts with upstream, so that a drift of the
		// machine falls on both sides.
		if round%2 == 1 {
			slices.Reverse(sides)
		}
		for _, s := range sides {
			r, err := s.create()
			if err != nil {
				return fmt.Errorf("round %d: %w", round+1, err)
			}
			fmt.Println(r)
			s.pooled.add(r)
			*s.round = r
		}
		ratio := orcaRound.throughput / upstreamRound.throughput
		ratios = append(ratios, ratio)
		fmt.Printf("round %d: Orca / upstream %.2f\n\n", round+1, ratio)
	}
	fmt.Println(orca)
	fmt.Println(upstream)
	var each []string
	for _, r := range ratios {
		each = append(each, fmt.Sprintf("%.2f", r))
	}
	fmt.Printf("Orca create / upstream create:  %.2f (target >= 3.00; %d rounds of %s, per round %s)\n",
		orca.throughput/upstream.throughput, *upstreamRounds, *duration, strings.Join(each, " "))
	return nil
}

// createOnUpstream starts an etcd member and kube-apiserver on it, creates
// the bench namespace, lets the server settle, and runs the ConfigMap
// create phase of the main benchmark.
func createOnUpstream(ctx context.Context, name, payload string) (result, error) {
	dir, err := os.MkdirTemp("", "orca-bench-upstream-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	etcd, err := startEtcdProcess(filepath.Join(dir, "etcd"))
	if err != nil {
		return result{}, err
	}
	defer etcd.stop()
	api, err := startKubeAPIServer(ctx, dir, etcd.url)
	if err != nil {
		return result{}, err
	}
	defer api.stop()
	cs, err := clients(api.kubeconfig, *concurrency)
	if err != nil {
		return result{}, err
	}
	if _, err := cs[0].CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		return result{}, err
	}
	// The post-start hooks' writes (RBAC roles, priority levels) are over
	// within a few seconds.
	time.Sleep(5 * time.Second)
	r := hammer(name, len(cs), *duration, createConfigMap(ctx, cs, payload))
	if err := api.exited(); err != nil {
		return result{}, err
	}
	return r, nil
}

// etcdProcess is an etcd member served by this program run again with
// -serve-etcd, so that etcd's work is not counted in this process.
type etcdProcess struct {
	cmd   *exec.Cmd
	stdin io.Closer
	url   string
}

func startEtcdProcess(dir string) (*etcdProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-upstream-only", "-serve-etcd", dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start etcd member: %w", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("etcd member exited before it served")
	}
	return &etcdProcess{cmd: cmd, stdin: stdin, url: strings.TrimSpace(line)}, nil
}

// stop closes the member's standard input, which ends it, and kills it if
// it has not ended within ten seconds.
func (p *etcdProcess) stop() {
	p.stdin.Close()
	done := make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// serveEtcdMember serves a one-member cluster on dir with the settings of
// Orca's embedded member, on loopback ports of the kernel's choosing,
// prints its client URL, and runs until standard input closes.
func serveEtcdMember(dir string) error {
	peerPort, err := freePort()
	if err != nil {
		return err
	}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.WalDir = filepath.Join(dir, "wal")
	cfg.LogLevel = "error"
	// Errors only, as in Orca's member, and none once it is told to stop:
	// closing the listeners logs each as a failure.
	zc := zap.NewProductionConfig()
	zc.Level.SetLevel(zapcore.ErrorLevel)
	lg, err := zc.Build()
	if err != nil {
		return err
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)
	// As in Orca's member: the API server compacts history itself.
	cfg.AutoCompactionRetention = "0"
	client := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	peer := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(peerPort))}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("start etcd: %w", err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return fmt.Errorf("etcd: %w", err)
	case <-time.After(time.Minute):
		return errors.New("etcd not ready within a minute")
	}
	fmt.Printf("http://%s\n", e.Clients[0].Addr())
	closed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(closed)
	}()
	select {
	case <-closed:
		zc.Level.SetLevel(zapcore.FatalLevel)
		return nil
	case err := <-e.Err():
		return fmt.Errorf("etcd: %w", err)
	}
}

// kubeAPIServer is an upstream kube-apiserver process.
type kubeAPIServer struct {
	cmd        *exec.Cmd
	done       chan struct{}
	waitErr    error
	log        string
	kubeconfig string
}

// startKubeAPIServer starts kube-apiserver on etcdURL with certificates and
// a kubeconfig for a system:masters client written in dir, and waits until
// it reports ready.
func startKubeAPIServer(ctx context.Context, dir, etcdURL string) (*kubeAPIServer, error) {
	tlsDir := filepath.Join(dir, "tls")
	ca, err := pki.LoadOrCreateCA(tlsDir, "ca", "bench-ca")
	if err != nil {
		return nil, err
	}
	if _, err := pki.LoadOrIssue(tlsDir, "serving", ca, pki.LeafSpec{
		CommonName: "kube-apiserver", DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, Server: true,
	}); err != nil {
		return nil, err
	}
	admin, err := pki.LoadOrIssue(tlsDir, "admin", ca, pki.LeafSpec{CommonName: "bench-admin", Organizations: []string{"system:masters"}})
	if err != nil {
		return nil, err
	}
	saKey := filepath.Join(tlsDir, "service-account.key")
	if err := writeECKey(saKey); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(port),
		"--cert-dir", filepath.Join(dir, "certs"),
		"--tls-cert-file", filepath.Join(tlsDir, "serving.crt"),
		"--tls-private-key-file", filepath.Join(tlsDir, "serving.key"),
		"--client-ca-file", filepath.Join(tlsDir, "ca.crt"),
		"--service-account-key-file", saKey,
		"--service-account-signing-key-file", saKey,
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-cluster-ip-range", "10.0.0.0/24",
		"--authorization-mode", "Node,RBAC",
		"--enable-priority-and-fairness=true",
		// The endpoint reconciler refuses a loopback address; upstream's
		// own test server turns it off for one the same way.
		"--endpoint-reconciler-type", "none",
	}
	log := filepath.Join(dir, "kube-apiserver.log")
	logFile, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(*upstreamBin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", *upstreamBin, err)
	}
	s := &kubeAPIServer{cmd: cmd, done: make(chan struct{}), log: log, kubeconfig: filepath.Join(dir, "kubeconfig")}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	if err := writeKubeconfig(s.kubeconfig, fmt.Sprintf("https://127.0.0.1:%d", port), ca, admin); err != nil {
		s.stop()
		return nil, err
	}
	if err := s.waitReady(ctx, 2*time.Minute); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// waitReady polls /readyz as the admin client until it answers ok.
func (s *kubeAPIServer) waitReady(ctx context.Context, within time.Duration) error {
	cs, err := clients(s.kubeconfig, 1)
	if err != nil {
		return err
	}
	var last error
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err := s.exited(); err != nil {
			return err
		}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		body, err := cs[0].Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(rctx)
		cancel()
		if err == nil && strings.TrimSpace(string(body)) == "ok" {
			return nil
		}
		last = err
	}
	return fmt.Errorf("kube-apiserver not ready within %s (last: %v)\n%s", within, last, s.logTail())
}

// exited reports, with the end of its log, a server that has ended.
func (s *kubeAPIServer) exited() error {
	select {
	case <-s.done:
		return fmt.Errorf("kube-apiserver exited: %v\n%s", s.waitErr, s.logTail())
	default:
		return nil
	}
}

func (s *kubeAPIServer) logTail() string {
	data, _ := os.ReadFile(s.log)
	if len(data) > 4096 {
		data = data[len(data)-4096:]
	}
	return string(data)
}

func (s *kubeAPIServer) stop() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// writeKubeconfig writes a kubeconfig for server with client's
// certificate.
func writeKubeconfig(path, server string, ca, client *pki.Pair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["upstream"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca.CertPEM}
	cfg.AuthInfos["bench-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: client.CertPEM, ClientKeyData: client.KeyPEM}
	cfg.Contexts["upstream"] = &clientcmdapi.Context{Cluster: "upstream", AuthInfo: "bench-admin"}
	cfg.CurrentContext = "upstream"
	return clientcmd.WriteToFile(*cfg, path)
}

// writeECKey writes a new P-256 key, the service-account signing key.
func writeECKey(path string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

// freePort returns a loopback port free at the time of asking.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
