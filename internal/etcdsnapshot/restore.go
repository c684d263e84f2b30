package etcdsnapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
)

// DefaultMemberName is the name embed gives a member that is not named.
const DefaultMemberName = "default"

// Restore writes a fresh single-member etcd data directory at dataDir from
// a snapshot, with etcd's own restore code: the database is kept as it is,
// so every key keeps its revisions and the store its current revision;
// only the membership is replaced by one member, memberName at peerURL
// (DefaultMemberName and a unix socket in dataDir when empty, as the
// embedded member of internal/storage/embedded would be). The WAL goes to
// dataDir/wal, where that member keeps it.
//
// The snapshot is verified first: a corrupted one is refused with nothing
// written. dataDir must not exist or be empty; the data is written beside
// it and renamed into place, so that a restore that fails half-way leaves
// no half-restored directory behind.
func Restore(path, dataDir, memberName, peerURL string) error {
	if err := Verify(path); err != nil {
		return err
	}
	if memberName == "" {
		memberName = DefaultMemberName
	}
	if peerURL == "" {
		peerURL = "unix://" + filepath.Join(dataDir, "peer.sock")
	}
	entries, err := os.ReadDir(dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("restore into %s: %w", dataDir, err)
	case len(entries) > 0:
		return fmt.Errorf("restore into %s: the directory is not empty", dataDir)
	}
	parent := filepath.Dir(dataDir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("restore into %s: %w", dataDir, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dataDir)+".restoring-")
	if err != nil {
		return fmt.Errorf("restore into %s: %w", dataDir, err)
	}
	defer os.RemoveAll(tmp)
	err = snapshot.NewV3(zap.NewNop()).Restore(snapshot.RestoreConfig{
		SnapshotPath:        path,
		Name:                memberName,
		OutputDataDir:       tmp,
		OutputWALDir:        filepath.Join(tmp, "wal"),
		PeerURLs:            []string{peerURL},
		InitialCluster:      memberName + "=" + peerURL,
		InitialClusterToken: "etcd-cluster", // embed's default
	})
	if err != nil {
		return fmt.Errorf("restore snapshot %s: %w", path, err)
	}
	// An empty dataDir is in the way of the rename.
	if err := os.Remove(dataDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("restore into %s: %w", dataDir, err)
	}
	if err := os.Rename(tmp, dataDir); err != nil {
		return fmt.Errorf("restore into %s: %w", dataDir, err)
	}
	return syncDir(parent)
}
