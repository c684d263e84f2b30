package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/orca-project/orca/internal/etcdsnapshot"
	"github.com/orca-project/orca/internal/server"
)

// newEtcdSnapshotCommand manages snapshots of the embedded etcd, as k3s's
// `etcd-snapshot`. Unlike `secrets-encrypt` it works on the data
// directory, not through the API: snapshots are files on the server's
// machine, and `save` talks to the running member's own client socket.
func newEtcdSnapshotCommand() *cobra.Command {
	var dataDir, snapshotDir, nodeName string
	cmd := &cobra.Command{
		Use:   "etcd-snapshot",
		Short: "Save, list, delete and prune snapshots of the server's embedded etcd",
		Long: `Snapshots of the embedded etcd, named NAME-NODE-UNIXSECONDS in the snapshot
directory (DATA_DIR/snapshots unless --etcd-snapshot-dir), each with a
sha256 checksum beside it (NAME.sha256). Restore one with
orca server --cluster-reset --cluster-reset-restore-path=FILE.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&dataDir, "data-dir", defaultDataDir(), "the server's data directory")
	pf.StringVar(&snapshotDir, "etcd-snapshot-dir", "", "directory of the snapshots (${data-dir}/snapshots when empty)")
	pf.StringVar(&nodeName, "node-name", "", "node name in snapshot names (the host name when empty)")
	dir := func() string { return server.SnapshotDir(dataDir, snapshotDir) }
	node := func() (string, error) {
		if nodeName != "" {
			return nodeName, nil
		}
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("node name: %w", err)
		}
		return h, nil
	}

	var name string
	save := &cobra.Command{
		Use:   "save",
		Short: "Take a snapshot now, through the running server's embedded etcd",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := node()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Minute)
			defer cancel()
			s, err := server.SaveSnapshot(ctx, dataDir, snapshotDir, name, n)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Snapshot %s saved to %s (%d bytes)\n", s.Name, s.Path, s.Size)
			return nil
		},
	}
	save.Flags().StringVar(&name, "name", etcdsnapshot.OnDemand, "name of the snapshot; the node name and a timestamp are appended")

	ls := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the snapshots, oldest first",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			snaps, err := etcdsnapshot.List(dir())
			if err != nil {
				return err
			}
			return printSnapshots(cmd.OutOrStdout(), snaps)
		},
	}

	del := &cobra.Command{
		Use:     "delete NAME...",
		Aliases: []string{"rm"},
		Short:   "Delete snapshots by name, with their checksum files",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var errs []error
			for _, n := range args {
				if err := etcdsnapshot.Delete(dir(), n); err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Deleted snapshot %s\n", n)
			}
			return errors.Join(errs...)
		},
	}

	var retention int
	var pruneName string
	prune := &cobra.Command{
		Use:   "prune",
		Short: "Delete the oldest snapshots of this node named --name beyond --retention",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := node()
			if err != nil {
				return err
			}
			pruned, err := etcdsnapshot.Prune(dir(), pruneName+"-"+n, retention)
			for _, s := range pruned {
				fmt.Fprintf(cmd.OutOrStdout(), "Pruned snapshot %s\n", s.Name)
			}
			return err
		},
	}
	prune.Flags().IntVar(&retention, "retention", server.DefaultEtcdSnapshotRetention, "number of snapshots to keep")
	prune.Flags().StringVar(&pruneName, "name", etcdsnapshot.OnDemand, "name the snapshots to prune were saved under")

	cmd.AddCommand(save, ls, del, prune)
	return cmd
}

// printSnapshots writes the table k3s's `etcd-snapshot ls` prints.
func printSnapshots(w io.Writer, snaps []etcdsnapshot.Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprint(tw, "Name\tLocation\tSize\tCreated\n")
	for _, s := range snaps {
		fmt.Fprintf(tw, "%s\tfile://%s\t%d\t%s\n", s.Name, s.Path, s.Size, s.Created.Format(time.RFC3339))
	}
	return tw.Flush()
}

// etcdSnapshotServerFlags are `orca server`'s flags for snapshots and
// cluster resets, k3s's names.
type etcdSnapshotServerFlags struct {
	clusterReset bool
	restorePath  string
}

func (r *etcdSnapshotServerFlags) register(f *pflag.FlagSet, opts *server.Options) {
	f.StringVar(&opts.EtcdSnapshotScheduleCron, "etcd-snapshot-schedule-cron", server.DefaultEtcdSnapshotScheduleCron, "snapshot interval time in cron spec, e.g. every 5 hours '0 */5 * * *'")
	f.IntVar(&opts.EtcdSnapshotRetention, "etcd-snapshot-retention", server.DefaultEtcdSnapshotRetention, "number of scheduled snapshots to retain")
	f.StringVar(&opts.EtcdSnapshotDir, "etcd-snapshot-dir", "", "directory to save snapshots to (${data-dir}/snapshots when empty)")
	f.BoolVar(&opts.EtcdDisableSnapshots, "etcd-disable-snapshots", false, "disable scheduled snapshots")
	f.BoolVar(&r.clusterReset, "cluster-reset", false, "make the embedded etcd the only member of a new cluster, then exit; with --cluster-reset-restore-path, from a snapshot")
	f.StringVar(&r.restorePath, "cluster-reset-restore-path", "", "snapshot to restore with --cluster-reset (the current etcd data is moved aside to ${data-dir}/etcd-old-TIMESTAMP)")
}

// run does the cluster reset when one was asked for; done says the
// command ends here.
func (r *etcdSnapshotServerFlags) run(ctx context.Context, opts server.Options) (done bool, err error) {
	if !r.clusterReset {
		if r.restorePath != "" {
			return true, errors.New("--cluster-reset-restore-path requires --cluster-reset")
		}
		return false, nil
	}
	return true, server.ResetCluster(ctx, opts, r.restorePath)
}
