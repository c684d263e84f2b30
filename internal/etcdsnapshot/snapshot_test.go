package etcdsnapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orca-project/orca/internal/storage/embedded"
)

const testKeys = 10000

// fill writes testKeys keys, most in transactions of 100 (so that many
// share a revision), then updates and deletes some one at a time, and
// compacts, so that the store has versions, gaps and a compacted
// revision to keep.
func fill(t *testing.T, c *clientv3.Client) (compacted int64) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < testKeys; i += 100 {
		ops := make([]clientv3.Op, 0, 100)
		for j := i; j < i+100; j++ {
			ops = append(ops, clientv3.OpPut(fmt.Sprintf("/registry/test/%05d", j), fmt.Sprintf("value-%d", j)))
		}
		if _, err := c.Txn(ctx).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	for j := 0; j < 300; j++ {
		if _, err := c.Put(ctx, fmt.Sprintf("/registry/test/%05d", j*7), fmt.Sprintf("updated-%d", j)); err != nil {
			t.Fatal(err)
		}
		if j%3 == 0 {
			if _, err := c.Delete(ctx, fmt.Sprintf("/registry/test/%05d", j*7+1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	resp, err := c.Get(ctx, "/registry/test/00000")
	if err != nil {
		t.Fatal(err)
	}
	compacted = resp.Header.Revision - 50
	if _, err := c.Compact(ctx, compacted); err != nil {
		t.Fatal(err)
	}
	return compacted
}

func all(t *testing.T, c *clientv3.Client) (map[string]*mvccpb.KeyValue, int64) {
	t.Helper()
	resp, err := c.Get(context.Background(), "/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]*mvccpb.KeyValue, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out[string(kv.Key)] = kv
	}
	return out, resp.Header.Revision
}

func startMember(t *testing.T, dir string) *embedded.Server {
	t.Helper()
	e, err := embedded.Start(context.Background(), embedded.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSaveRestore(t *testing.T) {
	base := t.TempDir()
	src := startMember(t, filepath.Join(base, "etcd"))
	compacted := fill(t, src.Client())
	before, rev := all(t, src.Client())
	if len(before) != testKeys-100 {
		t.Fatalf("%d keys before the snapshot, want %d", len(before), testKeys-100)
	}

	dir := filepath.Join(base, "snapshots")
	now := time.Unix(1767225600, 0)
	snap, err := Save(context.Background(), src.Client(), dir, OnDemand, "node1", now)
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	if snap.Name != "on-demand-node1-1767225600" || snap.Path != filepath.Join(dir, snap.Name) || !snap.Created.Equal(now) {
		t.Errorf("Save = %+v", snap)
	}
	for _, p := range []string{snap.Path, snap.Path + ".sha256"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", p, fi.Mode().Perm())
		}
		if p == snap.Path && fi.Size() != snap.Size {
			t.Errorf("size %d, Save said %d", fi.Size(), snap.Size)
		}
	}
	sum, _ := os.ReadFile(snap.Path + ".sha256")
	if !strings.HasSuffix(string(sum), "  "+snap.Name+"\n") || len(strings.Fields(string(sum))[0]) != 64 {
		t.Errorf("sidecar %q is not in sha256sum's format", sum)
	}
	if listed, err := List(dir); err != nil || len(listed) != 1 || listed[0].Name != snap.Name || listed[0].Size != snap.Size {
		t.Errorf("List = %+v, %v", listed, err)
	}
	if _, err := Save(context.Background(), src.Client(), dir, OnDemand, "node1", now); err == nil {
		t.Error("a second snapshot of the same name replaced the first")
	}
	if err := Verify(snap.Path); err != nil {
		t.Fatal(err)
	}

	restored := filepath.Join(base, "restored", "etcd")
	if err := Restore(snap.Path, restored, "", ""); err != nil {
		t.Fatal(err)
	}
	if err := Restore(snap.Path, restored, "", ""); err == nil {
		t.Error("restore over existing data succeeded")
	}
	dst := startMember(t, restored)
	defer dst.Close()
	after, afterRev := all(t, dst.Client())
	if afterRev != rev {
		t.Errorf("current revision %d after restore, %d before", afterRev, rev)
	}
	if len(after) != len(before) {
		t.Errorf("%d keys after restore, %d before", len(after), len(before))
	}
	for k, want := range before {
		got := after[k]
		if got == nil {
			t.Errorf("%s lost", k)
			continue
		}
		if string(got.Value) != string(want.Value) || got.ModRevision != want.ModRevision ||
			got.CreateRevision != want.CreateRevision || got.Version != want.Version {
			t.Errorf("%s: got value %q mod %d create %d version %d; want %q %d %d %d", k,
				got.Value, got.ModRevision, got.CreateRevision, got.Version,
				want.Value, want.ModRevision, want.CreateRevision, want.Version)
		}
	}
	// History is kept as far back as it was compacted, and no further.
	if _, err := dst.Client().Get(context.Background(), "/registry/test/00000", clientv3.WithRev(compacted)); err != nil {
		t.Errorf("read at the compacted revision: %v", err)
	}
	if _, err := dst.Client().Get(context.Background(), "/registry/test/00000", clientv3.WithRev(compacted-1)); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Errorf("read before the compacted revision: %v, want compacted", err)
	}
	// The restored member takes writes after the preserved revision.
	put, err := dst.Client().Put(context.Background(), "/registry/test/new", "x")
	if err != nil || put.Header.Revision != rev+1 {
		t.Errorf("put after restore: %v at revision %v, want %d", err, put, rev+1)
	}
}

func TestCorruptedSnapshotRefused(t *testing.T) {
	base := t.TempDir()
	src := startMember(t, filepath.Join(base, "etcd"))
	if _, err := src.Client().Put(context.Background(), "/registry/a", "b"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "snapshots")
	snap, err := Save(context.Background(), src.Client(), dir, OnDemand, "node1", time.Unix(100, 0))
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(snap.Path)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(t *testing.T, at int) {
		bad := append([]byte{}, good...)
		bad[at] ^= 0x01
		if err := os.WriteFile(snap.Path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		at      int
		sidecar bool
		reason  string
	}{
		{"database byte", len(good) / 2, true, "checksum mismatch"},
		{"hash byte", len(good) - 1, true, "checksum mismatch"},
		{"database byte, no sidecar", len(good) / 2, false, "etcd's integrity hash does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flip(t, tc.at)
			if !tc.sidecar {
				if err := os.Remove(snap.Path + ".sha256"); err != nil {
					t.Fatal(err)
				}
			}
			err := Verify(snap.Path)
			var ce *CorruptedError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("Verify = %v, want corrupted: %s", err, tc.reason)
			}
			if want := "snapshot " + snap.Path + " is corrupted: "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with %q", err, want)
			}
			out := filepath.Join(base, "restored-"+strings.ReplaceAll(tc.name, " ", "-"))
			if err := Restore(snap.Path, out, "", ""); !errors.As(err, &ce) {
				t.Errorf("Restore = %v, want corrupted", err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("restore of a corrupted snapshot wrote %s: %v", out, err)
			}
			// Nothing half-restored is left beside it either.
			if m, _ := filepath.Glob(filepath.Join(base, ".restored*")); len(m) > 0 {
				t.Errorf("left behind: %v", m)
			}
		})
	}
	if err := os.WriteFile(snap.Path, good[:len(good)-100], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Verify(snap.Path); err == nil || !strings.Contains(err.Error(), "no etcd integrity hash") {
		t.Errorf("Verify of a truncated snapshot = %v", err)
	}
}
