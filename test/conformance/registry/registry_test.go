package registry

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// writeArchive writes a docker archive of one image with one layer.
func writeArchive(t *testing.T, tag string, config, layer []byte) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, b []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(b)
	}
	m, _ := json.Marshal([]archiveEntry{{Config: "cfg.json", RepoTags: []string{tag}, Layers: []string{"l/layer.tar"}}})
	add("cfg.json", config)
	add("l/layer.tar", layer)
	add("manifest.json", m)
	tw.Close()
	file := filepath.Join(t.TempDir(), "img.tar")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func get(t *testing.T, method, url string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestServesAnArchiveAsAMirror(t *testing.T) {
	config, layer := []byte(`{"architecture":"amd64","os":"linux"}`), []byte("layer bytes")
	r := New()
	refs, err := r.AddArchive(writeArchive(t, "registry.k8s.io/e2e-test-images/agnhost:2.66.1", config, layer))
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 1 || refs[0] != "registry.k8s.io/e2e-test-images/agnhost:2.66.1" {
		t.Fatalf("refs = %v", refs)
	}
	srv := httptest.NewServer(r)
	defer srv.Close()

	if resp, _ := get(t, "GET", srv.URL+"/v2/"); resp.StatusCode != 200 || resp.Header.Get("Docker-Distribution-API-Version") != "registry/2.0" {
		t.Fatalf("/v2/: %d %v", resp.StatusCode, resp.Header)
	}
	// A mirror is asked without the upstream host, with ?ns= naming it.
	resp, body := get(t, "GET", srv.URL+"/v2/e2e-test-images/agnhost/manifests/2.66.1?ns=registry.k8s.io")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != manifestType {
		t.Fatalf("manifest: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var m manifest
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Docker-Content-Digest") != digestOf(body) {
		t.Errorf("digest header %s, want the manifest's own", resp.Header.Get("Docker-Content-Digest"))
	}
	if m.Config.Digest != digestOf(config) || len(m.Layers) != 1 || m.Layers[0].Digest != digestOf(layer) || m.Layers[0].Size != len(layer) {
		t.Fatalf("manifest = %+v", m)
	}
	// By digest, HEAD, and the blobs it names.
	if resp, _ := get(t, "HEAD", srv.URL+"/v2/e2e-test-images/agnhost/manifests/"+digestOf(body)); resp.StatusCode != 200 || resp.ContentLength != int64(len(body)) {
		t.Errorf("HEAD by digest: %d, length %d", resp.StatusCode, resp.ContentLength)
	}
	for want, d := range map[string]string{string(config): m.Config.Digest, string(layer): m.Layers[0].Digest} {
		if resp, b := get(t, "GET", srv.URL+"/v2/e2e-test-images/agnhost/blobs/"+d); resp.StatusCode != 200 || string(b) != want {
			t.Errorf("blob %s: %d %q", d, resp.StatusCode, b)
		}
	}
	// What it does not hold is the registry API's 404, and it takes no writes.
	for _, p := range []string{"/v2/e2e-test-images/agnhost/manifests/9.9", "/v2/e2e-test-images/agnhost/blobs/sha256:00", "/v1/"} {
		if resp, _ := get(t, "GET", srv.URL+p); resp.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}
	if resp, _ := get(t, "PUT", srv.URL+"/v2/e2e-test-images/agnhost/manifests/2.66.1"); resp.StatusCode != 405 {
		t.Errorf("PUT: %d, want 405", resp.StatusCode)
	}
}

func TestSplitTag(t *testing.T) {
	for ref, want := range map[string][2]string{
		"registry.k8s.io/pause:3.10.2":                   {"pause", "3.10.2"},
		"registry.k8s.io/e2e-test-images/busybox:1.37.0": {"e2e-test-images/busybox", "1.37.0"},
		"localhost:5000/x/y":                             {"x/y", "latest"},
		"library/busybox:1":                              {"library/busybox", "1"},
	} {
		if repo, tag := splitTag(ref); repo != want[0] || tag != want[1] {
			t.Errorf("splitTag(%q) = %q %q, want %q", ref, repo, tag, want)
		}
	}
}
