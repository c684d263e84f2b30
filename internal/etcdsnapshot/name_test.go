package etcdsnapshot

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestFileName(t *testing.T) {
	for _, tc := range []struct {
		name, node string
		at         time.Time
		want       string
	}{
		{OnDemand, "node1", time.Unix(1767225600, 0), "on-demand-node1-1767225600"},
		{Scheduled, "node-a.example.com", time.Unix(1767225600, 999), "etcd-snapshot-node-a.example.com-1767225600"},
		{"before-upgrade", "n", time.Unix(1, 0).In(time.FixedZone("x", 3600)), "before-upgrade-n-1"},
	} {
		if got := FileName(tc.name, tc.node, tc.at); got != tc.want {
			t.Errorf("FileName(%q, %q, %v) = %q, want %q", tc.name, tc.node, tc.at, got, tc.want)
		}
		created, ok := createdFromName(tc.want)
		if !ok || created.Unix() != tc.at.Unix() {
			t.Errorf("createdFromName(%q) = %v, %v; want %v", tc.want, created, ok, tc.at.Unix())
		}
	}
	for _, name := range []string{"backup.db", "on-demand-node1-", "on-demand-node1-12a", "on-demand-node1-0", "nodash"} {
		if c, ok := createdFromName(name); ok {
			t.Errorf("createdFromName(%q) = %v, want none", name, c)
		}
	}
}

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"on-demand":  true,
		"node.local": true,
		"":           false,
		"../etc":     false,
		"a/b":        false,
		".hidden":    false,
		"a\\b":       false,
	} {
		if err := checkName("name", name); (err == nil) != ok {
			t.Errorf("checkName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func snaps(specs ...any) []Snapshot {
	var out []Snapshot
	for i := 0; i < len(specs); i += 2 {
		out = append(out, Snapshot{Name: specs[i].(string), Created: time.Unix(int64(specs[i+1].(int)), 0)})
	}
	return out
}

func names(s []Snapshot) []string {
	out := []string{}
	for _, x := range s {
		out = append(out, x.Name)
	}
	return out
}

func TestSortByAge(t *testing.T) {
	for _, tc := range []struct {
		in   []Snapshot
		want []string
	}{
		{snaps("c", 3, "a", 1, "b", 2), []string{"a", "b", "c"}},
		// Same second: by name.
		{snaps("on-demand-n-5", 5, "etcd-snapshot-n-5", 5, "x", 1), []string{"x", "etcd-snapshot-n-5", "on-demand-n-5"}},
		{nil, []string{}},
	} {
		sortByAge(tc.in)
		if got := names(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("got %v, want %v", got, tc.want)
		}
	}
}

func TestToPrune(t *testing.T) {
	all := snaps(
		"etcd-snapshot-n1-300", 300,
		"etcd-snapshot-n1-100", 100,
		"on-demand-n1-150", 150,
		"etcd-snapshot-n1-200", 200,
		"etcd-snapshot-n1-400", 400,
		"etcd-snapshot-n2-50", 50,
		"etcd-snapshotter-n1-10", 10,
		"backup.db", 1,
	)
	for _, tc := range []struct {
		prefix    string
		retention int
		want      []string
	}{
		{"etcd-snapshot-n1", 2, []string{"etcd-snapshot-n1-100", "etcd-snapshot-n1-200"}},
		{"etcd-snapshot-n1", 4, []string{}},
		{"etcd-snapshot-n1", 5, []string{}},
		{"etcd-snapshot-n1", 1, []string{"etcd-snapshot-n1-100", "etcd-snapshot-n1-200", "etcd-snapshot-n1-300"}},
		// Every node's scheduled snapshots, and not "etcd-snapshotter-...".
		{"etcd-snapshot", 1, []string{"etcd-snapshot-n2-50", "etcd-snapshot-n1-100", "etcd-snapshot-n1-200", "etcd-snapshot-n1-300"}},
		{"on-demand", 1, []string{}},
		{"on-demand", 0, []string{}},
		{"etcd-snapshot-n1", 0, []string{}},
		{"etcd-snapshot-n1", -1, []string{}},
		{"nothing", 1, []string{}},
	} {
		if got := names(toPrune(all, tc.prefix, tc.retention)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("toPrune(%q, %d) = %v, want %v", tc.prefix, tc.retention, got, tc.want)
		}
	}
}

// writeFake puts a file that looks like a snapshot in dir.
func writeFake(t *testing.T, dir, name string, size int, mtime time.Time) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, bytes.Repeat([]byte{'x'}, size), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestListDeletePrune(t *testing.T) {
	dir := t.TempDir()
	if got, err := List(filepath.Join(dir, "missing")); err != nil || len(got) != 0 {
		t.Fatalf("List of a missing dir = %v, %v", got, err)
	}
	mtime := time.Unix(1000, 0)
	writeFake(t, dir, "on-demand-n1-300", 30, mtime)
	writeFake(t, dir, "on-demand-n1-300.sha256", 10, mtime)
	writeFake(t, dir, "on-demand-n1-100", 10, mtime)
	writeFake(t, dir, "etcd-snapshot-n1-200", 20, mtime)
	writeFake(t, dir, "backup.db", 5, time.Unix(150, 0))
	writeFake(t, dir, ".on-demand-n1-400.123.part", 40, mtime)
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o700); err != nil {
		t.Fatal(err)
	}
	got, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Snapshot{
		{Name: "on-demand-n1-100", Path: filepath.Join(dir, "on-demand-n1-100"), Size: 10, Created: time.Unix(100, 0)},
		{Name: "backup.db", Path: filepath.Join(dir, "backup.db"), Size: 5, Created: time.Unix(150, 0)},
		{Name: "etcd-snapshot-n1-200", Path: filepath.Join(dir, "etcd-snapshot-n1-200"), Size: 20, Created: time.Unix(200, 0)},
		{Name: "on-demand-n1-300", Path: filepath.Join(dir, "on-demand-n1-300"), Size: 30, Created: time.Unix(300, 0)},
	}
	if len(got) != len(want) {
		t.Fatalf("List = %v, want %v", names(got), names(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].Path != want[i].Path || got[i].Size != want[i].Size || !got[i].Created.Equal(want[i].Created) {
			t.Errorf("List[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}

	deleted, err := Prune(dir, "on-demand-n1", 1)
	if err != nil || !reflect.DeepEqual(names(deleted), []string{"on-demand-n1-100"}) {
		t.Fatalf("Prune = %v, %v", names(deleted), err)
	}
	if err := Delete(dir, "on-demand-n1-300", "missing", "../x"); err == nil {
		t.Fatal("Delete of a missing and an outside name succeeded")
	}
	// The existing one went, with its sidecar, despite the others.
	for _, n := range []string{"on-demand-n1-300", "on-demand-n1-300.sha256", "on-demand-n1-100"} {
		if _, err := os.Stat(filepath.Join(dir, n)); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", n, err)
		}
	}
	got, _ = List(dir)
	if want := []string{"backup.db", "etcd-snapshot-n1-200"}; !reflect.DeepEqual(names(got), want) {
		t.Errorf("left %v, want %v", names(got), want)
	}
}

// The hasher must give the same sums however the stream is cut.
func TestHasherChunking(t *testing.T) {
	db := bytes.Repeat([]byte("0123456789abcdef"), 64) // 1024 bytes: two sectors
	sum := sha256.Sum256(db)
	file := append(append([]byte{}, db...), sum[:]...)
	whole := sha256.Sum256(file)
	for _, chunk := range []int{1, 7, 31, 32, 33, 100, 512, 4096} {
		h := newHasher()
		for i := 0; i < len(file); i += chunk {
			h.Write(file[i:min(i+chunk, len(file))])
		}
		if err := h.checkEtcdHash(); err != nil {
			t.Errorf("chunks of %d: %v", chunk, err)
		}
		if !bytes.Equal(h.whole.Sum(nil), whole[:]) {
			t.Errorf("chunks of %d: whole-file sum differs", chunk)
		}
	}
	bad := append([]byte{}, file...)
	bad[10] ^= 1
	h := newHasher()
	h.Write(bad)
	if err := h.checkEtcdHash(); err == nil {
		t.Error("a flipped byte passed etcd's hash")
	}
	h = newHasher()
	h.Write(file[:len(file)-1])
	if err := h.checkEtcdHash(); err == nil {
		t.Error("a truncated file passed etcd's hash")
	}
}
