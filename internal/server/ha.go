package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes"

	"github.com/orca-project/orca/internal/agent/join"
	"github.com/orca-project/orca/internal/apiserver"
	"github.com/orca-project/orca/internal/auth/bootstrappolicy"
	"github.com/orca-project/orca/internal/auth/bootstraptoken"
	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/controller/etcdmember"
	"github.com/orca-project/orca/internal/storage/embedded"
	"github.com/orca-project/orca/internal/storage/encryption"
)

// Several servers make one cluster by sharing what a cluster is: its CAs,
// the service-account signing key, the encryption-at-rest keys, the join
// tokens and, with the embedded etcd, the data itself. A server started
// with --server URL --token TOKEN (the server token, whose group may read
// the shared keys) verifies the cluster CA against the token, fetches the
// shared files from a running server, and joins the embedded etcd cluster
// as a learner that is promoted once it has caught up.

// ServerTokenFile is where a server keeps the token other servers join
// with, in its data directory.
const ServerTokenFile = "server-token"

// serverTokenDescription marks the Secret of the server token.
const serverTokenDescription = "Orca server join token: joins servers, which receive the cluster's keys"

// etcdCAName and etcdPeerName are the embedded etcd's CA and the one
// certificate each member presents to peers and clients alike.
const (
	etcdCAName   = "etcd-ca"
	etcdPeerName = "etcd-peer"
)

// sharedFiles are the data-dir files every server of a cluster holds
// alike. The generated encryption configuration is added when the server
// uses it.
var sharedFiles = []string{
	"tls/ca.crt", "tls/ca.key",
	"tls/front-proxy-ca.crt", "tls/front-proxy-ca.key",
	"tls/" + serviceAccountKeyFile,
	"tls/" + etcdCAName + ".crt", "tls/" + etcdCAName + ".key",
	TokenFile, ServerTokenFile,
}

// serverBootstrap is what a running server gives a joining one.
type serverBootstrap struct {
	// Files maps data-dir paths to their contents.
	Files map[string][]byte `json:"files"`
	// EtcdClientURLs are the client URLs of the embedded etcd's started
	// members, for the joiner to add itself through.
	EtcdClientURLs []string `json:"etcdClientURLs,omitempty"`
	// ExternalEtcd says the cluster keeps its data in an external etcd,
	// which the joiner must be given as well.
	ExternalEtcd bool `json:"externalEtcd,omitempty"`
}

// serverBootstrapHandler serves the shared files to holders of a server
// token (and to cluster administrators), never to a node token, whatever
// the authorizer was told.
func serverBootstrapHandler(dataDir string, files []string, etcd *clientv3.Client, external bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := apiserver.UserFrom(r.Context())
		if !ok || !(slices.Contains(u.Groups, bootstrappolicy.ServerBootstrapGroup) || slices.Contains(u.Groups, "system:masters")) {
			http.Error(w, "only a server token may read the cluster's keys", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet {
			http.Error(w, "GET only", http.StatusMethodNotAllowed)
			return
		}
		b := serverBootstrap{Files: map[string][]byte{}, ExternalEtcd: external}
		for _, f := range files {
			data, err := os.ReadFile(filepath.Join(dataDir, f))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			b.Files[f] = data
		}
		if !external {
			ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
			defer cancel()
			members, err := embedded.Members(ctx, etcd)
			if err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			for _, m := range members {
				for _, u := range m.ClientURLs {
					if strings.HasPrefix(u, "https://") && m.Name != "" && !m.Learner {
						b.EtcdClientURLs = append(b.EtcdClientURLs, u)
					}
				}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(b)
	})
}

// fetchServerBootstrap verifies the cluster CA against the token's pin,
// then reads the shared files with the token.
func fetchServerBootstrap(ctx context.Context, server, token string) (*serverBootstrap, error) {
	pin, secret, err := bootstraptoken.ParseJoinToken(token)
	if err != nil {
		return nil, err
	}
	caPEM, err := join.DiscoverCA(ctx, server, pin)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(server, "/")+bootstrappolicy.ServerBootstrapPath, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reach the server at %s: %w", server, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		return nil, fmt.Errorf("the server at %s refused the token (unknown, expired or revoked)", server)
	case http.StatusForbidden:
		return nil, fmt.Errorf("the server at %s refused the token: it is not a server token (give the server token, DATA_DIR/%s on a running server, not the node join token)", server, ServerTokenFile)
	default:
		return nil, fmt.Errorf("server bootstrap from %s: %s: %s", server, resp.Status, strings.TrimSpace(string(body)))
	}
	var b serverBootstrap
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, fmt.Errorf("server bootstrap from %s: %w", server, err)
	}
	if !bytes.Equal(b.Files["tls/ca.crt"], caPEM) {
		return nil, errors.New("the server's shared files carry another CA than the one its token pins")
	}
	return &b, nil
}

