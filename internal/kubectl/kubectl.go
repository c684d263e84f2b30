// Package kubectl runs the real kubectl (k8s.io/kubectl) linked into the
// orca binary, pointed at the local cluster's admin kubeconfig by default.
package kubectl

import (
	"os"
	"path/filepath"

	"k8s.io/component-base/cli"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
)

// Run runs kubectl with args and returns its exit code. When KUBECONFIG is
// unset and dataDir holds a kubeconfig written by `orca server`, that
// kubeconfig is used.
func Run(args []string, dataDir string) int {
	if os.Getenv("KUBECONFIG") == "" && dataDir != "" {
		if kc := filepath.Join(dataDir, "kubeconfig"); fileExists(kc) {
			os.Setenv("KUBECONFIG", kc)
		}
	}
	os.Args = append([]string{"kubectl"}, args...)
	return cli.Run(kubectlcmd.NewDefaultKubectlCommand())
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
