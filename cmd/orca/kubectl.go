package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
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

// runKubectl runs the real kubectl with args. Without KUBECONFIG and
// without ~/.kube/config it uses the admin kubeconfig that `orca server`
// writes into its data directory.
func runKubectl(args []string) int {
	if os.Getenv("KUBECONFIG") == "" {
		dir := os.Getenv("ORCA_DATA_DIR")
		if dir == "" {
			dir = defaultDataDir()
		}
		if kc := filepath.Join(dir, "kubeconfig"); fileExists(kc) {
			os.Setenv("KUBECONFIG", kc)
		}
	}
	os.Args = append([]string{"kubectl"}, args...)
	cmd := kubectlcmd.NewDefaultKubectlCommand()
	return cli.Run(cmd)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
