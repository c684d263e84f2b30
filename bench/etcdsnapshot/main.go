// Command etcdsnapshot times Orca's etcd snapshots: Save of an embedded
// member holding -keys small keys, through the member's unix client
// socket as `orca etcd-snapshot save` does, Verify, and Restore into a new
// data directory; and, in the same run and against the same member,
// etcdctl's own `snapshot save` when etcdctl is installed (Debian's
// etcd-client), as the baseline. Save streams the same bytes etcdctl
// does and adds two sha256 passes over them, so the ratio says what those
// cost.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/orca-project/orca/internal/etcdsnapshot"
	"github.com/orca-project/orca/internal/storage/embedded"
)

func main() {
	var (
		keys   = flag.Int("keys", 100000, "keys written before the snapshots")
		size   = flag.Int("value-size", 128, "bytes per value")
		rounds = flag.Int("rounds", 5, "snapshots of each kind; medians are reported")
	)
	flag.Parse()
	if err := run(*keys, *size, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "bench/etcdsnapshot:", err)
		os.Exit(1)
	}
}

func run(keys, size, rounds int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "orca-bench-snapshot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	member, err := embedded.Start(ctx, embedded.Config{Dir: filepath.Join(dir, "etcd")})
	if err != nil {
		return err
	}
	defer member.Close()

	start := time.Now()
	if err := fill(ctx, member.Client(), keys, size); err != nil {
		return err
	}
	fmt.Printf("wrote %d keys of %d bytes in %v\n", keys, size, time.Since(start).Round(time.Millisecond))

	endpoint := "unix://" + filepath.Join(dir, "etcd", "client.sock")
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer client.Close()
	st, err := client.Status(ctx, endpoint)
	if err != nil {
		return err
	}
	fmt.Printf("database %.1f MiB (%.1f MiB in use), revision %d\n", mib(st.DbSize), mib(st.DbSizeInUse), st.Header.Revision)

	etcdctl, _ := exec.LookPath("etcdctl")
	var save, verify, restore, baseline, startup []time.Duration
	var last etcdsnapshot.Snapshot
	snapDir := filepath.Join(dir, "snapshots")
	for r := 0; r < rounds; r++ {
		// Alternate which goes first, so that neither always finds the
		// page cache warmed by the other.
		ours := func() error {
			t := time.Now()
			s, err := etcdsnapshot.Save(ctx, client, snapDir, "bench", "node", time.Unix(int64(1+r), 0))
			if err != nil {
				return err
			}
			save = append(save, time.Since(t))
			last = s
			return nil
		}
		theirs := func() error {
			if etcdctl == "" {
				return nil
			}
			out := filepath.Join(dir, fmt.Sprintf("etcdctl-%d.db", r))
			cmd := exec.Command(etcdctl, "--endpoints", endpoint, "snapshot", "save", out)
			cmd.Env = append(os.Environ(), "ETCDCTL_API=3")
			t := time.Now()
			if msg, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("etcdctl snapshot save: %v: %s", err, msg)
			}
			baseline = append(baseline, time.Since(t))
			// What starting the program costs, connection aside: part of
			// etcdctl's figure that Save, in process, does not pay.
			t = time.Now()
			if err := exec.Command(etcdctl, "version").Run(); err != nil {
				return fmt.Errorf("etcdctl version: %w", err)
			}
			startup = append(startup, time.Since(t))
			return os.Remove(out)
		}
		first, second := ours, theirs
		if r%2 == 1 {
			first, second = theirs, ours
		}
		if err := first(); err != nil {
			return err
		}
		if err := second(); err != nil {
			return err
		}

		t := time.Now()
		if err := etcdsnapshot.Verify(last.Path); err != nil {
			return err
		}
		verify = append(verify, time.Since(t))
		target := filepath.Join(dir, fmt.Sprintf("restored-%d", r))
		t = time.Now()
		if err := etcdsnapshot.Restore(last.Path, target, "", ""); err != nil {
			return err
		}
		restore = append(restore, time.Since(t))
		if r < rounds-1 {
			os.RemoveAll(target)
		}
	}

	// The last restore must hold what was written.
	restored, err := embedded.Start(ctx, embedded.Config{Dir: filepath.Join(dir, fmt.Sprintf("restored-%d", rounds-1))})
	if err != nil {
		return err
	}
	resp, err := restored.Client().Get(ctx, "/bench/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	restored.Close()
	if err != nil {
		return err
	}
	if resp.Count != int64(keys) || resp.Header.Revision != st.Header.Revision {
		return fmt.Errorf("restored member holds %d keys at revision %d, want %d at %d", resp.Count, resp.Header.Revision, keys, st.Header.Revision)
	}

	fmt.Printf("snapshot file %.1f MiB; medians of %d rounds\n", mib(last.Size), rounds)
	fmt.Printf("orca Save    %8v  (%.0f MiB/s)\n", median(save), mib(last.Size)/median(save).Seconds())
	fmt.Printf("orca Verify  %8v\n", median(verify))
	fmt.Printf("orca Restore %8v  (verify included; restored member checked: %d keys, revision %d)\n", median(restore), resp.Count, resp.Header.Revision)
	if etcdctl == "" {
		fmt.Println("etcdctl not installed: no baseline (Debian's etcd-client package provides it)")
		return nil
	}
	fmt.Printf("etcdctl snapshot save %8v  (%s)\n", median(baseline), etcdctl)
	fmt.Printf("etcdctl version       %8v  (start-up alone)\n", median(startup))
	fmt.Printf("ratio orca Save / etcdctl snapshot save: %.2f (%.2f against etcdctl less its start-up)\n",
		median(save).Seconds()/median(baseline).Seconds(), median(save).Seconds()/(median(baseline)-median(startup)).Seconds())
	return nil
}

// fill writes keys in transactions of 100 (etcd's default limit is 128
// operations), so that the set is built in seconds.
func fill(ctx context.Context, c *clientv3.Client, keys, size int) error {
	value := string(make([]byte, size))
	for i := 0; i < keys; i += 100 {
		ops := make([]clientv3.Op, 0, 100)
		for j := i; j < min(i+100, keys); j++ {
			ops = append(ops, clientv3.OpPut(fmt.Sprintf("/bench/%08d", j), value))
		}
		if _, err := c.Txn(ctx).Then(ops...).Commit(); err != nil {
			return err
		}
	}
	return nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Millisecond)
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
