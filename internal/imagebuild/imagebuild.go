// Package imagebuild writes container images as docker-archive tarballs (the
// format `docker save` produces and `ctr images import` reads) from an
// in-memory description: one layer of files, directories and symlinks, an
// image config and one reference. Output is deterministic: timestamps are
// fixed and entries sorted, so the same description always yields the same
// image ID. Orca builds its own pause and test images this way because
// nothing may be pulled from a public registry.
package imagebuild

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Kind is the type of a filesystem entry in an image's layer.
type Kind int

const (
	Dir Kind = iota
	File
	Symlink
)

// Entry is one file, directory or symlink in the image's single layer.
// Path is absolute inside the image ("/bin/sh"); missing parent directories
// are created with mode 0755.
type Entry struct {
	Path    string
	Kind    Kind
	Mode    fs.FileMode // permission bits, including sticky/setuid
	Content []byte      // File only
	Target  string      // Symlink only
	UID     int
	GID     int
}

// DirEntry, FileEntry and SymlinkEntry are shorthands for root-owned entries.
func DirEntry(p string, mode fs.FileMode) Entry { return Entry{Path: p, Kind: Dir, Mode: mode} }

func FileEntry(p string, mode fs.FileMode, content []byte) Entry {
	return Entry{Path: p, Kind: File, Mode: mode, Content: content}
}

func SymlinkEntry(p, target string) Entry {
	return Entry{Path: p, Kind: Symlink, Mode: 0o777, Target: target}
}

// Config is the part of the OCI image config a container runtime acts on.
type Config struct {
	Entrypoint   []string
	Cmd          []string
	Env          []string
	WorkingDir   string
	User         string
	ExposedPorts []string // "80/tcp", "53/udp"
}

// Image describes a whole image: one reference ("localhost/orca/pause:1.0"),
// the layer's entries and the config.
type Image struct {
	Ref     string
	Entries []Entry
	Config  Config
}

// epoch is every timestamp in the image; a fixed one keeps IDs stable.
var epoch = time.Unix(0, 0).UTC()

// Archive is an image rendered to its blobs.
type Archive struct {
	Ref         string
	Layer       []byte // uncompressed tar
	LayerDigest string // "sha256:..." of Layer, also the diff ID
	Config      []byte // image config JSON
	ID          string // "sha256:..." of Config
}

// Build renders the layer and the config. It fails on entries that cannot be
// put into a layer: relative or duplicate paths, unknown kinds, or a path
// used both as a file and as a directory.
func (img Image) Build() (Archive, error) {
	if img.Ref == "" {
		return Archive{}, fmt.Errorf("image has no reference")
	}
	layer, err := buildLayer(img.Entries)
	if err != nil {
		return Archive{}, fmt.Errorf("building layer of %s: %w", img.Ref, err)
	}
	layerDigest := digest(layer)
	cfg, err := json.Marshal(configJSON(img.Config, layerDigest))
	if err != nil {
		return Archive{}, fmt.Errorf("encoding config of %s: %w", img.Ref, err)
	}
	return Archive{Ref: img.Ref, Layer: layer, LayerDigest: layerDigest, Config: cfg, ID: digest(cfg)}, nil
}

// ID is the image ID a runtime reports after importing the image.
func (img Image) ID() (string, error) {
	a, err := img.Build()
	if err != nil {
		return "", err
	}
	return a.ID, nil
}

// Write writes the image as a docker-archive tarball to w.
func (img Image) Write(w io.Writer) error {
	a, err := img.Build()
	if err != nil {
		return err
	}
	return a.write(w)
}

// WriteFile writes the image as a docker-archive tarball to file name,
// replacing it atomically so that an importer never reads half a file.
func (img Image) WriteFile(name string) error {
	a, err := img.Build()
	if err != nil {
		return err
	}
	return a.WriteFile(name)
}

// WriteFile writes the rendered image as Image.WriteFile does; callers that
// also want the ID render the image once this way.
func (a Archive) WriteFile(name string) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return fmt.Errorf("writing image %s: %w", a.Ref, err)
	}
	defer os.Remove(tmp.Name())
	if err := a.write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("writing image %s to %s: %w", a.Ref, name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing image %s to %s: %w", a.Ref, name, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("writing image %s: %w", a.Ref, err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("writing image %s: %w", a.Ref, err)
	}
	return nil
}

// manifestEntry is one element of a docker archive's manifest.json.
type manifestEntry struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// write lays the archive out as `docker save` did before Docker 25:
// <config hex>.json, <layer hex>/layer.tar, manifest.json, repositories.
func (a Archive) write(w io.Writer) error {
	cfgName := hexOf(a.ID) + ".json"
	layerDir := hexOf(a.LayerDigest)
	layerName := layerDir + "/layer.tar"
	manifest, err := json.Marshal([]manifestEntry{{Config: cfgName, RepoTags: []string{a.Ref}, Layers: []string{layerName}}})
	if err != nil {
		return fmt.Errorf("encoding manifest: %w", err)
	}
	repo, tag := splitRef(a.Ref)
	repositories, err := json.Marshal(map[string]map[string]string{repo: {tag: layerDir}})
	if err != nil {
		return fmt.Errorf("encoding repositories: %w", err)
	}

	tw := tar.NewWriter(w)
	files := []struct {
		name string
		data []byte
	}{
		{cfgName, a.Config},
		{layerName, a.Layer},
		{"manifest.json", manifest},
		{"repositories", repositories},
	}
	if err := writeHeader(tw, &tar.Header{Typeflag: tar.TypeDir, Name: layerDir + "/", Mode: 0o755}); err != nil {
		return err
	}
	for _, f := range files {
		if err := writeHeader(tw, &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data))}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return fmt.Errorf("writing %s: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("closing archive: %w", err)
	}
	return nil
}

