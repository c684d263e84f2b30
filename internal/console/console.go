// Package console serves Orca's web console: the single-page application
// in web/, embedded in the binary and served under /ui/ on the API
// server's port.
//
// The files are public, as a login page is: they hold no data, and
// everything the page shows it fetches from the API with the signed-in
// user's token, so the cluster's own authorization decides what it sees.
// The handler therefore sits in front of authentication, and guards the
// page instead with headers: a Content-Security-Policy that allows only
// the server's own origin (no inline scripts, no third-party code that
// could read the token), no framing, and no referrer.
package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

// Prefix is where the console is served; /ui itself redirects there.
const Prefix = "/ui/"

//go:embed web
var files embed.FS

// contentSecurityPolicy lets the page load only its own files and talk
// only to its own origin. Styles may be inline because the terminal
// emulator sizes its rows with style attributes.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// file is one embedded file, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the console's files under Prefix.
type Handler struct {
	files map[string]file
}

// New reads the embedded files once: they cannot change while the binary
// runs, so their types and entity tags are worked out here.
func New() (*Handler, error) {
	web, err := fs.Sub(files, "web")
	if err != nil {
		return nil, err
	}
	return newHandler(web)
}

func newHandler(web fs.FS) (*Handler, error) {
	h := &Handler{files: map[string]file{}}
	err := fs.WalkDir(web, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !served(name) {
			return err
		}
		body, err := fs.ReadFile(web, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		h.files[name] = file{body: body, contentType: contentType(name), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// served leaves out what is for the console's developers (its README and
// its tests), not for browsers.
func served(name string) bool {
	base := path.Base(name)
	return !strings.HasSuffix(base, ".md") && !strings.Contains(base, ".test.")
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js", ".mjs":
		// Module scripts need a JavaScript type; the system's MIME table
		// may not have one.
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == strings.TrimSuffix(Prefix, "/") {
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, Prefix)
	if name == "" {
		name = "index.html"
	}
	f, ok := h.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", contentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Referrer-Policy", "no-referrer")
	// Revalidated on every load, so a new binary's files are never mixed
	// with an old one's; unchanged files cost a 304.
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("ETag", f.etag)
	if match := r.Header.Get("If-None-Match"); match != "" && match == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hdr.Set("Content-Type", f.contentType)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(f.body)
}
