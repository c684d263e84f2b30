package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/orca-project/orca/internal/storage/embedded"
)

// membersFile keeps, in the member's data dir, the client URLs of the
// cluster's members as last seen: a stopped server reaches the others
// through them to take its member out (orca server --remove).
const membersFile = "members.json"

// recordMembers writes the members' client URLs to the member's data
// dir now and whenever they change, until ctx ends.
func recordMembers(ctx context.Context, log *slog.Logger, local *clientv3.Client, dir string) {
	var last []string
	for {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		members, err := embedded.Members(lctx, local)
		cancel()
		if err == nil {
			var urls []string
			for _, m := range members {
				urls = append(urls, m.ClientURLs...)
			}
			slices.Sort(urls)
			if !slices.Equal(urls, last) {
				if b, err := json.Marshal(urls); err == nil {
					if err := os.WriteFile(filepath.Join(dir, membersFile), b, 0o600); err != nil {
						log.Warn("record the etcd members", "err", err)
					} else {
						last = urls
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Second):
		}
	}
}

// RemovedMessage is what `orca server --remove` says when done.
const RemovedMessage = "Start the server again with --server and --token to rejoin, or uninstall it."

// RemoveMember is `orca server --remove`: the stopped server on
// opts.DataDir takes its etcd member out of the cluster, through the
// other members, and moves its etcd data aside so that it cannot come
// back as a member the cluster no longer counts.
func RemoveMember(ctx context.Context, opts Options) error {
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if len(opts.EtcdEndpoints) > 0 {
		return errors.New("--remove takes an embedded etcd member out of its cluster; with --etcd-endpoints, manage the external cluster with its own tools")
	}
	dir := etcdDataDir(opts.DataDir)
	if !embedded.HasData(dir) {
		return fmt.Errorf("no etcd member in %s", dir)
	}
	if c, err := net.DialTimeout("unix", filepath.Join(dir, "client.sock"), time.Second); err == nil {
		c.Close()
		return fmt.Errorf("the server on %s is running: stop it before --remove", opts.DataDir)
	}
	name, err := memberName(dir)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, membersFile))
	if err != nil {
		return fmt.Errorf("the other members' addresses (%s, written while the server runs): %w", membersFile, err)
	}
	var urls []string
	if err := json.Unmarshal(b, &urls); err != nil {
		return fmt.Errorf("%s: %w", membersFile, err)
	}
	tc, err := etcdTLSInfo(filepath.Join(opts.DataDir, "tls")).ClientConfig()
	if err != nil {
		return fmt.Errorf("etcd client certificate: %w", err)
	}
	urls = slices.DeleteFunc(urls, func(u string) bool { return !strings.HasPrefix(u, "https://") })
	if len(urls) == 0 {
		return errors.New("this server's member is the cluster's only one on the network: there is no other member to remove it through")
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: urls, DialTimeout: 5 * time.Second, TLS: tc, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("etcd client: %w", err)
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	members, err := embedded.Members(rctx, c)
	if err != nil {
		return fmt.Errorf("reach the other members at %v: %w", urls, err)
	}
	if len(members) == 1 && members[0].Name == name {
		return errors.New("this server's member is the cluster's only one: removing it would remove the cluster")
	}
	removed, err := embedded.Remove(rctx, c, name)
	if err != nil {
		return err
	}
	if !removed {
		fmt.Fprintf(opts.Out, "orca: etcd member %s was not in the cluster any more\n", name)
	} else {
		fmt.Fprintf(opts.Out, "orca: removed etcd member %s from the cluster\n", name)
	}
	old := filepath.Join(opts.DataDir, fmt.Sprintf("etcd-removed-%d", time.Now().Unix()))
	if err := os.Rename(dir, old); err != nil {
		return fmt.Errorf("move %s aside: %w", dir, err)
	}
	fmt.Fprintf(opts.Out, "orca: its data moved to %s\n", old)
	fmt.Fprintln(opts.Out, RemovedMessage)
	return nil
}
