package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/orca-project/orca/internal/etcdsnapshot"
	"github.com/orca-project/orca/internal/storage/embedded"
)

// MemberStatus is one etcd member as `orca server status` reports it.
type MemberStatus struct {
	embedded.Member
	// Leader: the member leads the cluster now.
	Leader bool
	// DBSize is the size of its database file in bytes; RaftIndex how
	// far its log goes.
	DBSize    int64
	RaftIndex uint64
	// Err is why it did not answer, empty when it did.
	Err string
}

// ClusterStatus is the embedded etcd cluster of a server's data dir and
// the snapshots the server keeps.
type ClusterStatus struct {
	Members []MemberStatus
	// Self is the ID of this data dir's member.
	Self uint64
	// Snapshots are the snapshots in the server's snapshot directory,
	// oldest first, and SnapshotDir that directory.
	Snapshots   []etcdsnapshot.Snapshot
	SnapshotDir string
}

// Status reads the cluster's membership through the member of the
// server running on dataDir (its client socket) and asks every member
// for its state, over TLS with the server's etcd certificate.
func Status(ctx context.Context, dataDir, snapshotDir string) (*ClusterStatus, error) {
	path := filepath.Join(etcdDataDir(dataDir), "client.sock")
	sock := "unix://" + path
	if c, err := net.DialTimeout("unix", path, time.Second); err != nil {
		return nil, fmt.Errorf("no etcd member answers on %s: the server on %s must be running, with the embedded etcd", path, dataDir)
	} else {
		c.Close()
	}
	local, err := clientv3.New(clientv3.Config{Endpoints: []string{sock}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	defer local.Close()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	self, err := local.Status(sctx, sock)
	if err != nil {
		return nil, fmt.Errorf("etcd member on %s: %w", dataDir, err)
	}
	members, err := embedded.Members(sctx, local)
	if err != nil {
		return nil, err
	}
	st := &ClusterStatus{Self: self.Header.MemberId, SnapshotDir: SnapshotDir(dataDir, snapshotDir)}
	// The other members answer on their network client URLs, to the
	// server's etcd certificate.
	var urls []string
	for _, m := range members {
		for _, u := range m.ClientURLs {
			if strings.HasPrefix(u, "https://") {
				urls = append(urls, u)
			}
		}
	}
	var remote *clientv3.Client
	if tc, err := etcdTLSInfo(filepath.Join(dataDir, "tls")).ClientConfig(); err == nil && len(urls) > 0 {
		remote, _ = clientv3.New(clientv3.Config{Endpoints: urls, DialTimeout: 3 * time.Second, TLS: tc, Logger: zap.NewNop()})
	}
	if remote != nil {
		defer remote.Close()
	}
	for _, m := range members {
		ms := MemberStatus{Member: m}
		var s *clientv3.StatusResponse
		switch {
		case m.ID == st.Self:
			s = self
		case m.Name == "":
			ms.Err = "not started"
		case remote == nil:
			ms.Err = "no network client URL to ask it at"
		default:
			ms.Err = "no answer"
			for _, u := range m.ClientURLs {
				c, cancel := context.WithTimeout(ctx, 3*time.Second)
				r, err := remote.Status(c, u)
				cancel()
				if err == nil {
					s, ms.Err = r, ""
					break
				}
				ms.Err = err.Error()
				if errors.Is(err, context.DeadlineExceeded) {
					ms.Err = "no answer within 3s"
				}
			}
		}
		if s != nil {
			ms.Leader, ms.DBSize, ms.RaftIndex = s.Leader == m.ID, s.DbSize, s.RaftIndex
		}
		st.Members = append(st.Members, ms)
	}
	sort.Slice(st.Members, func(i, j int) bool { return st.Members[i].Name < st.Members[j].Name })
	st.Snapshots, err = etcdsnapshot.List(st.SnapshotDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return st, nil
}

// Healthy reports whether a quorum of the voting members answers.
func (s *ClusterStatus) Healthy() bool {
	voters, up := 0, 0
	for _, m := range s.Members {
		if m.Learner {
			continue
		}
		voters++
		if m.Err == "" {
			up++
		}
	}
	return up > voters/2
}
