// Package etcdsnapshot saves etcd's key space to files and restores a
// fresh data directory from one, as k3s's `etcd-snapshot` and
// `--cluster-reset-restore-path` do.
//
// A snapshot is what etcd's maintenance API streams: the bbolt database
// with etcd's own sha256 of it appended. Beside it a sidecar (FILE.sha256,
// sha256sum's format) holds the sha256 of the whole file, so that a copy
// damaged anywhere, hash included, is refused before anything is written.
// Restoring uses etcd's own restore code, which keeps every key with its
// revisions: Kubernetes objects keep their resourceVersions.
package etcdsnapshot

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Snapshot is one file in a snapshot directory.
type Snapshot struct {
	// Name is the file's name, e.g. on-demand-node1-1767225600.
	Name string
	// Path is the file's path.
	Path string
	// Size is the file's size in bytes.
	Size int64
	// Created is the time the name ends with, or the file's mtime for a
	// name without one.
	Created time.Time
}

// Save streams a snapshot of the member client talks to into
// DIR/NAME-NODE-UNIXSECONDS. The stream goes to a hidden temporary file,
// which takes the snapshot's name only once complete and checked against
// etcd's hash, so that an interrupted save never leaves a file that looks
// like a snapshot. An existing snapshot of the same name is not replaced.
func Save(ctx context.Context, client *clientv3.Client, dir, name, nodeName string, now time.Time) (Snapshot, error) {
	if err := checkName("snapshot name", name); err != nil {
		return Snapshot{}, err
	}
	if err := checkName("node name", nodeName); err != nil {
		return Snapshot{}, err
	}
	file := FileName(name, nodeName, now)
	path := filepath.Join(dir, file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Snapshot{}, fmt.Errorf("create snapshot dir: %w", err)
	}
	if _, err := os.Lstat(path); err == nil {
		return Snapshot{}, fmt.Errorf("snapshot %s already exists", path)
	}
	// CreateTemp opens with mode 0600: the database holds every Secret.
	tmp, err := os.CreateTemp(dir, "."+file+".*.part")
	if err != nil {
		return Snapshot{}, fmt.Errorf("create snapshot file: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	resp, err := client.SnapshotWithVersion(ctx)
	if err != nil {
		return Snapshot{}, fmt.Errorf("request snapshot from etcd: %w", err)
	}
	defer resp.Snapshot.Close()
	h := newHasher()
	size, err := io.Copy(io.MultiWriter(tmp, h), resp.Snapshot)
	if err != nil {
		return Snapshot{}, fmt.Errorf("receive snapshot from etcd: %w", err)
	}
	if err := h.checkEtcdHash(); err != nil {
		return Snapshot{}, fmt.Errorf("snapshot stream from etcd: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return Snapshot{}, fmt.Errorf("sync snapshot file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return Snapshot{}, fmt.Errorf("close snapshot file: %w", err)
	}
	if err := publish(tmp.Name(), path); err != nil {
		return Snapshot{}, err
	}
	done = true
	// The snapshot is complete before its sidecar exists; Verify accepts
	// a snapshot without one on etcd's own hash, so a crash in between
	// loses nothing.
	sum := fmt.Sprintf("%s  %s\n", hex.EncodeToString(h.whole.Sum(nil)), file)
	if err := writeFileAtomic(path+checksumSuffix, []byte(sum)); err != nil {
		return Snapshot{}, err
	}
	if err := syncDir(dir); err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Name: file, Path: path, Size: size, Created: time.Unix(now.Unix(), 0)}, nil
}

// publish gives a finished temporary file its final name. A hard link
// fails when the name is taken, where a rename would silently replace
// another snapshot; file systems without hard links get the rename.
func publish(tmp, path string) error {
	err := os.Link(tmp, path)
	switch {
	case err == nil:
		os.Remove(tmp)
		return nil
	case errors.Is(err, fs.ErrExist):
		os.Remove(tmp)
		return fmt.Errorf("snapshot %s already exists", path)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("name snapshot file: %w", err)
	}
	return nil
}

// List returns the snapshots in dir, oldest first. A missing directory
// holds none. Checksum sidecars and unfinished (hidden) files are not
// snapshots.
func List(dir string) ([]Snapshot, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var out []Snapshot
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(n, ".") || strings.HasSuffix(n, checksumSuffix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			// Deleted while listing.
			continue
		}
		created, ok := createdFromName(n)
		if !ok {
			created = info.ModTime()
		}
		out = append(out, Snapshot{Name: n, Path: filepath.Join(dir, n), Size: info.Size(), Created: created})
	}
	sortByAge(out)
	return out, nil
}

// Delete removes the named snapshots and their sidecars. It goes on past
// a name it cannot remove and reports every failure.
func Delete(dir string, names ...string) error {
	var errs []error
	for _, n := range names {
		if err := checkName("snapshot name", n); err != nil || strings.HasSuffix(n, checksumSuffix) {
			errs = append(errs, fmt.Errorf("%q is not a snapshot name", n))
			continue
		}
		path := filepath.Join(dir, n)
		if err := os.Remove(path); errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("snapshot %s not found in %s", n, dir))
			continue
		} else if err != nil {
			errs = append(errs, fmt.Errorf("delete snapshot: %w", err))
			continue
		}
		if err := os.Remove(path + checksumSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("delete checksum of %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}

// Prune deletes the oldest of the snapshots named PREFIX-... beyond the
// newest retention, and returns what it deleted. A retention below 1
// deletes nothing.
func Prune(dir, prefix string, retention int) ([]Snapshot, error) {
	all, err := List(dir)
	if err != nil {
		return nil, err
	}
	var deleted []Snapshot
	for _, s := range toPrune(all, prefix, retention) {
		if err := Delete(dir, s.Name); err != nil {
			return deleted, fmt.Errorf("prune snapshots: %w", err)
		}
		deleted = append(deleted, s)
	}
	return deleted, nil
}

func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.part")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// syncDir makes the new names in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync snapshot dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync snapshot dir: %w", err)
	}
	return nil
}
