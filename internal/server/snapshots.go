package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/orca-project/orca/internal/cron"
	"github.com/orca-project/orca/internal/etcdsnapshot"
	"github.com/orca-project/orca/internal/storage/embedded"
	"github.com/orca-project/orca/internal/storage/encryption"
)

// k3s's defaults for scheduled snapshots: twice a day, the last five kept.
const (
	DefaultEtcdSnapshotScheduleCron = "0 */12 * * *"
	DefaultEtcdSnapshotRetention    = 5
)

// ClusterResetMessage is what k3s prints once --cluster-reset is done.
const ClusterResetMessage = "Managed etcd cluster membership has been reset, restart without --cluster-reset flag now. " +
	"Back up and delete DATA_DIR/etcd on each other server, then start it with --server and --token to rejoin."

// SnapshotDir is where the server on dataDir keeps etcd snapshots: dir
// when set, else DATA_DIR/snapshots.
func SnapshotDir(dataDir, dir string) string {
	if dir != "" {
		return dir
	}
	return filepath.Join(dataDir, "snapshots")
}

// etcdDataDir is the embedded member's data directory.
func etcdDataDir(dataDir string) string { return filepath.Join(dataDir, "etcd") }

// etcdMaintenance is the server's upkeep of its etcd: the size gauges,
// defragmentation and the scheduled snapshots. It is built from Options
// before etcd starts, so that a bad schedule stops the server before it
// touches any data, and started once the API server is up.
type etcdMaintenance struct {
	embedded bool
	dir      string
	// schedule is nil when the server takes no snapshots: disabled, or
	// an external etcd, whose snapshots are its operator's business.
	schedule  cron.Schedule
	retention int
	nodeName  string
	log       *slog.Logger
}

func newEtcdMaintenance(opts Options) (*etcdMaintenance, error) {
	m := &etcdMaintenance{
		embedded:  len(opts.EtcdEndpoints) == 0,
		dir:       SnapshotDir(opts.DataDir, opts.EtcdSnapshotDir),
		retention: opts.EtcdSnapshotRetention,
		log:       opts.Log,
	}
	if m.retention == 0 {
		m.retention = DefaultEtcdSnapshotRetention
	}
	if !m.embedded || opts.EtcdDisableSnapshots {
		return m, nil
	}
	spec := opts.EtcdSnapshotScheduleCron
	if spec == "" {
		spec = DefaultEtcdSnapshotScheduleCron
	}
	// The CronJob parser: the same five fields and descriptors as
	// robfig/cron, which k3s uses.
	sched, err := cron.Parse(spec, nil)
	if err != nil {
		return nil, fmt.Errorf("--etcd-snapshot-schedule-cron %q: %w", spec, err)
	}
	m.schedule = sched
	if opts.Agent != nil && opts.Agent.NodeName != "" {
		m.nodeName = opts.Agent.NodeName
	} else if m.nodeName, err = agentNodeName(); err != nil {
		return nil, err
	}
	return m, nil
}

// start runs the upkeep under the server's error group; spawn is its Go.
func (m *etcdMaintenance) start(ctx context.Context, client *clientv3.Client, reg prometheus.Registerer, spawn func(func() error)) error {
	metrics, err := newEtcdMetrics(reg)
	if err != nil {
		return fmt.Errorf("etcd metrics: %w", err)
	}
	u := &etcdUpkeep{client: client, defragment: m.embedded, snapshotDir: m.dir, metrics: metrics, log: m.log}
	if eps := client.Endpoints(); !m.embedded && len(eps) > 0 {
		u.endpoint = eps[0]
	}
	spawn(func() error { u.run(ctx); return nil })
	if m.schedule != nil {
		spawn(func() error { m.runSchedule(ctx, client, metrics); return nil })
	}
	return nil
}

// runSchedule takes a snapshot at every activation of the schedule and
// prunes the scheduled ones of this node to the retention. A failed
// snapshot is logged and the next one tried at its time: the server goes
// on serving.
func (m *etcdMaintenance) runSchedule(ctx context.Context, client *clientv3.Client, metrics *etcdMetrics) {
	for {
		next := m.schedule.Next(time.Now())
		if next.IsZero() {
			m.log.Warn("etcd snapshot schedule has no next activation; no more scheduled snapshots")
			return
		}
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		start := time.Now()
		snap, err := etcdsnapshot.Save(ctx, client, m.dir, etcdsnapshot.Scheduled, m.nodeName, start)
		if err != nil {
			if ctx.Err() == nil {
				m.log.Error("scheduled etcd snapshot failed", "err", err)
			}
			continue
		}
		metrics.snapshots.Inc()
		metrics.lastSnapshot.Set(float64(snap.Created.Unix()))
		m.log.Info("saved etcd snapshot", "path", snap.Path, "size", snap.Size, "took", time.Since(start).Round(time.Millisecond))
		pruned, err := etcdsnapshot.Prune(m.dir, etcdsnapshot.Scheduled+"-"+m.nodeName, m.retention)
		for _, p := range pruned {
			m.log.Info("pruned etcd snapshot", "name", p.Name, "retention", m.retention)
		}
		if err != nil {
			m.log.Warn("prune etcd snapshots", "err", err)
		}
	}
}

