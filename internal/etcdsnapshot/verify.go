package etcdsnapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strings"
)

// CorruptedError says a snapshot's contents do not match a hash of them.
type CorruptedError struct {
	Path   string
	Reason string
}

func (e *CorruptedError) Error() string {
	return fmt.Sprintf("snapshot %s is corrupted: %s", e.Path, e.Reason)
}

// Verify checks a snapshot against the sha256 in its sidecar, when it has
// one, and against the hash etcd appended to the database. Both are
// computed in one read of the file. A snapshot without a sidecar (taken by
// etcdctl, say) is checked on etcd's hash alone.
func Verify(path string) error {
	want, err := readChecksum(path + checksumSuffix)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open snapshot: %w", err)
	}
	defer f.Close()
	h := newHasher()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("read snapshot %s: %w", path, err)
	}
	if want != nil && !bytes.Equal(h.whole.Sum(nil), want) {
		return &CorruptedError{Path: path, Reason: "checksum mismatch"}
	}
	if err := h.checkEtcdHash(); err != nil {
		return &CorruptedError{Path: path, Reason: err.Error()}
	}
	return nil
}

// readChecksum reads a sidecar: the hex sha256, then (ignored) the file's
// name. A missing sidecar gives nil.
func readChecksum(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read snapshot checksum: %w", err)
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return nil, fmt.Errorf("checksum file %s is empty", path)
	}
	sum, err := hex.DecodeString(fields[0])
	if err != nil || len(sum) != sha256.Size {
		return nil, fmt.Errorf("checksum file %s does not hold a sha256", path)
	}
	return sum, nil
}

// hasher takes a snapshot as it is written or read: the sha256 of the
// whole file (the sidecar's), and the sha256 of all but its last 32 bytes
// (the database, which etcd's appended hash covers), holding back the last
// 32 bytes seen so that neither needs a second pass.
type hasher struct {
	whole, body hash.Hash
	tail        []byte
	n           int64
}

func newHasher() *hasher {
	return &hasher{whole: sha256.New(), body: sha256.New(), tail: make([]byte, 0, 2*sha256.Size)}
}

func (h *hasher) Write(p []byte) (int, error) {
	h.whole.Write(p)
	h.n += int64(len(p))
	if len(p) >= sha256.Size {
		h.body.Write(h.tail)
		h.body.Write(p[:len(p)-sha256.Size])
		h.tail = append(h.tail[:0], p[len(p)-sha256.Size:]...)
		return len(p), nil
	}
	h.tail = append(h.tail, p...)
	if extra := len(h.tail) - sha256.Size; extra > 0 {
		h.body.Write(h.tail[:extra])
		h.tail = append(h.tail[:0], h.tail[extra:]...)
	}
	return len(p), nil
}

// checkEtcdHash checks the hash etcd appends to the database it streams.
// etcd's own tools recognise a hash by the size: a database is a whole
// number of 512-byte sectors, so 32 bytes over means a hash follows.
func (h *hasher) checkEtcdHash() error {
	if h.n%512 != sha256.Size {
		return fmt.Errorf("no etcd integrity hash at the end (%d bytes: truncated, or not an etcd snapshot)", h.n)
	}
	if !bytes.Equal(h.body.Sum(nil), h.tail) {
		return errors.New("etcd's integrity hash does not match the database")
	}
	return nil
}
