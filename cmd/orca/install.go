package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/orca-project/orca/internal/install"
	"github.com/orca-project/orca/internal/killall"
)

func newInstallCommand() *cobra.Command {
	var root, binDir, systemdDir string
	cmd := &cobra.Command{
		Use:   "install [server|agent] [-- FLAGS...]",
		Short: "Install this binary as a systemd service (orca.service, or orca-agent.service for an agent)",
		Long: "Copy the running orca (and orca-pause next to it) into --bin-dir with a kubectl link to it, and write a systemd unit " +
			"that runs `orca server FLAGS` or `orca agent FLAGS` (the flags after --), restarted always and stopped without its " +
			"containers (KillMode=process). Under systemd the unit is enabled and (re)started. What was written is recorded in " +
			install.ManifestPath + " for orca uninstall.",
		Example: "  orca install server -- --node-ip 10.0.0.1\n" +
			"  orca install agent -- --server https://10.0.0.1:6443 --token-file /etc/orca/token",
		RunE: func(cmd *cobra.Command, args []string) error {
			role, flags, err := installArgs(args, cmd.ArgsLenAtDash())
			if err != nil {
				return err
			}
			if err := checkServiceFlags(role, flags); err != nil {
				return err
			}
			if root == "" && os.Geteuid() != 0 {
				return errors.New("orca install must run as root")
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("install: the running executable: %w", err)
			}
			out := cmd.OutOrStdout()
			res, err := install.Install(install.Options{Root: root, Role: role, Flags: flags, BinDir: binDir, SystemdDir: systemdDir, Executable: exe, Out: out})
			if err != nil {
				return err
			}
			if !systemdRunning(root) {
				fmt.Fprintf(out, "systemd is not running here: %s was written but not started.\n"+
					"Start orca with `systemctl daemon-reload && systemctl enable --now %s` on a systemd machine, or run it yourself:\n  %s\n",
					res.Unit.Path, res.Unit.Name, shellCommand(append([]string{res.Binary, role}, flags...)))
				return nil
			}
			ctx := cmd.Context()
			// restart rather than start: an upgrade must run the new
			// binary; the pods keep running through it (KillMode=process).
			for _, a := range [][]string{{"daemon-reload"}, {"enable", res.Unit.Name}, {"restart", res.Unit.Name}} {
				if err := systemctl(ctx, out, a...); err != nil {
					return err
				}
			}
			fmt.Fprintf(out, "%s enabled and started; its log: journalctl -u %s\n", res.Unit.Name, res.Unit.Name)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&binDir, "bin-dir", "/usr/local/bin", "directory for the orca binary, orca-pause and the kubectl link")
	f.StringVar(&systemdDir, "systemd-dir", "/etc/systemd/system", "directory for the systemd unit")
	addRootFlag(f, &root)
	return cmd
}

// shellCommand is args as a shell command line, each quoted when the
// shell would split or expand it.
func shellCommand(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@+%") == "" {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// addRootFlag adds the hidden --root: a directory every path is taken
// under, so that tests install and uninstall into a temporary one.
func addRootFlag(f *pflag.FlagSet, root *string) {
	f.StringVar(root, "root", "", "directory to take every path under (for tests)")
	_ = f.MarkHidden("root")
}

// installArgs splits `install [ROLE] [-- FLAGS...]` into the role (server
// unless given) and the service's flags.
func installArgs(args []string, dash int) (role string, flags []string, err error) {
	before := args
	if dash >= 0 {
		before, flags = args[:dash], args[dash:]
	}
	switch len(before) {
	case 0:
		role = "server"
	case 1:
		role = before[0]
	default:
		return "", nil, fmt.Errorf("install takes one role, server or agent, and the service's flags after --: got %q", before)
	}
	if role != "server" && role != "agent" {
		return "", nil, fmt.Errorf("unknown role %q: want server or agent", role)
	}
	return role, flags, nil
}

// checkServiceFlags parses the flags as `orca ROLE` would, so that a typo
// fails now rather than in a unit restarting every five seconds.
func checkServiceFlags(role string, flags []string) error {
	c := newServerCommand()
	if role == "agent" {
		c = newAgentCommand()
	}
	if err := c.ParseFlags(flags); err != nil {
		return fmt.Errorf("flags for orca %s: %w", role, err)
	}
	if rest := c.Flags().Args(); len(rest) > 0 {
		return fmt.Errorf("flags for orca %s: unexpected arguments %q", role, rest)
	}
	if d := install.DataDir(flags); !filepath.IsAbs(d) {
		return fmt.Errorf("flags for orca %s: --data-dir %s must be an absolute path (a service runs in /)", role, d)
	}
	return nil
}

func newUninstallCommand() *cobra.Command {
	u := uninstaller{systemctl: systemctl, systemd: systemdRunning}
	var bridge string
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Stop and remove what orca install put on this machine, the data directory and everything running from it",
		Long: "Stop and disable the units orca install wrote, run orca killall for the data directory (--data-dir, else the " +
			"units' own), remove the data directory, then the units, binaries and kubectl link listed in " + install.ManifestPath +
			" and nothing else.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if u.root == "" && os.Geteuid() != 0 {
				return errors.New("orca uninstall must run as root")
			}
			u.killall = func(ctx context.Context, out io.Writer, dir string) error { return runKillall(ctx, out, dir, bridge) }
			return u.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&u.dataDir, "data-dir", "", "the data directory to stop and remove (the installed units' when empty, else ORCA_DATA_DIR or the default)")
	f.StringVar(&bridge, "bridge", killall.DefaultBridge, "the pod bridge of the node")
	addRootFlag(f, &u.root)
	return cmd
}