// SaveSnapshot takes a snapshot of the embedded member of the server
// running on dataDir, through the member's client socket, into
// SnapshotDir(dataDir, snapshotDir): what `orca etcd-snapshot save` does.
// The member's data cannot be read safely while it runs, so the server
// must be running.
func SaveSnapshot(ctx context.Context, dataDir, snapshotDir, name, nodeName string) (etcdsnapshot.Snapshot, error) {
	sock := filepath.Join(etcdDataDir(dataDir), "client.sock")
	notRunning := fmt.Sprintf("the server on %s must be running, with its embedded etcd listening on its default socket", dataDir)
	if _, err := os.Stat(sock); err != nil {
		return etcdsnapshot.Snapshot{}, fmt.Errorf("no etcd client socket at %s: %s", sock, notRunning)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{"unix://" + sock}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return etcdsnapshot.Snapshot{}, fmt.Errorf("etcd client: %w", err)
	}
	defer client.Close()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := client.Status(sctx, "unix://"+sock); err != nil {
		return etcdsnapshot.Snapshot{}, fmt.Errorf("cannot reach etcd at %s (%v): %s", sock, err, notRunning)
	}
	return etcdsnapshot.Save(ctx, client, SnapshotDir(dataDir, snapshotDir), name, nodeName, time.Now())
}

// ResetCluster is `orca server --cluster-reset`: the embedded member is
// made the only member of a new cluster, and the server is then started
// again without the flag. With restorePath, DATA_DIR/etcd is moved aside
// to DATA_DIR/etcd-old-UNIXSECONDS and the snapshot restored in its place
// (every key with its revisions); without it, the data is kept and the
// member started once with etcd's force-new-cluster. A snapshot that fails
// verification is refused before anything is moved.
func ResetCluster(ctx context.Context, opts Options, restorePath string) error {
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if len(opts.EtcdEndpoints) > 0 {
		return errors.New("--cluster-reset resets the embedded etcd; with --etcd-endpoints, reset or restore the external etcd cluster with its own tools")
	}
	dir := etcdDataDir(opts.DataDir)
	if restorePath != "" {
		if err := etcdsnapshot.Verify(restorePath); err != nil {
			return fmt.Errorf("cluster reset refused, %s left as it was: %w", dir, err)
		}
	} else if _, err := os.Stat(filepath.Join(dir, "member")); err != nil {
		return fmt.Errorf("no etcd data in %s to reset (without --cluster-reset-restore-path, the existing data is kept): %w", dir, err)
	}
	opts = withAdvertisedIP(opts)
	member, err := etcdMemberConfig(opts, filepath.Join(opts.DataDir, "tls"))
	if err != nil {
		return err
	}
	if etcdListening(opts.DataDir, member.cfg.ClientURL) {
		return fmt.Errorf("the server on %s is running: stop it before --cluster-reset", opts.DataDir)
	}
	cfg := member.cfg
	if restorePath != "" {
		old := filepath.Join(opts.DataDir, fmt.Sprintf("etcd-old-%d", time.Now().Unix()))
		moved := false
		if _, err := os.Stat(dir); err == nil {
			if err := os.Rename(dir, old); err != nil {
				return fmt.Errorf("move %s aside: %w", dir, err)
			}
			moved = true
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		err := etcdsnapshot.Restore(restorePath, dir, cfg.Name, member.peerURL)
		if err == nil {
			err = writeMemberName(dir, cfg.Name)
		}
		if err != nil {
			if moved {
				if rerr := os.Rename(old, dir); rerr != nil {
					return fmt.Errorf("%w (and the previous data could not be put back from %s: %v)", err, old, rerr)
				}
			}
			return err
		}
		if moved {
			fmt.Fprintf(opts.Out, "orca: previous etcd data moved to %s\n", old)
		}
		fmt.Fprintf(opts.Out, "orca: restored etcd snapshot %s into %s\n", restorePath, dir)
		// The snapshot holds etcd's keys only. k3s keeps its certificates
		// and keys in etcd too; Orca keeps them in DATA_DIR/tls, so a
		// restore into a new directory needs that directory back as well.
		if key := filepath.Join(opts.DataDir, "tls", encryption.GeneratedFile); opts.EncryptionProviderConfig == "" && !exists(key) {
			fmt.Fprintf(opts.Out, "orca: warning: %s does not exist: the server will generate a new CA and encryption key, and the snapshot's Secrets will be unreadable; put back DATA_DIR/tls from the same backup first\n", key)
		}
	} else {
		cfg.ForceNewCluster = true
	}
	// Starting the member once proves the data opens (and, for a reset
	// in place, rewrites the membership).
	e, err := embedded.Start(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cluster reset: %w", err)
	}
	e.Close()
	fmt.Fprintln(opts.Out, ClusterResetMessage)
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// etcdListening reports whether something answers on the embedded
// member's client listener: a running server, whose data a reset must not
// move away.
func etcdListening(dataDir, clientURL string) bool {
	network, addr := "unix", filepath.Join(etcdDataDir(dataDir), "client.sock")
	if clientURL != "" {
		u, err := url.Parse(clientURL)
		if err != nil {
			return false
		}
		if u.Scheme == "unix" {
			addr = u.Host + u.Path
		} else {
			network, addr = "tcp", u.Host
		}
	}
	c, err := net.DialTimeout(network, addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