// writeShared puts the shared files in place. A data dir that already
// belongs to another cluster is refused rather than overwritten; files
// present already are kept (a server that restarts still joined).
func writeShared(dataDir string, b *serverBootstrap) error {
	if cur, err := os.ReadFile(filepath.Join(dataDir, "tls", "ca.crt")); err == nil && !bytes.Equal(cur, b.Files["tls/ca.crt"]) {
		return fmt.Errorf("%s belongs to another cluster (its CA differs from the one joined); use an empty data dir", dataDir)
	}
	names := make([]string, 0, len(b.Files))
	for name := range b.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(sharedFiles, name) && name != "tls/"+encryption.GeneratedFile {
			return fmt.Errorf("server bootstrap names an unexpected file %q", name)
		}
		path := filepath.Join(dataDir, filepath.FromSlash(name))
		if _, err := os.Stat(path); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := pki.WriteFile(path, b.Files[name], 0o600); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// etcdMember is how this server's embedded etcd member is set up.
type etcdMember struct {
	cfg embedded.Config
	// tls authenticates to the other members (joining, promotion).
	tls *tls.Config
	// peerURL is what the member advertises to its peers; networked
	// is whether it listens on the network at all.
	peerURL   string
	networked bool
}

// etcdMemberConfig names the member, places its listeners and, when they
// are on the network, secures them with certificates of the etcd CA.
func etcdMemberConfig(opts Options, tlsDir string) (*etcdMember, error) {
	dir := filepath.Join(opts.DataDir, "etcd")
	name, err := memberName(dir)
	if err != nil {
		return nil, err
	}
	m := &etcdMember{cfg: embedded.Config{Dir: dir, Name: name, ClientURL: opts.EtcdClientURL, PeerURL: opts.EtcdPeerURL, Log: opts.Log}}
	host := opts.AdvertiseAddress
	if m.cfg.PeerURL == "" && opts.EtcdPeerPort > 0 {
		m.cfg.PeerURL = "https://" + net.JoinHostPort(host, strconv.Itoa(opts.EtcdPeerPort))
	}
	if m.cfg.ClientURL == "" && opts.EtcdClientPort > 0 {
		m.cfg.ClientURL = "https://" + net.JoinHostPort(host, strconv.Itoa(opts.EtcdClientPort))
	}
	m.peerURL = m.cfg.PeerURL
	m.networked = strings.HasPrefix(m.cfg.PeerURL, "https://")
	if !m.networked && !strings.HasPrefix(m.cfg.ClientURL, "https://") {
		return m, nil
	}
	ca, err := pki.LoadOrCreateCA(tlsDir, etcdCAName, "orca-etcd-ca")
	if err != nil {
		return nil, err
	}
	ips := []net.IP{net.IPv4(127, 0, 0, 1)}
	if ip := net.ParseIP(host); ip != nil {
		ips = append(ips, ip)
	}
	peer, err := pki.LoadOrIssue(tlsDir, etcdPeerName, ca, pki.LeafSpec{CommonName: "orca-etcd-" + name, DNSNames: []string{"localhost"}, IPs: ips, Peer: true})
	if err != nil {
		return nil, err
	}
	files := &embedded.TLSFiles{
		CertFile: filepath.Join(tlsDir, etcdPeerName+".crt"),
		KeyFile:  filepath.Join(tlsDir, etcdPeerName+".key"),
		CAFile:   filepath.Join(tlsDir, etcdCAName+".crt"),
	}
	if strings.HasPrefix(m.cfg.PeerURL, "https://") {
		m.cfg.PeerTLS = files
	}
	if strings.HasPrefix(m.cfg.ClientURL, "https://") {
		m.cfg.ClientTLS = files
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	m.tls = &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{peer.Cert.Raw}, PrivateKey: peer.Key, Leaf: peer.Cert}},
		RootCAs:      pool,
		MinVersion:   tls.VersionTLS12,
	}
	return m, nil
}

// memberName is the member's name in its cluster, made once per data dir
// (the host name and a random suffix, as k3s names its members, so that
// servers on one host never collide). A data dir from before names were
// kept is "default", etcd's name for a lone member.
func memberName(dir string) (string, error) {
	path := filepath.Join(dir, "name")
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if embedded.HasData(dir) {
		return "default", nil
	}
	host, _ := os.Hostname()
	if host == "" {
		host = "orca"
	}
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return "", err
	}
	name := host + "-" + hex.EncodeToString(suffix)
	return name, writeMemberName(dir, name)
}

func writeMemberName(dir, name string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "name"), []byte(name+"\n"), 0o600); err != nil {
		return fmt.Errorf("etcd member name: %w", err)
	}
	return nil
}

