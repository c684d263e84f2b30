// Package images loads image tarballs into a node's containerd and lists the
// images the node has, as the kubelet sees them through CRI. Importing goes
// through the ctr tool (containerd's client library is not a dependency of
// Orca); listing goes through the CRI ImageService, so that what `orca
// images ls` shows is exactly what pods can use.
package images

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/imagebuild"
)

// Namespace is the containerd namespace the CRI plugin keeps its images in.
const Namespace = "k8s.io"

// SocketPath is where the agent's containerd listens for data directory
// dataDir.
func SocketPath(dataDir string) string {
	return filepath.Join(dataDir, "agent", "containerd", "containerd.sock")
}

// Image is an image as CRI reports it.
type Image struct {
	ID          string // "sha256:..."
	RepoTags    []string
	RepoDigests []string
	Size        uint64 // bytes, as the runtime counts them
}

// Import loads the image tarball tarPath (docker-archive or OCI layout) into
// the containerd at socket, unpacked for the default snapshotter so that the
// CRI plugin can run it, and returns the references it imported.
func Import(ctx context.Context, socket, tarPath string) ([]string, error) {
	ctr, err := exec.LookPath("ctr")
	if err != nil {
		return nil, fmt.Errorf("importing %s: containerd's ctr tool is needed: %w", tarPath, err)
	}
	cmd := exec.CommandContext(ctx, ctr, "--address", socket, "--namespace", Namespace,
		"images", "import", "--no-unpack=false", tarPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("importing %s into %s: %w: %s", tarPath, socket, err, strings.TrimSpace(stderr.String()))
	}
	refs := parseImportOutput(out)
	if len(refs) == 0 {
		return nil, fmt.Errorf("importing %s into %s: no image was imported (ctr said: %s)", tarPath, socket, strings.TrimSpace(string(out)))
	}
	slog.Debug("imported images", "file", tarPath, "refs", refs)
	return refs, nil
}

// parseImportOutput extracts the references from ctr's import output, one
// "unpacking REF (sha256:...)...done" line per image.
func parseImportOutput(out []byte) []string {
	var refs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "unpacking ")
		if !ok {
			continue
		}
		ref, _, _ := strings.Cut(rest, " ")
		if ref != "" {
			refs = append(refs, ref)
		}
	}
	return refs
}

// dial connects to the CRI service at socket. grpc connects lazily; the
// first call reports an unreachable socket.
func dial(socket string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", socket, err)
	}
	return conn, nil
}

// List returns the images the CRI plugin at socket knows.
func List(ctx context.Context, socket string) ([]Image, error) {
	conn, err := dial(socket)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	resp, err := runtimeapi.NewImageServiceClient(conn).ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err != nil {
		return nil, fmt.Errorf("listing images at %s: %w", socket, err)
	}
	imgs := make([]Image, 0, len(resp.Images))
	for _, i := range resp.Images {
		imgs = append(imgs, Image{ID: i.Id, RepoTags: i.RepoTags, RepoDigests: i.RepoDigests, Size: i.Size})
	}
	return imgs, nil
}

// has reports whether CRI at socket resolves ref to an image.
func has(ctx context.Context, client runtimeapi.ImageServiceClient, ref string) (bool, error) {
	resp, err := client.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
	if err != nil {
		return false, fmt.Errorf("image status of %s: %w", ref, err)
	}
	return resp.Image != nil, nil
}

// EnsureImported imports img into the containerd at socket unless CRI already
// has its reference, and waits until CRI sees it: the CRI plugin learns of
// imported images from containerd's events, a moment after the import.
func EnsureImported(ctx context.Context, socket string, img imagebuild.Image) error {
	conn, err := dial(socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	client := runtimeapi.NewImageServiceClient(conn)
	if ok, err := has(ctx, client, img.Ref); err != nil || ok {
		return err
	}

	f, err := os.CreateTemp("", "orca-image-*.tar")
	if err != nil {
		return fmt.Errorf("importing %s: %w", img.Ref, err)
	}
	defer os.Remove(f.Name())
	if err := img.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("importing %s: %w", img.Ref, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("importing %s: %w", img.Ref, err)
	}
	if _, err := Import(ctx, socket, f.Name()); err != nil {
		return err
	}
	return waitFor(ctx, client, img.Ref)
}

// waitFor polls CRI until it has ref, for at most ten seconds.
func waitFor(ctx context.Context, client runtimeapi.ImageServiceClient, ref string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		ok, err := has(ctx, client, ref)
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("imported %s but CRI does not list it: %w", ref, errors.Join(err, ctx.Err()))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