// uninstaller is `orca uninstall`, with the parts that act on the machine
// beyond its files replaceable for tests.
type uninstaller struct {
	root string
	// dataDir is the directory given on the command line; empty for the
	// installed units' (or the default).
	dataDir   string
	killall   func(ctx context.Context, out io.Writer, dir string) error
	systemctl func(ctx context.Context, out io.Writer, args ...string) error
	// systemd reports whether systemd runs the machine under root.
	systemd func(root string) bool
}

func (u uninstaller) run(ctx context.Context, out io.Writer) error {
	m, err := install.ReadManifest(u.root)
	if err != nil {
		return err
	}
	if m.Empty() {
		fmt.Fprintf(out, "nothing recorded in %s: no units or binaries to remove\n", install.ManifestPath)
	}
	dirs := []string{u.dataDir}
	if u.dataDir == "" {
		if dirs = m.DataDirs(); len(dirs) == 0 {
			dirs = []string{envDataDir()}
		}
	}
	var errs []error
	withSystemd := len(m.Units) > 0 && u.systemd(u.root)
	if withSystemd {
		for _, unit := range m.Units {
			for _, a := range [][]string{{"stop", unit.Name}, {"disable", unit.Name}} {
				if err := u.systemctl(ctx, out, a...); err != nil {
					fmt.Fprintf(out, "warning: %v\n", err)
				}
			}
		}
	}
	for _, d := range dirs {
		dir, err := killall.Dir(under(u.root, d))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := u.killall(ctx, out, dir); err != nil {
			errs = append(errs, err)
		}
		// Files on a mount killall could not detach would go with the
		// directory: a volume's, or worse, a host path's.
		if left, err := killall.MountsUnder(dir); err != nil || len(left) > 0 {
			errs = append(errs, fmt.Errorf("uninstall: %s kept, still mounted under it: %q %v", dir, left, err))
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("uninstall: remove %s: %w", dir, err))
			continue
		}
		fmt.Fprintf(out, "removed %s\n", dir)
	}
	removed, err := install.RemoveFiles(u.root, m)
	for _, p := range removed {
		fmt.Fprintf(out, "removed %s\n", p)
	}
	if err != nil {
		errs = append(errs, err)
	}
	if withSystemd {
		var calls [][]string
		for _, unit := range m.Units {
			calls = append(calls, []string{"reset-failed", unit.Name})
		}
		for _, a := range append(calls, []string{"daemon-reload"}) {
			if err := u.systemctl(ctx, out, a...); err != nil {
				fmt.Fprintf(out, "warning: %v\n", err)
			}
		}
	}
	return errors.Join(errs...)
}

// under is path p on the machine whose root directory is root.
func under(root, p string) string {
	if root == "" {
		return p
	}
	return filepath.Join(root, p)
}