// joinEtcd adds the member to the cluster the bootstrap names, as a
// learner, and returns a client of the cluster for its promotion.
func joinEtcd(ctx context.Context, m *etcdMember, b *serverBootstrap) (*clientv3.Client, uint64, error) {
	if len(b.EtcdClientURLs) == 0 {
		return nil, 0, errors.New("the server joined runs its etcd member without network listeners (--etcd-peer-port 0), so no server can join it")
	}
	if !m.networked {
		return nil, 0, errors.New("a joining server needs its etcd member on the network: give it --etcd-peer-port and --etcd-client-port")
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: b.EtcdClientURLs, TLS: m.tls, DialTimeout: 10 * time.Second, Context: ctx})
	if err != nil {
		return nil, 0, fmt.Errorf("connect to the cluster's etcd at %v: %w", b.EtcdClientURLs, err)
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	id, initial, err := embedded.AddLearner(actx, c, m.cfg.Name, m.peerURL)
	if err != nil {
		c.Close()
		return nil, 0, err
	}
	m.cfg.InitialCluster = initial
	return c, id, nil
}

// etcdTLSInfo is the TLS of a client of the embedded members, for tools
// on the server's machine.
func etcdTLSInfo(tlsDir string) transport.TLSInfo {
	return transport.TLSInfo{
		CertFile:      filepath.Join(tlsDir, etcdPeerName+".crt"),
		KeyFile:       filepath.Join(tlsDir, etcdPeerName+".key"),
		TrustedCAFile: filepath.Join(tlsDir, etcdCAName+".crt"),
	}
}

// runMembership finishes the member's place in its cluster once the
// server runs: a joiner is promoted to a voter when it has caught up; a
// member whose peer address changed (a lone server that listened on a
// unix socket before) advertises the new one.
func runMembership(ctx context.Context, log *slog.Logger, local, cluster *clientv3.Client, id uint64, m *etcdMember) error {
	go recordMembers(ctx, log, local, m.cfg.Dir)
	promoter := cluster
	if promoter == nil && isLearner(ctx, local, id) {
		// Joined before, but stopped before its promotion: the local
		// member forwards the promotion to the leader.
		promoter = local
	}
	switch {
	case promoter != nil:
		if err := embedded.Promote(ctx, promoter, id, time.Second); err != nil {
			if ctx.Err() == nil {
				log.Error("etcd member not promoted", "member", m.cfg.Name, "err", err)
			}
			return nil
		}
		log.Info("etcd member promoted to a voting member", "member", m.cfg.Name)
	case m.networked:
		uctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		changed, err := embedded.EnsurePeerURL(uctx, local, id, m.peerURL)
		if err != nil && ctx.Err() == nil {
			log.Warn("could not advertise the etcd member's peer URL", "member", m.cfg.Name, "url", m.peerURL, "err", err)
		} else if changed {
			log.Info("etcd member advertises a new peer URL", "member", m.cfg.Name, "url", m.peerURL)
		}
	}
	return nil
}

// startMemberController runs the controller that removes the etcd
// member of a server whose Node is deleted or annotated for removal, and
// marks this server's own Node with its member.
func startMemberController(ctx context.Context, opts Options, tlsDir string, ca *pki.Pair, port int, local *clientv3.Client, m *etcdMember, goFn func(func() error)) error {
	cfg, err := loopbackConfig(opts, tlsDir, ca, port, "apiserver-loopback", "system:apiserver", []string{user.SystemPrivilegedGroup}, "orca-etcd-member", 20, 40)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	own := ""
	if opts.Agent != nil {
		own = opts.Agent.NodeName
	}
	c, err := etcdmember.New(etcdmember.Config{
		Client: client, Members: etcdMembership{local}, Self: m.cfg.Name, OwnNode: own, Address: opts.AdvertiseAddress, Log: opts.Log,
	})
	if err != nil {
		return err
	}
	goFn(func() error { return c.Run(ctx) })
	return nil
}

// etcdMembership is the embedded etcd cluster as the member controller
// sees it.
type etcdMembership struct{ c *clientv3.Client }

func (e etcdMembership) Names(ctx context.Context) ([]string, error) {
	members, err := embedded.Members(ctx, e.c)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, m := range members {
		if m.Name != "" {
			names = append(names, m.Name)
		}
	}
	return names, nil
}

func (e etcdMembership) Remove(ctx context.Context, name string) error {
	_, err := embedded.Remove(ctx, e.c, name)
	return err
}

func isLearner(ctx context.Context, c *clientv3.Client, id uint64) bool {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	members, err := embedded.Members(lctx, c)
	if err != nil {
		return false
	}
	for _, m := range members {
		if m.ID == id {
			return m.Learner
		}
	}
	return false
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
