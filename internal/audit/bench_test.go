package audit

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkMetadataCreate is the audit work of one create at Metadata
// level: the policy, the record, two events written as JSON lines to a
// file.
func BenchmarkMetadataCreate(b *testing.B) {
	p, _, err := ParsePolicy([]byte(policyAt("Metadata")))
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(b.TempDir(), "audit.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	a, _ := New(Config{Policy: p, Writer: NewJSONLines(f), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	h := a.Handler(http.HandlerFunc(createHandler), func(*http.Request) (Attributes, bool) { return createAttrs(), false })
	req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/default/configmaps", strings.NewReader("{}"))
	req.Header.Set("User-Agent", "bench")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := req.WithContext(a.WithRequest(req.Context(), "5e2b2b1e-0f7a-4a8e-9d55-6a0d3f1b7c11", time.Now()))
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
}
