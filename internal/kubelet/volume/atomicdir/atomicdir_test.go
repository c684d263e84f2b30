package atomicdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func versions(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "..") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteLayout(t *testing.T) {
	dir := t.TempDir()
	stamp := time.Date(2026, 11, 22, 5, 31, 13, 0, time.UTC)
	changed, err := Write(dir, map[string]File{
		"a":          {Data: []byte("A"), Mode: 0o644},
		"sub/b":      {Data: []byte("B"), Mode: 0o400},
		"./sub/../c": {Data: []byte("C"), Mode: 0o600}, // cleaned to "c"
	}, Options{Now: func() time.Time { return stamp }})
	if err == nil {
		t.Fatal("a path with '..' was accepted")
	}
	if changed {
		t.Fatal("a refused payload reported a change")
	}

	changed, err = Write(dir, map[string]File{
		"a":     {Data: []byte("A"), Mode: 0o644},
		"sub/b": {Data: []byte("B"), Mode: 0o400},
	}, Options{Now: func() time.Time { return stamp }})
	if err != nil || !changed {
		t.Fatalf("Write = %v, %v", changed, err)
	}
	vs := versions(t, dir)
	if len(vs) != 1 || !strings.HasPrefix(vs[0], "..2026_11_22_05_31_13.") {
		t.Fatalf("version directories = %v", vs)
	}
	if target, _ := os.Readlink(filepath.Join(dir, "..data")); target != vs[0] {
		t.Fatalf("..data -> %q, want %q", target, vs[0])
	}
	for name, want := range map[string]string{"a": "..data/a", "sub": "..data/sub"} {
		if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != want {
			t.Errorf("%s -> %q, %v; want %q", name, got, err, want)
		}
	}
	if got := read(t, filepath.Join(dir, "sub/b")); got != "B" {
		t.Errorf("sub/b = %q", got)
	}
	info, err := os.Stat(filepath.Join(dir, "sub/b"))
	if err != nil || info.Mode().Perm() != 0o400 {
		t.Errorf("sub/b mode = %v, %v", info.Mode(), err)
	}
}

func TestWriteUnchangedWritesNothing(t *testing.T) {
	dir := t.TempDir()
	payload := map[string]File{"a": {Data: []byte("A"), Mode: 0o644}}
	if _, err := Write(dir, payload, Options{}); err != nil {
		t.Fatal(err)
	}
	before := versions(t, dir)
	changed, err := Write(dir, payload, Options{})
	if err != nil || changed {
		t.Fatalf("Write = %v, %v; want no change", changed, err)
	}
	if after := versions(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("versions %v became %v", before, after)
	}
	// A mode change is a change.
	changed, err = Write(dir, map[string]File{"a": {Data: []byte("A"), Mode: 0o600}}, Options{})
	if err != nil || !changed {
		t.Fatalf("mode change: Write = %v, %v", changed, err)
	}
}

func TestUpdateKeepsPreviousVersionForReaders(t *testing.T) {
	dir := t.TempDir()
	write := func(v string, keys ...string) {
		t.Helper()
		p := map[string]File{}
		for _, k := range keys {
			p[k] = File{Data: []byte(v), Mode: 0o644}
		}
		if changed, err := Write(dir, p, Options{}); err != nil || !changed {
			t.Fatalf("Write(%s) = %v, %v", v, changed, err)
		}
	}
	write("1", "a", "b")
	old, _ := os.Readlink(filepath.Join(dir, "..data"))

	write("2", "a", "c")
	// A reader that resolved ..data before the swap still sees version 1 whole.
	if a, b := read(t, filepath.Join(dir, old, "a")), read(t, filepath.Join(dir, old, "b")); a != "1" || b != "1" {
		t.Fatalf("old version reads a=%q b=%q", a, b)
	}
	if got := read(t, filepath.Join(dir, "a")); got != "2" {
		t.Fatalf("a = %q after update", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "b")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("b is still visible: %v", err)
	}
	if got := read(t, filepath.Join(dir, "c")); got != "2" {
		t.Fatalf("c = %q", got)
	}

	write("3", "a")
	if _, err := os.Stat(filepath.Join(dir, old)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("version before last is still there: %v", err)
	}
	if n := len(versions(t, dir)); n != 2 {
		t.Fatalf("%d version directories, want current and previous", n)
	}
}

func TestConcurrentReaderNeverSeesMixedVersion(t *testing.T) {
	dir := t.TempDir()
	payload := func(i int) map[string]File {
		v := []byte(fmt.Sprint(i))
		return map[string]File{"a": {Data: v, Mode: 0o644}, "b": {Data: v, Mode: 0o644}}
	}
	if _, err := Write(dir, payload(0), Options{}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mixed []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			v, err := os.Readlink(filepath.Join(dir, "..data"))
			if err != nil {
				mixed = append(mixed, "readlink: "+err.Error())
				return
			}
			a, errA := os.ReadFile(filepath.Join(dir, v, "a"))
			b, errB := os.ReadFile(filepath.Join(dir, v, "b"))
			if errA != nil || errB != nil {
				continue // two swaps overtook this reader; it resolves again
			}
			if string(a) != string(b) {
				mixed = append(mixed, fmt.Sprintf("a=%s b=%s", a, b))
			}
		}
	}()
	for i := 1; i <= 200; i++ {
		if _, err := Write(dir, payload(i), Options{}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if len(mixed) > 0 {
		t.Fatalf("reader saw mixed versions: %v", mixed[:min(len(mixed), 5)])
	}
}

func TestWriteFSGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing a file's group needs root")
	}
	dir := t.TempDir()
	group := int64(4321)
	if _, err := Write(dir, map[string]File{"k/v": {Data: []byte("x"), Mode: 0o400}}, Options{FSGroup: &group}); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, "k/v"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o440 || info.Sys().(*syscall.Stat_t).Gid != 4321 {
		t.Fatalf("k/v mode %v gid %d; want 0440 and group 4321", info.Mode().Perm(), info.Sys().(*syscall.Stat_t).Gid)
	}
	sub, _ := os.Stat(filepath.Join(dir, "k"))
	if sub.Mode()&fs.ModeSetgid == 0 || sub.Sys().(*syscall.Stat_t).Gid != 4321 {
		t.Fatalf("directory k mode %v gid %d", sub.Mode(), sub.Sys().(*syscall.Stat_t).Gid)
	}
	changed, err := Write(dir, map[string]File{"k/v": {Data: []byte("x"), Mode: 0o400}}, Options{FSGroup: &group})
	if err != nil || changed {
		t.Fatalf("same payload with fsGroup: Write = %v, %v", changed, err)
	}
}

func TestValidatePath(t *testing.T) {
	tests := []struct {
		path, wantErr string
	}{
		{path: "key"},
		{path: "dir/key"},
		{path: "..key/x", wantErr: "invalid path: must not start with '..': ..key/x"},
		{path: "", wantErr: `invalid path: must not be empty: ""`},
		{path: "/etc/passwd", wantErr: "invalid path: must be relative path: /etc/passwd"},
		{path: "a/../../b", wantErr: "invalid path: must not contain '..': a/../../b"},
		{path: "..", wantErr: "invalid path: must not contain '..': .."},
		{path: strings.Repeat("x", 256), wantErr: "invalid path: filenames must be less than or equal to 255 characters"},
		{path: strings.Repeat("x/", 2049), wantErr: "invalid path: must be less than or equal to 4096 characters"},
	}
	for _, tt := range tests {
		err := ValidatePath(tt.path)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.wantErr {
			t.Errorf("ValidatePath(%.20q) = %q, want %q", tt.path, got, tt.wantErr)
		}
	}
}
