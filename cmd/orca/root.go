package main

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "orca",
		Short:         "Orca: a Kubernetes-compatible container orchestrator in one binary",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServerCommand(), newAgentCommand(), newControllerManagerCommand(), newSchedulerCommand(), newKubectlCommand(), newVersionCommand(), newImagesCommand(), newSecretsEncryptCommand(), newEtcdSnapshotCommand(), newTokenCommand(), newExplainCommand(), newConsoleCommand(), newKillallCommand(), newInstallCommand(), newUninstallCommand())
	return root
}

// defaultDataDir is where Orca keeps its state unless told otherwise:
// /var/lib/orca for root, ~/.orca for everyone else.
func defaultDataDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/orca"
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".orca")
	}
	return ".orca"
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
	// client-go logs through klog (leader election, event broadcasting);
	// sending it to the same handler keeps one structured format.
	klog.SetSlogLogger(log)
	return log
}
