package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/orca-project/orca/internal/kubectl"
)

func newKubectlCommand() *cobra.Command {
	return &cobra.Command{
		Use:                "kubectl",
		Short:              "Run kubectl against the cluster (the admin kubeconfig is used when KUBECONFIG is unset)",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			os.Exit(runKubectl(args))
			return nil
		},
	}
}

// runKubectl runs kubectl; the data directory is ORCA_DATA_DIR or the
// server's default, whose kubeconfig is used when KUBECONFIG is unset.
func runKubectl(args []string) int {
	dir := os.Getenv("ORCA_DATA_DIR")
	if dir == "" {
		dir = defaultDataDir()
	}
	return kubectl.Run(args, dir)
}