func writeHeader(tw *tar.Writer, h *tar.Header) error {
	h.ModTime = epoch
	h.Format = tar.FormatPAX
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("writing %s: %w", h.Name, err)
	}
	return nil
}

// buildLayer renders entries as a tar, parents before children, sorted by
// path so that the order of the input does not change the digest.
func buildLayer(entries []Entry) ([]byte, error) {
	byPath := map[string]Entry{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Path, "/") {
			return nil, fmt.Errorf("entry %q: path must be absolute", e.Path)
		}
		p := path.Clean(e.Path)
		if p == "/" {
			return nil, fmt.Errorf("entry %q: the root cannot be an entry", e.Path)
		}
		if _, dup := byPath[p]; dup {
			return nil, fmt.Errorf("entry %q: duplicate path", p)
		}
		if e.Kind != Dir && e.Kind != File && e.Kind != Symlink {
			return nil, fmt.Errorf("entry %q: unknown kind %d", p, e.Kind)
		}
		e.Path = p
		byPath[p] = e
	}
	// Implicit parents; an explicit non-directory parent is an error.
	for p := range byPath {
		for dir := path.Dir(p); dir != "/"; dir = path.Dir(dir) {
			if parent, ok := byPath[dir]; ok {
				if parent.Kind != Dir {
					return nil, fmt.Errorf("entry %q: parent %q is not a directory", p, dir)
				}
				continue
			}
			byPath[dir] = DirEntry(dir, 0o755)
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths) // "/a" sorts before "/a/b": parents come first

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		e := byPath[p]
		h := &tar.Header{
			Name: strings.TrimPrefix(p, "/"),
			Mode: int64(e.Mode.Perm()) | modeBits(e.Mode),
			Uid:  e.UID,
			Gid:  e.GID,
		}
		switch e.Kind {
		case Dir:
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		case File:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Content))
		case Symlink:
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.Target
		}
		if err := writeHeader(tw, h); err != nil {
			return nil, err
		}
		if e.Kind == File {
			if _, err := tw.Write(e.Content); err != nil {
				return nil, fmt.Errorf("writing %s: %w", p, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing layer: %w", err)
	}
	return buf.Bytes(), nil
}

// modeBits maps Go's setuid, setgid and sticky flags to their tar bits.
func modeBits(m fs.FileMode) int64 {
	var b int64
	if m&fs.ModeSetuid != 0 {
		b |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		b |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		b |= 0o1000
	}
	return b
}

// imageConfig is the OCI image config, field names as in the spec.
type imageConfig struct {
	Architecture string        `json:"architecture"`
	OS           string        `json:"os"`
	Created      time.Time     `json:"created"`
	Config       runtimeConfig `json:"config"`
	RootFS       rootFS        `json:"rootfs"`
	History      []history     `json:"history"`
}

type runtimeConfig struct {
	User         string              `json:"User,omitempty"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts,omitempty"`
	Env          []string            `json:"Env,omitempty"`
	Entrypoint   []string            `json:"Entrypoint,omitempty"`
	Cmd          []string            `json:"Cmd,omitempty"`
	WorkingDir   string              `json:"WorkingDir,omitempty"`
}

type rootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

type history struct {
	Created   time.Time `json:"created"`
	CreatedBy string    `json:"created_by"`
}

func configJSON(c Config, diffID string) imageConfig {
	var ports map[string]struct{}
	if len(c.ExposedPorts) > 0 {
		ports = map[string]struct{}{}
		for _, p := range c.ExposedPorts {
			if !strings.Contains(p, "/") {
				p += "/tcp"
			}
			ports[p] = struct{}{}
		}
	}
	return imageConfig{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Created:      epoch,
		Config: runtimeConfig{
			User: c.User, ExposedPorts: ports, Env: c.Env,
			Entrypoint: c.Entrypoint, Cmd: c.Cmd, WorkingDir: c.WorkingDir,
		},
		RootFS:  rootFS{Type: "layers", DiffIDs: []string{diffID}},
		History: []history{{Created: epoch, CreatedBy: "orca imagebuild"}},
	}
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func hexOf(d string) string { return strings.TrimPrefix(d, "sha256:") }

// splitRef splits "host/repo:tag" into repository and tag; the colon of a
// registry port is not a tag separator.
func splitRef(ref string) (repo, tag string) {
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return ref, "latest"
	}
	return ref[:i], ref[i+1:]
}
