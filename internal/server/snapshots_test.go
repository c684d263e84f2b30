package server

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orca-project/orca/internal/agent"
	"github.com/orca-project/orca/internal/etcdsnapshot"
	"github.com/orca-project/orca/internal/storage/embedded"
)

func TestShouldDefragment(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		total, inUse int64
		want         bool
	}{
		{0, 0, false},
		{10 * mib, 1 * mib, false},  // mostly free, but small
		{64 * mib, 1 * mib, false},  // at the size threshold, not above
		{65 * mib, 1 * mib, true},   // big and mostly free
		{100 * mib, 49 * mib, true}, // just under half in use
		{100 * mib, 50 * mib, false},
		{100 * mib, 90 * mib, false}, // big but full
		{4096 * mib, 2047 * mib, true},
	} {
		if got := shouldDefragment(tc.total, tc.inUse); got != tc.want {
			t.Errorf("shouldDefragment(%d MiB, %d MiB) = %v, want %v", tc.total/mib, tc.inUse/mib, got, tc.want)
		}
	}
}

func TestEtcdMaintenanceOptions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      Options
		schedule  bool
		retention int
		dir       string
		node      string
		err       string
	}{
		{name: "defaults", opts: Options{DataDir: "/d"}, schedule: true, retention: 5, dir: "/d/snapshots"},
		{name: "set", opts: Options{DataDir: "/d", EtcdSnapshotScheduleCron: "*/5 * * * *", EtcdSnapshotRetention: 2, EtcdSnapshotDir: "/backups", Agent: &agent.Options{NodeName: "n1"}},
			schedule: true, retention: 2, dir: "/backups", node: "n1"},
		{name: "descriptor", opts: Options{DataDir: "/d", EtcdSnapshotScheduleCron: "@every 1h"}, schedule: true, retention: 5, dir: "/d/snapshots"},
		{name: "disabled", opts: Options{DataDir: "/d", EtcdDisableSnapshots: true, EtcdSnapshotScheduleCron: "nonsense"}, retention: 5, dir: "/d/snapshots"},
		{name: "external etcd", opts: Options{DataDir: "/d", EtcdEndpoints: []string{"https://e:2379"}}, retention: 5, dir: "/d/snapshots"},
		{name: "bad cron", opts: Options{DataDir: "/d", EtcdSnapshotScheduleCron: "0 */12 * *"}, err: `--etcd-snapshot-schedule-cron "0 */12 * *"`},
		{name: "bad field", opts: Options{DataDir: "/d", EtcdSnapshotScheduleCron: "61 * * * *"}, err: "--etcd-snapshot-schedule-cron"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := newEtcdMaintenance(tc.opts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (m.schedule != nil) != tc.schedule || m.retention != tc.retention || m.dir != tc.dir {
				t.Errorf("schedule %v retention %d dir %s; want %v %d %s", m.schedule != nil, m.retention, m.dir, tc.schedule, tc.retention, tc.dir)
			}
			if tc.node != "" && m.nodeName != tc.node {
				t.Errorf("node %q, want %q", m.nodeName, tc.node)
			}
		})
	}
	// The default schedule fires at 0:00 and 12:00.
	m, _ := newEtcdMaintenance(Options{DataDir: "/d"})
	at := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
	if next := m.schedule.Next(at); !next.Equal(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("next after %v = %v", at, next)
	}
}

// tree lists the files under dir with their sizes, to see that a refused
// reset changed nothing.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel)
		if !fi.IsDir() {
			b.WriteString(" " + fi.ModTime().String())
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestResetCluster(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	e, err := embedded.Start(ctx, embedded.Config{Dir: etcdDataDir(dataDir)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client().Put(ctx, "/registry/k", "before"); err != nil {
		t.Fatal(err)
	}
	snap, err := SaveSnapshot(ctx, dataDir, "", etcdsnapshot.OnDemand, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(snap.Path) != filepath.Join(dataDir, "snapshots") {
		t.Errorf("snapshot saved to %s", snap.Path)
	}
	if _, err := e.Client().Put(ctx, "/registry/k", "after"); err != nil {
		t.Fatal(err)
	}
	// A running member's data is not moved away.
	if err := ResetCluster(ctx, Options{DataDir: dataDir, Out: &bytes.Buffer{}}, snap.Path); err == nil || !strings.Contains(err.Error(), "is running") {
		t.Fatalf("reset of a running server: %v", err)
	}
	e.Close()

	if _, err := SaveSnapshot(ctx, dataDir, "", etcdsnapshot.OnDemand, "n1"); err == nil || !strings.Contains(err.Error(), "must be running") {
		t.Errorf("save without a server: %v", err)
	}
	if err := ResetCluster(ctx, Options{DataDir: dataDir, EtcdEndpoints: []string{"http://e:2379"}}, ""); err == nil || !strings.Contains(err.Error(), "--etcd-endpoints") {
		t.Errorf("reset with an external etcd: %v", err)
	}
	if err := ResetCluster(ctx, Options{DataDir: t.TempDir(), Out: &bytes.Buffer{}}, ""); err == nil || !strings.Contains(err.Error(), "no etcd data") {
		t.Errorf("reset of an empty data dir: %v", err)
	}

	// A corrupted snapshot: refused, nothing touched.
	good, err := os.ReadFile(snap.Path)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte{}, good...)
	bad[len(bad)/3] ^= 0x80
	badPath := filepath.Join(t.TempDir(), snap.Name)
	if err := os.WriteFile(badPath, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	sum, _ := os.ReadFile(snap.Path + ".sha256")
	if err := os.WriteFile(badPath+".sha256", sum, 0o600); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dataDir)
	err = ResetCluster(ctx, Options{DataDir: dataDir, Out: &bytes.Buffer{}}, badPath)
	if err == nil || !strings.Contains(err.Error(), "is corrupted: checksum mismatch") {
		t.Fatalf("restore of a corrupted snapshot: %v", err)
	}
	if after := tree(t, dataDir); after != before {
		t.Errorf("data dir changed by a refused restore:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// Reset in place keeps the data.
	var out bytes.Buffer
	if err := ResetCluster(ctx, Options{DataDir: dataDir, Out: &out}, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), ClusterResetMessage) {
		t.Errorf("output %q", out.String())
	}
	checkValue(t, dataDir, "after")

	// Restore: the old data is moved aside, the snapshot's is back.
	out.Reset()
	if err := ResetCluster(ctx, Options{DataDir: dataDir, Out: &out}, snap.Path); err != nil {
		t.Fatal(err)
	}
	// This data dir has no tls directory: the restore warns that its
	// Secrets would be unreadable.
	for _, want := range []string{ClusterResetMessage, "restored etcd snapshot " + snap.Path, "moved to " + filepath.Join(dataDir, "etcd-old-"), "warning: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output %q lacks %q", out.String(), want)
		}
	}
	old, _ := filepath.Glob(filepath.Join(dataDir, "etcd-old-*"))
	if len(old) != 1 {
		t.Fatalf("moved-aside dirs: %v", old)
	}
	checkValue(t, dataDir, "before")
}

func checkValue(t *testing.T, dataDir, want string) {
	t.Helper()
	e, err := embedded.Start(context.Background(), embedded.Config{Dir: etcdDataDir(dataDir)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	resp, err := e.Client().Get(context.Background(), "/registry/k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != want {
		t.Fatalf("/registry/k = %v, %v; want %q", resp, err, want)
	}
	members, err := e.Client().MemberList(context.Background())
	if err != nil || len(members.Members) != 1 {
		t.Fatalf("members %v, %v", members, err)
	}
}
