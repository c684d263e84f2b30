package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/orca-project/orca/internal/install"
	"github.com/orca-project/orca/internal/killall"
)

func newKillallCommand() *cobra.Command {
	var dataDir, bridge string
	cmd := &cobra.Command{
		Use:   "killall",
		Short: "Stop everything Orca runs from a data directory, pods included, and remove the node's network state",
		Long: "Stop the pods of the node's containerd through CRI, then kill (SIGKILL) the orca server or agent of the data directory, " +
			"its containerd and shims and every process under them; unmount what is mounted under the directory, remove the pods' " +
			"network namespaces, and delete the node's bridge and its veths, orca-svc, orca-nodes, the nftables tables ip orca-podnet, " +
			"ip orca-proxy and ip orca-netpol and the routes of protocol 199 in the current network namespace. The data stays. " +
			"Units `orca install` wrote for the directory are stopped first, so that systemd does not start them again.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if os.Geteuid() != 0 {
				return errors.New("orca killall must run as root: it kills processes, unmounts file systems and changes the network")
			}
			dir, err := killall.Dir(dataDir)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			m, err := install.ReadManifest("")
			if err != nil {
				return err
			}
			stopUnits(cmd.Context(), out, "", unitsOf(m, dir))
			return runKillall(cmd.Context(), out, dir, bridge)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data-dir", envDataDir(), "the data directory whose processes go (ORCA_DATA_DIR when set)")
	f.StringVar(&bridge, "bridge", killall.DefaultBridge, "the pod bridge of the node")
	return cmd
}

// envDataDir is ORCA_DATA_DIR, as the hack scripts and kubectl read it,
// else `orca server`'s default.
func envDataDir() string {
	if d := os.Getenv("ORCA_DATA_DIR"); d != "" {
		return d
	}
	return defaultDataDir()
}

// runKillall stops everything of dir and reports the counts on out.
func runKillall(ctx context.Context, out io.Writer, dir, bridge string) error {
	r, err := killall.Run(ctx, killall.Options{DataDir: dir, DefaultDataDir: defaultDataDir(), Bridge: bridge, Log: newLogger("warn")})
	fmt.Fprintf(out, "killall %s:\n", dir)
	_, _ = r.WriteTo(out)
	return err
}

// unitsOf are the installed units that run from dir.
func unitsOf(m install.Manifest, dir string) []install.InstalledUnit {
	var out []install.InstalledUnit
	for _, u := range m.Units {
		if d, err := killall.Dir(u.DataDir); err == nil && d == dir {
			out = append(out, u)
		}
	}
	return out
}

// systemdRunning reports whether systemd manages the machine under root,
// as its own sd_booted() decides, and systemctl is there to ask it.
func systemdRunning(root string) bool {
	if _, err := os.Stat(filepath.Join(root, "/run/systemd/system")); err != nil {
		return false
	}
	_, err := exec.LookPath("systemctl")
	return err == nil
}

// systemctl runs systemctl with args, its output going to out.
func systemctl(ctx context.Context, out io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "systemctl", args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("systemctl %v: %w", args, err)
	}
	return nil
}

// stopUnits stops units under systemd, so that Restart=always does not
// bring back what killall is about to kill. Failures are reported only:
// killall goes on either way.
func stopUnits(ctx context.Context, out io.Writer, root string, units []install.InstalledUnit) {
	if len(units) == 0 || !systemdRunning(root) {
		return
	}
	for _, u := range units {
		if err := systemctl(ctx, out, "stop", u.Name); err != nil {
			fmt.Fprintf(out, "warning: %v\n", err)
		}
	}
}
