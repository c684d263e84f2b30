package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/orca-project/orca/internal/imagebuild"
	"github.com/orca-project/orca/internal/images"
)

func newImagesCommand() *cobra.Command {
	var dataDir, address string
	cmd := &cobra.Command{
		Use:   "images",
		Short: "Import, list and build container images on this node",
		Long: "Manage the images of this node's containerd (the agent's, found from --data-dir, or --address). " +
			"Nothing is pulled from a public registry: images come in as tarballs (docker save or OCI archives).",
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&dataDir, "data-dir", defaultDataDir(), "Orca's data directory; the agent's containerd socket is in it")
	pf.StringVar(&address, "address", "", "containerd socket to use instead of the agent's")
	socket := func() string {
		if address != "" {
			return address
		}
		return images.SocketPath(dataDir)
	}

	importCmd := &cobra.Command{
		Use:   "import FILE.tar [FILE.tar...]",
		Short: "Load image tarballs into the node's containerd, unpacked for CRI",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, file := range args {
				refs, err := images.Import(cmd.Context(), socket(), file)
				if err != nil {
					return err
				}
				for _, ref := range refs {
					fmt.Fprintf(cmd.OutOrStdout(), "imported %s\n", ref)
				}
			}
			return nil
		},
	}

	lsCmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the images pods on this node can use, as CRI reports them",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			imgs, err := images.List(cmd.Context(), socket())
			if err != nil {
				return err
			}
			return images.WriteTable(cmd.OutOrStdout(), imgs)
		},
	}

	var output, busybox string
	buildCmd := &cobra.Command{
		Use:   "build --output DIR",
		Short: "Write Orca's pause and busybox images as pause.tar and busybox.tar",
		Long: "Write the pod sandbox image (" + imagebuild.PauseRef + ", from the orca-pause binary next to orca or in $PATH) " +
			"and the test image (" + imagebuild.BusyboxRef + ", from a static busybox) as docker archives.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pausePath, err := imagebuild.FindPauseBinary()
			if err != nil {
				return err
			}
			bin, err := os.ReadFile(pausePath)
			if err != nil {
				return fmt.Errorf("reading pause binary: %w", err)
			}
			bb, err := imagebuild.Busybox(busybox)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(output, 0o755); err != nil {
				return fmt.Errorf("creating %s: %w", output, err)
			}
			for _, out := range []struct {
				name string
				img  imagebuild.Image
			}{{"pause.tar", imagebuild.Pause(bin)}, {"busybox.tar", bb}} {
				if err := writeImage(cmd, filepath.Join(output, out.name), out.img); err != nil {
					return err
				}
			}
			return nil
		},
	}
	buildCmd.Flags().StringVar(&output, "output", "", "directory to write pause.tar and busybox.tar to")
	buildCmd.Flags().StringVar(&busybox, "busybox", imagebuild.DefaultBusybox, "statically linked busybox binary to put into the busybox image")
	_ = buildCmd.MarkFlagRequired("output")

	var pack struct {
		tag, output, workdir, user  string
		entrypoint, cmd, env, ports []string
	}
	packCmd := &cobra.Command{
		Use:   "pack DIR --tag REF --output FILE.tar",
		Short: "Write a directory tree as a one-layer image (docker archive) for `images import`",
		Long: "Turn a root file system prepared on disk into an image, for nodes that cannot pull: " +
			"every file, directory and symlink under DIR with its mode and owner, and the config the flags give.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			entries, err := imagebuild.FromDir(args[0])
			if err != nil {
				return err
			}
			img := imagebuild.Image{Ref: pack.tag, Entries: entries, Config: imagebuild.Config{
				Entrypoint: pack.entrypoint, Cmd: pack.cmd, Env: pack.env,
				WorkingDir: pack.workdir, User: pack.user, ExposedPorts: pack.ports,
			}}
			return writeImage(cmd, pack.output, img)
		},
	}
	pf = packCmd.Flags()
	pf.StringVar(&pack.tag, "tag", "", "the image's reference (registry.example/name:tag)")
	pf.StringVar(&pack.output, "output", "", "docker archive to write")
	pf.StringArrayVar(&pack.entrypoint, "entrypoint", nil, "an element of the entrypoint (repeat for each)")
	pf.StringArrayVar(&pack.cmd, "cmd", nil, "an element of the default command (repeat for each)")
	pf.StringArrayVar(&pack.env, "env", []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, "NAME=VALUE in the environment (repeat for each)")
	pf.StringVar(&pack.workdir, "workdir", "", "working directory of the image's containers")
	pf.StringVar(&pack.user, "user", "", "user (and group) the image's containers run as")
	pf.StringArrayVar(&pack.ports, "expose", nil, "exposed port, 80/tcp (repeat for each)")
	_ = packCmd.MarkFlagRequired("tag")
	_ = packCmd.MarkFlagRequired("output")

	cmd.AddCommand(importCmd, lsCmd, buildCmd, packCmd)
	return cmd
}

// writeImage writes img as a docker archive to file and says so, with the
// image ID a runtime will report for it.
func writeImage(cmd *cobra.Command, file string, img imagebuild.Image) error {
	a, err := img.Build()
	if err != nil {
		return err
	}
	if err := a.WriteFile(file); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s (%s)\n", file, a.Ref, a.ID)
	return nil
}
