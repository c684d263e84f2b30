package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orca-project/orca/internal/version"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Orca's version and the Kubernetes API version it serves",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "orca %s (Kubernetes API %s, commit %s)\n", version.Orca, version.KubernetesGitVersion(), version.GitCommit)
		},
	}
}
