// Package registry serves docker archives (the tarballs `orca images pack`
// and `docker save` write) over the read-only part of the OCI distribution
// API, so that nodes can pull the suite's images from this machine: specs
// that set imagePullPolicy Always pull for real, from a mirror the nodes'
// containerd is pointed at, and nothing comes from a public registry.
package registry

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strings"
)

// Media types of what the registry serves.
const (
	manifestType = "application/vnd.oci.image.manifest.v1+json"
	configType   = "application/vnd.oci.image.config.v1+json"
	layerType    = "application/vnd.oci.image.layer.v1.tar"
)

// Registry holds every image it serves in memory: a manifest per
// repository and tag, and blobs by digest.
type Registry struct {
	manifests map[string][]byte // "repo:tag" and "repo@digest"
	blobs     map[string][]byte // "sha256:..."
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{manifests: map[string][]byte{}, blobs: map[string][]byte{}}
}

type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int    `json:"size"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

// archiveEntry is an element of a docker archive's manifest.json.
type archiveEntry struct {
	Config   string
	RepoTags []string
	Layers   []string
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// AddArchive adds the images of one docker archive, under their tags with
// the registry host left out ("registry.k8s.io/pause:3.10" is served as
// repository "pause", tag "3.10"), and returns their references.
func (r *Registry) AddArchive(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		files[path.Clean(h.Name)] = b
	}
	var entries []archiveEntry
	if err := json.Unmarshal(files["manifest.json"], &entries); err != nil {
		return nil, fmt.Errorf("%s: manifest.json: %w", file, err)
	}
	var refs []string
	for _, e := range entries {
		cfg, ok := files[path.Clean(e.Config)]
		if !ok {
			return nil, fmt.Errorf("%s: no config %s", file, e.Config)
		}
		m := manifest{SchemaVersion: 2, MediaType: manifestType,
			Config: descriptor{MediaType: configType, Digest: digestOf(cfg), Size: len(cfg)}}
		r.blobs[m.Config.Digest] = cfg
		for _, l := range e.Layers {
			layer, ok := files[path.Clean(l)]
			if !ok {
				return nil, fmt.Errorf("%s: no layer %s", file, l)
			}
			d := descriptor{MediaType: layerType, Digest: digestOf(layer), Size: len(layer)}
			r.blobs[d.Digest] = layer
			m.Layers = append(m.Layers, d)
		}
		body, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		for _, tag := range e.RepoTags {
			repo, t := splitTag(tag)
			r.manifests[repo+":"+t] = body
			r.manifests[repo+"@"+digestOf(body)] = body
			refs = append(refs, tag)
		}
	}
	return refs, nil
}

// splitTag turns "host/a/b:tag" into ("a/b", "tag"): a mirror is asked for
// the repository without the registry's host.
func splitTag(ref string) (repo, tag string) {
	repo, tag = ref, "latest"
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		repo, tag = ref[:i], ref[i+1:]
	}
	if i := strings.Index(repo, "/"); i >= 0 && strings.ContainsAny(repo[:i], ".:") {
		repo = repo[i+1:]
	}
	return repo, tag
}

// ServeHTTP answers GET and HEAD of /v2/, manifests and blobs.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "read-only registry", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	p := strings.TrimPrefix(req.URL.Path, "/v2/")
	if p == req.URL.Path {
		http.NotFound(w, req)
		return
	}
	if p == "" {
		w.WriteHeader(http.StatusOK)
		return
	}
	if i := strings.LastIndex(p, "/manifests/"); i > 0 {
		repo, ref := p[:i], p[i+len("/manifests/"):]
		key := repo + ":" + ref
		if strings.HasPrefix(ref, "sha256:") {
			key = repo + "@" + ref
		}
		body, ok := r.manifests[key]
		if !ok {
			writeError(w, http.StatusNotFound, "MANIFEST_UNKNOWN", "manifest unknown")
			return
		}
		serve(w, req, manifestType, body)
		return
	}
	if i := strings.LastIndex(p, "/blobs/"); i > 0 {
		body, ok := r.blobs[p[i+len("/blobs/"):]]
		if !ok {
			writeError(w, http.StatusNotFound, "BLOB_UNKNOWN", "blob unknown to registry")
			return
		}
		serve(w, req, "application/octet-stream", body)
		return
	}
	http.NotFound(w, req)
}

func serve(w http.ResponseWriter, req *http.Request, mediaType string, body []byte) {
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Docker-Content-Digest", digestOf(body))
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if req.Method == http.MethodGet {
		w.Write(body)
	}
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": code, "message": msg}}})
}
