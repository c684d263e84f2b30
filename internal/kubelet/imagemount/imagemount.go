// Package imagemount mounts an image's filesystem read-only at a host
// directory, for image volumes, through containerd's own API (images,
// content, snapshots and leases): the CRI plugin of the containerd Orca
// runs cannot mount images itself. Each mount is a read-only view of the
// image's unpacked layers, held by a lease of its own so that containerd's
// garbage collector keeps them while a pod uses them, and named after its
// target so that an unmount after a restart finds it again.
package imagemount

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	contentapi "github.com/containerd/containerd/api/services/content/v1"
	imagesapi "github.com/containerd/containerd/api/services/images/v1"
	leasesapi "github.com/containerd/containerd/api/services/leases/v1"
	snapshotsapi "github.com/containerd/containerd/api/services/snapshots/v1"
	digest "github.com/opencontainers/go-digest"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// maxBlob bounds the manifests and configs read: they are small JSON
// documents, and a larger one is not what it claims to be.
const maxBlob = 8 << 20

// Mounter mounts images of one containerd namespace.
type Mounter struct {
	// Conn is a connection to containerd's socket (the CRI one serves
	// its own API too).
	Conn grpc.ClientConnInterface
	// Namespace is where the CRI plugin keeps images: "k8s.io".
	Namespace string
	// Snapshotter is the CRI plugin's: "overlayfs".
	Snapshotter string
}

func (m *Mounter) ctx(ctx context.Context, lease string) context.Context {
	md := metadata.Pairs("containerd-namespace", m.Namespace)
	if lease != "" {
		md.Append("containerd-lease", lease)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// Mount makes image (a name or an image ID the runtime knows, already
// pulled and unpacked) appear read-only at target. The caller mounts a
// target once; after a failure, or a restart between steps, Mount may be
// called again and reuses the view it left.
func (m *Mounter) Mount(ctx context.Context, image, target string) error {
	nctx := m.ctx(ctx, "")
	img, err := imagesapi.NewImagesClient(m.Conn).Get(nctx, &imagesapi.GetImageRequest{Name: image})
	if err != nil {
		return fmt.Errorf("image %s: %w", image, err)
	}
	t := img.Image.Target
	desc, raw := t.MediaType, []byte(nil)
	dgst := digest.Digest(t.Digest)
	for range 3 {
		if raw, err = m.read(nctx, dgst); err != nil {
			return fmt.Errorf("image %s: %w", image, err)
		}
		if !isIndex(desc) {
			break
		}
		d, err := pickManifest(raw, "linux", runtime.GOARCH, "")
		if err != nil {
			return fmt.Errorf("image %s: %w", image, err)
		}
		desc, dgst = d.MediaType, d.Digest
	}
	if !isManifest(desc) {
		return fmt.Errorf("image %s: unsupported media type %q", image, desc)
	}
	cfg, err := configOf(raw)
	if err != nil {
		return fmt.Errorf("image %s: %w", image, err)
	}
	if raw, err = m.read(nctx, cfg.Digest); err != nil {
		return fmt.Errorf("image %s: %w", image, err)
	}
	diffs, err := diffIDs(raw)
	if err != nil {
		return fmt.Errorf("image %s: %w", image, err)
	}
	parent := chainID(diffs)

	key := Key(target)
	_, err = leasesapi.NewLeasesClient(m.Conn).Create(nctx, &leasesapi.CreateRequest{
		ID: key, Labels: map[string]string{"orca.io/image-volume": target},
	})
	if err != nil && status.Code(err) != codes.AlreadyExists {
		return fmt.Errorf("lease for image %s: %w", image, err)
	}
	snaps := snapshotsapi.NewSnapshotsClient(m.Conn)
	lctx := m.ctx(ctx, key)
	var mounts []*mountOf
	view, err := snaps.View(lctx, &snapshotsapi.ViewSnapshotRequest{Snapshotter: m.Snapshotter, Key: key, Parent: parent.String()})
	switch {
	case err == nil:
		mounts = convert(view.Mounts)
	case status.Code(err) == codes.AlreadyExists:
		got, err := snaps.Mounts(lctx, &snapshotsapi.MountsRequest{Snapshotter: m.Snapshotter, Key: key})
		if err != nil {
			return fmt.Errorf("view of image %s: %w", image, err)
		}
		mounts = convert(got.Mounts)
	case status.Code(err) == codes.NotFound:
		return fmt.Errorf("image %s is not unpacked for snapshotter %s", image, m.Snapshotter)
	default:
		return fmt.Errorf("view of image %s: %w", image, err)
	}
	if len(mounts) != 1 {
		return fmt.Errorf("view of image %s: %d mounts, want one", image, len(mounts))
	}
	spec, err := planMount(mounts[0].fstype, mounts[0].source, mounts[0].options)
	if err != nil {
		return fmt.Errorf("image %s: %w", image, err)
	}
	if err := os.MkdirAll(target, 0o755); err != nil {
		return fmt.Errorf("image volume directory: %w", err)
	}
	if err := unix.Mount(spec.source, target, spec.fstype, spec.flags, spec.data); err != nil {
		return fmt.Errorf("mount image %s at %s: %w", image, target, err)
	}
	if spec.remount {
		if err := unix.Mount("", target, "", spec.flags|unix.MS_REMOUNT, ""); err != nil {
			_ = unix.Unmount(target, unix.MNT_DETACH)
			return fmt.Errorf("make image %s read-only at %s: %w", image, target, err)
		}
	}
	return nil
}

// Unmount undoes Mount: it unmounts target and releases the view and its
// lease. Unmounting what is not mounted is not an error.
func (m *Mounter) Unmount(ctx context.Context, target string) error {
	if err := unix.Unmount(target, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount image volume %s: %w", target, err)
	}
	key := Key(target)
	nctx := m.ctx(ctx, "")
	_, err := snapshotsapi.NewSnapshotsClient(m.Conn).Remove(nctx, &snapshotsapi.RemoveSnapshotRequest{Snapshotter: m.Snapshotter, Key: key})
	if err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("remove view of image volume %s: %w", target, err)
	}
	_, err = leasesapi.NewLeasesClient(m.Conn).Delete(nctx, &leasesapi.DeleteRequest{ID: key})
	if err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("release lease of image volume %s: %w", target, err)
	}
	return nil
}

// read fetches one blob from the content store.
func (m *Mounter) read(ctx context.Context, d digest.Digest) ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("blob %q: %w", d, err)
	}
	stream, err := contentapi.NewContentClient(m.Conn).Read(ctx, &contentapi.ReadContentRequest{Digest: d.String()})
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", d, err)
	}
	var buf bytes.Buffer
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read blob %s: %w", d, err)
		}
		if buf.Len()+len(resp.Data) > maxBlob {
			return nil, fmt.Errorf("blob %s is larger than %d bytes", d, maxBlob)
		}
		buf.Write(resp.Data)
	}
	if got := digest.FromBytes(buf.Bytes()); got != d {
		return nil, fmt.Errorf("blob %s reads back as %s", d, got)
	}
	return buf.Bytes(), nil
}

type mountOf struct {
	fstype, source string
	options        []string
}

func convert[T interface {
	GetType() string
	GetSource() string
	GetOptions() []string
}](in []T) []*mountOf {
	out := make([]*mountOf, 0, len(in))
	for _, x := range in {
		out = append(out, &mountOf{fstype: x.GetType(), source: x.GetSource(), options: x.GetOptions()})
	}
	return out
}
