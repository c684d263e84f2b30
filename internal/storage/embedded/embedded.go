// Package embedded runs an etcd member inside the Orca server process, so
// that one binary and one data directory make a whole control plane.
package embedded

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Config says where the member keeps its data and listens.
type Config struct {
	// Dir holds the member's data (created if missing).
	Dir string
	// Name of the member; "default" if empty.
	Name string
	// ClientURL and PeerURL are where the member listens for etcd clients
	// (etcdctl, other tools) and for peers. Empty means a unix socket in
	// Dir, so that several servers on one machine never collide on ports;
	// the member serves clients on DIR/client.sock in any case.
	ClientURL, PeerURL string
	// LogLevel of etcd's own logger ("error" keeps start-up quiet).
	LogLevel string
	// ForceNewCluster starts the member as the only one of a new cluster,
	// keeping its data (a cluster reset).
	ForceNewCluster bool
	// ClientTLS and PeerTLS secure https listeners; peers and clients
	// must then present a certificate of the same CA.
	ClientTLS, PeerTLS *TLSFiles
	// InitialCluster ("name=peerURL,...", this member included) joins an
	// existing cluster that has already added this member (see
	// AddLearner); empty starts a new single-member cluster. It is read
	// only when Dir holds no data yet.
	InitialCluster string
	// Log hears of a slow start (a member waiting for its peers).
	Log *slog.Logger
}

// TLSFiles are PEM files: a certificate, its key and the CA that the other
// side's certificates must chain to.
type TLSFiles struct {
	CertFile, KeyFile, CAFile string
}

func (t *TLSFiles) info() transport.TLSInfo {
	if t == nil {
		return transport.TLSInfo{}
	}
	return transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.CAFile, ClientCertAuth: true}
}

// HasData reports whether dir already holds a member's data, so that its
// start ignores InitialCluster and resumes the member it holds.
func HasData(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "member", "snap"))
	if err == nil {
		return true
	}
	_, err = os.Stat(filepath.Join(dir, "wal"))
	return err == nil
}

// Server is a running embedded member.
type Server struct {
	etcd    *embed.Etcd
	client  *clientv3.Client
	closing *atomic.Bool
}

// quietOnClose drops what etcd logs while it is being shut down on
// purpose: its listeners report "use of closed network connection" and
// "server closed" as errors, which would read like a failure to a person
// stopping the server.
type quietOnClose struct {
	zapcore.Core
	closing *atomic.Bool
}

func (q quietOnClose) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if q.closing.Load() {
		return ce
	}
	return q.Core.Check(e, ce)
}

func (q quietOnClose) With(fields []zapcore.Field) zapcore.Core {
	return quietOnClose{Core: q.Core.With(fields), closing: q.closing}
}

// Start starts the member and waits until it serves requests.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create etcd data dir: %w", err)
	}
	ec := embed.NewConfig()
	ec.Dir = cfg.Dir
	ec.WalDir = filepath.Join(cfg.Dir, "wal")
	if cfg.Name != "" {
		ec.Name = cfg.Name
	}
	ec.LogLevel = cfg.LogLevel
	if ec.LogLevel == "" {
		ec.LogLevel = "error"
	}
	closing := &atomic.Bool{}
	zc := zap.NewProductionConfig()
	if err := zc.Level.UnmarshalText([]byte(ec.LogLevel)); err != nil {
		return nil, fmt.Errorf("etcd log level %q: %w", ec.LogLevel, err)
	}
	lg, err := zc.Build(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return quietOnClose{Core: c, closing: closing} }))
	if err != nil {
		return nil, fmt.Errorf("etcd logger: %w", err)
	}
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)
	if cfg.ClientURL == "" {
		cfg.ClientURL = "unix://" + filepath.Join(cfg.Dir, "client.sock")
	}
	if cfg.PeerURL == "" {
		cfg.PeerURL = "unix://" + filepath.Join(cfg.Dir, "peer.sock")
	}
	for _, u := range []struct {
		raw    string
		listen *[]url.URL
		adv    *[]url.URL
	}{
		{cfg.ClientURL, &ec.ListenClientUrls, &ec.AdvertiseClientUrls},
		{cfg.PeerURL, &ec.ListenPeerUrls, &ec.AdvertisePeerUrls},
	} {
		parsed, err := url.Parse(u.raw)
		if err != nil {
			return nil, fmt.Errorf("etcd url %q: %w", u.raw, err)
		}
		*u.listen = []url.URL{*parsed}
		*u.adv = []url.URL{*parsed}
	}
	// Tools on the machine (orca etcd-snapshot, orca server status) reach
	// the member through the socket in its data dir, readable by root
	// alone, whatever else it serves clients on.
	if sock := "unix://" + filepath.Join(cfg.Dir, "client.sock"); cfg.ClientURL != sock {
		u, _ := url.Parse(sock)
		ec.ListenClientUrls = append(ec.ListenClientUrls, *u)
	}
	ec.ClientTLSInfo = cfg.ClientTLS.info()
	ec.PeerTLSInfo = cfg.PeerTLS.info()
	ec.InitialCluster = ec.InitialClusterFromName(ec.Name)
	if cfg.InitialCluster != "" {
		ec.InitialCluster = cfg.InitialCluster
		ec.ClusterState = embed.ClusterStateFlagExisting
	}
	ec.ForceNewCluster = cfg.ForceNewCluster
	// The API server compacts history itself; etcd's own periodic
	// compaction would race it.
	ec.AutoCompactionRetention = "0"
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("start embedded etcd: %w", err)
	}
	// A member of a cluster is ready once a quorum answers, which can
	// take as long as the other servers take to come up: it waits for as
	// long as it is let, and says so.
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	start := time.Now()
	tick := time.NewTicker(15 * time.Second)
	defer tick.Stop()
	for ready := false; !ready; {
		select {
		case <-e.Server.ReadyNotify():
			ready = true
		case err := <-e.Err():
			e.Close()
			return nil, fmt.Errorf("embedded etcd failed: %w", err)
		case <-tick.C:
			log.Warn("etcd member not ready yet: waiting for a quorum of its cluster's members", "member", ec.Name, "waited", time.Since(start).Round(time.Second))
		case <-ctx.Done():
			e.Close()
			return nil, ctx.Err()
		}
	}
	return &Server{etcd: e, client: v3client.New(e.Server), closing: closing}, nil
}

// ID is the member's ID in its cluster.
func (s *Server) ID() uint64 { return uint64(s.etcd.Server.MemberID()) }

// IsLeader reports whether this member leads the cluster now.
func (s *Server) IsLeader() bool { return s.etcd.Server.Leader() == s.etcd.Server.MemberID() }

// Client returns an in-process client that skips the network.
func (s *Server) Client() *clientv3.Client { return s.client }

// Err reports a fatal member error.
func (s *Server) Err() <-chan error { return s.etcd.Err() }

// Close stops the member.
func (s *Server) Close() {
	s.closing.Store(true)
	s.client.Close()
	s.etcd.Close()
}
