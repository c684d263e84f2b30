package imagemount

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	digest "github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sys/unix"
)

// Docker's media types, which containerd stores beside the OCI ones.
const (
	dockerManifestList = "application/vnd.docker.distribution.manifest.list.v2+json"
	dockerManifest     = "application/vnd.docker.distribution.manifest.v2+json"
)

// isIndex and isManifest classify a descriptor by media type.
func isIndex(mediaType string) bool {
	return mediaType == ocispec.MediaTypeImageIndex || mediaType == dockerManifestList
}

func isManifest(mediaType string) bool {
	return mediaType == ocispec.MediaTypeImageManifest || mediaType == dockerManifest
}

// pickManifest chooses the manifest of an index for the node's platform,
// as containerd's default matcher does for linux: the OS and architecture
// must match, and among those an exact variant is preferred.
func pickManifest(raw []byte, os, arch, variant string) (ocispec.Descriptor, error) {
	var idx ocispec.Index
	if err := json.Unmarshal(raw, &idx); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("parse image index: %w", err)
	}
	var found *ocispec.Descriptor
	for i := range idx.Manifests {
		d := &idx.Manifests[i]
		if !isManifest(d.MediaType) && !isIndex(d.MediaType) {
			continue
		}
		p := d.Platform
		if p == nil || p.OS != os || p.Architecture != arch {
			continue
		}
		if p.Variant == variant {
			return *d, nil
		}
		if found == nil {
			found = d
		}
	}
	if found == nil {
		return ocispec.Descriptor{}, fmt.Errorf("image index has no manifest for %s/%s", os, arch)
	}
	return *found, nil
}

// configOf reads the config descriptor of a manifest.
func configOf(raw []byte) (ocispec.Descriptor, error) {
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("parse image manifest: %w", err)
	}
	if m.Config.Digest == "" {
		return ocispec.Descriptor{}, fmt.Errorf("image manifest names no config")
	}
	return m.Config, nil
}

// diffIDs reads the uncompressed layer digests from an image config.
func diffIDs(raw []byte) ([]digest.Digest, error) {
	var img ocispec.Image
	if err := json.Unmarshal(raw, &img); err != nil {
		return nil, fmt.Errorf("parse image config: %w", err)
	}
	if len(img.RootFS.DiffIDs) == 0 {
		return nil, fmt.Errorf("image config has no layers")
	}
	return img.RootFS.DiffIDs, nil
}

// chainID is the identity of a stack of layers, as the OCI image spec
// defines it and containerd names unpacked snapshots: the first layer's
// diff ID, then sha256 of "<parent chain> <diff ID>" for each next one.
func chainID(diffs []digest.Digest) digest.Digest {
	if len(diffs) == 0 {
		return ""
	}
	id := diffs[0]
	for _, d := range diffs[1:] {
		id = digest.FromString(id.String() + " " + d.String())
	}
	return id
}

// Key names the snapshot and the lease that hold one mount, derived from
// its target so that an unmount after a restart finds them again. Lease
// IDs allow only letters, digits and single separators.
func Key(target string) string {
	sum := sha256.Sum256([]byte(target))
	return "orca-image-volume-" + hex.EncodeToString(sum[:20])
}

// mountSpec is one mount(2) call.
type mountSpec struct {
	source, fstype string
	flags          uintptr
	data           string
	// remount applies read-only to a bind mount, which the kernel
	// ignores on the first call.
	remount bool
}

// mountFlags maps containerd's mount options to mount(2) flags; every
// other option goes to the filesystem as data.
var mountFlags = map[string]uintptr{
	"ro": unix.MS_RDONLY, "bind": unix.MS_BIND, "rbind": unix.MS_BIND | unix.MS_REC,
	"nosuid": unix.MS_NOSUID, "nodev": unix.MS_NODEV, "noexec": unix.MS_NOEXEC,
	"noatime": unix.MS_NOATIME, "nodiratime": unix.MS_NODIRATIME, "relatime": unix.MS_RELATIME,
	"sync": unix.MS_SYNCHRONOUS, "dirsync": unix.MS_DIRSYNC,
}

// planMount turns a snapshot mount into a read-only mount(2) call. An
// image volume is never writable, whatever the snapshot offers: "rw" is
// dropped and MS_RDONLY always set.
func planMount(fstype, source string, options []string) (mountSpec, error) {
	s := mountSpec{source: source, fstype: fstype, flags: unix.MS_RDONLY}
	var data []string
	for _, o := range options {
		if o == "rw" {
			continue
		}
		if f, ok := mountFlags[o]; ok {
			s.flags |= f
			continue
		}
		data = append(data, o)
	}
	s.data = strings.Join(data, ",")
	if s.flags&unix.MS_BIND != 0 {
		s.fstype = ""
		s.remount = true
	}
	// mount(2) takes one page of options; an overlay of very many layers
	// would need containerd's shortened paths.
	if len(s.data) >= unix.Getpagesize() {
		return mountSpec{}, fmt.Errorf("mount options of %d bytes exceed a page (too many image layers)", len(s.data))
	}
	return s, nil
}
