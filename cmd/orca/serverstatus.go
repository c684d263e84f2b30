package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/grpclog"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/orca-project/orca/internal/server"
)

// newServerStatusCommand is `orca server status`: the embedded etcd
// cluster as the server on this machine sees it, and its snapshots.
func newServerStatusCommand() *cobra.Command {
	var dataDir, snapshotDir string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the etcd members (leader, database size, health) and the last snapshot of the server on this machine",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			quietGRPC()
			st, err := server.Status(cmd.Context(), dataDir, snapshotDir)
			if err != nil {
				return err
			}
			if err := printServerStatus(cmd.OutOrStdout(), st); err != nil {
				return err
			}
			if !st.Healthy() {
				return fmt.Errorf("the etcd cluster has no quorum: fewer than half of its voting members answer")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", defaultDataDir(), "data directory of the server")
	cmd.Flags().StringVar(&snapshotDir, "etcd-snapshot-dir", "", "directory of the snapshots (${data-dir}/snapshots when empty)")
	return cmd
}

func printServerStatus(w io.Writer, st *server.ClusterStatus) error {
	up, voters := 0, 0
	for _, m := range st.Members {
		if !m.Learner {
			voters++
			if m.Err == "" {
				up++
			}
		}
	}
	health := "healthy"
	if !st.Healthy() {
		health = "NO QUORUM"
	}
	fmt.Fprintf(w, "etcd: %s, %d of %d voting members answer\n\n", health, up, voters)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprint(tw, "NAME\tID\tROLE\tPEER URL\tCLIENT URL\tDB SIZE\tRAFT INDEX\tERROR\n")
	for _, m := range st.Members {
		name := m.Name
		if name == "" {
			name = "(unstarted)"
		}
		if m.ID == st.Self {
			name += " (this server)"
		}
		role := "follower"
		switch {
		case m.Learner:
			role = "learner"
		case m.Leader:
			role = "leader"
		case m.Err != "":
			role = "-"
		}
		size, index := "-", "-"
		if m.Err == "" {
			size = resource.NewQuantity(m.DBSize, resource.BinarySI).String()
			index = fmt.Sprint(m.RaftIndex)
		}
		fmt.Fprintf(tw, "%s\t%x\t%s\t%s\t%s\t%s\t%s\t%s\n", name, m.ID, role, first(m.PeerURLs), first(m.ClientURLs), size, index, m.Err)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n := len(st.Snapshots); n == 0 {
		fmt.Fprintf(w, "\nno snapshots in %s\n", st.SnapshotDir)
	} else {
		last := st.Snapshots[n-1]
		fmt.Fprintf(w, "\nlast snapshot: %s, %s ago (%d bytes); %d kept in %s\n", last.Name, time.Since(last.Created).Round(time.Second), last.Size, n, st.SnapshotDir)
	}
	return nil
}

// quietGRPC silences gRPC's log: a member that does not answer is
// reported by the command; gRPC's own retries of it would drown that.
func quietGRPC() {
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
}

func first(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return s[0]
}
