package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func TestHandler(t *testing.T) {
	h, err := newHandler(fstest.MapFS{
		"index.html":        {Data: []byte("<!doctype html><title>Orca</title>")},
		"app.js":            {Data: []byte("export {}")},
		"style.css":         {Data: []byte("body{}")},
		"README.md":         {Data: []byte("# for developers")},
		"lib/yaml.test.mjs": {Data: []byte("test")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		header       map[string]string
		code         int
		contentType  string
		body         string
		location     string
	}{
		{method: "GET", path: "/ui/", code: 200, contentType: "text/html; charset=utf-8", body: "<!doctype html><title>Orca</title>"},
		{method: "GET", path: "/ui", code: 301, location: "/ui/"},
		{method: "GET", path: "/ui/app.js", code: 200, contentType: "text/javascript; charset=utf-8", body: "export {}"},
		{method: "GET", path: "/ui/style.css", code: 200, contentType: "text/css; charset=utf-8", body: "body{}"},
		{method: "HEAD", path: "/ui/app.js", code: 200, contentType: "text/javascript; charset=utf-8"},
		{method: "GET", path: "/ui/README.md", code: 404},
		{method: "GET", path: "/ui/lib/yaml.test.mjs", code: 404},
		{method: "GET", path: "/ui/missing.js", code: 404},
		{method: "GET", path: "/ui/../secret", code: 404},
		{method: "POST", path: "/ui/", code: 405},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/", nil)
			r.URL.Path = tc.path
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.code {
				t.Fatalf("code %d, want %d", w.Code, tc.code)
			}
			if got := w.Header().Get("Content-Type"); tc.contentType != "" && got != tc.contentType {
				t.Errorf("Content-Type %q, want %q", got, tc.contentType)
			}
			if tc.body != "" && w.Body.String() != tc.body {
				t.Errorf("body %q, want %q", w.Body.String(), tc.body)
			}
			if tc.location != "" && w.Header().Get("Location") != tc.location {
				t.Errorf("Location %q, want %q", w.Header().Get("Location"), tc.location)
			}
			if tc.code == 200 {
				csp := w.Header().Get("Content-Security-Policy")
				if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-eval") {
					t.Errorf("Content-Security-Policy %q lets other scripts run", csp)
				}
				if w.Header().Get("X-Frame-Options") != "DENY" || w.Header().Get("Referrer-Policy") != "no-referrer" {
					t.Errorf("headers %v", w.Header())
				}
			}
		})
	}
}

func TestHandlerRevalidates(t *testing.T) {
	h, err := newHandler(fstest.MapFS{"app.js": {Data: []byte("export {}")}})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/ui/app.js", nil))
	etag := w.Header().Get("ETag")
	if etag == "" || w.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q", etag, w.Header().Get("Cache-Control"))
	}
	r := httptest.NewRequest("GET", "/ui/app.js", nil)
	r.Header.Set("If-None-Match", etag)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusNotModified || w.Body.Len() != 0 {
		t.Fatalf("revalidation: %d with %d bytes, want 304 and none", w.Code, w.Body.Len())
	}
}

// The embedded console has its page and its entry module.
func TestEmbedded(t *testing.T) {
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"index.html", "app.js", "style.css"} {
		if _, ok := h.files[name]; !ok {
			t.Errorf("%s is not embedded", name)
		}
	}
	if _, ok := h.files["README.md"]; ok {
		t.Error("the README is served")
	}
}
