package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orca-project/orca/internal/etcdsnapshot"
)

// Defragmentation thresholds. bbolt never gives pages back to the file
// system: after compaction the freed pages are only reused. Defragmenting
// rewrites the file, and blocks the member while it does, so it is worth
// it only when at least half the file is free and the file is big enough
// for that to matter.
const (
	defragMinTotalBytes = 64 << 20
	defragCheckEvery    = 10 * time.Minute
	etcdStatusEvery     = 30 * time.Second
)

// shouldDefragment is the decision to defragment a member whose database
// file is total bytes, of which inUse hold data.
func shouldDefragment(total, inUse int64) bool {
	return total > defragMinTotalBytes && inUse < total/2
}

// etcdMetrics are the Prometheus series of etcd's upkeep; the compactions
// are counted by the API server, which runs them.
type etcdMetrics struct {
	dbTotal, dbInUse prometheus.Gauge
	defrags          prometheus.Counter
	snapshots        prometheus.Counter
	lastSnapshot     prometheus.Gauge
}

func newEtcdMetrics(reg prometheus.Registerer) (*etcdMetrics, error) {
	m := &etcdMetrics{
		dbTotal: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "orca_etcd_db_total_size_bytes",
			Help: "Size of etcd's database file, free pages included.",
		}),
		dbInUse: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "orca_etcd_db_total_size_in_use_bytes",
			Help: "Bytes of etcd's database file that hold data; the rest is freed by compaction and returned by defragmentation.",
		}),
		defrags: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "orca_etcd_defragmentations_total",
			Help: "Defragmentations of the embedded etcd member run by the server.",
		}),
		snapshots: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "orca_etcd_snapshots_total",
			Help: "Scheduled etcd snapshots the server saved.",
		}),
		lastSnapshot: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "orca_etcd_last_snapshot_timestamp_seconds",
			Help: "Creation time of the newest snapshot in the snapshot directory, scheduled or on demand (0 when there is none).",
		}),
	}
	for _, c := range []prometheus.Collector{m.dbTotal, m.dbInUse, m.defrags, m.snapshots, m.lastSnapshot} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// etcdUpkeep refreshes the size gauges and, for the embedded member,
// defragments when shouldDefragment says so.
type etcdUpkeep struct {
	client *clientv3.Client
	// endpoint is the member Status and Defragment address; the
	// in-process client of the embedded member ignores it.
	endpoint    string
	defragment  bool
	snapshotDir string
	metrics     *etcdMetrics
	log         *slog.Logger
}

func (u *etcdUpkeep) run(ctx context.Context) {
	status := time.NewTicker(etcdStatusEvery)
	defer status.Stop()
	defrag := time.NewTicker(defragCheckEvery)
	defer defrag.Stop()
	u.refresh(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-status.C:
			u.refresh(ctx)
		case <-defrag.C:
			if u.defragment {
				u.maybeDefragment(ctx)
			}
		}
	}
}

// refresh reads the database sizes, and the newest snapshot's time from
// the directory so that snapshots taken with `orca etcd-snapshot save`
// count too.
func (u *etcdUpkeep) refresh(ctx context.Context) (total, inUse int64, ok bool) {
	if snaps, err := etcdsnapshot.List(u.snapshotDir); err == nil && len(snaps) > 0 {
		u.metrics.lastSnapshot.Set(float64(snaps[len(snaps)-1].Created.Unix()))
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := u.client.Status(sctx, u.endpoint)
	if err != nil {
		if ctx.Err() == nil {
			u.log.Warn("etcd status", "err", err)
		}
		return 0, 0, false
	}
	u.metrics.dbTotal.Set(float64(st.DbSize))
	u.metrics.dbInUse.Set(float64(st.DbSizeInUse))
	return st.DbSize, st.DbSizeInUse, true
}

func (u *etcdUpkeep) maybeDefragment(ctx context.Context) {
	total, inUse, ok := u.refresh(ctx)
	if !ok || !shouldDefragment(total, inUse) {
		return
	}
	start := time.Now()
	// Defragmenting rewrites the whole file; give it far longer than a
	// status call.
	dctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if _, err := u.client.Defragment(dctx, u.endpoint); err != nil {
		if ctx.Err() == nil {
			u.log.Warn("etcd defragmentation failed", "err", err)
		}
		return
	}
	u.metrics.defrags.Inc()
	after, _, _ := u.refresh(ctx)
	u.log.Info("defragmented etcd", "sizeBefore", total, "inUse", inUse, "sizeAfter", after, "took", time.Since(start).Round(time.Millisecond))
}
