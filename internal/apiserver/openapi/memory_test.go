package openapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/orca-project/orca/internal/registry/builtin"
)

// TestMemory reports what building and keeping the documents costs, and
// fails if the kept part grows past a budget. Numbers are only meaningful
// when the test runs alone:
//
//	go test -run TestMemory -v ./internal/apiserver/openapi/
func TestMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("measures a full build")
	}
	s, err := New(builtin.Resources(), testVersion)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.RegisterRoutes(mux)
	fetch := func(path, accept string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept", accept)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: status %d: %s", path, rec.Code, rec.Body)
		}
	}

	base := measure()
	t.Logf("before any request:          %v", base)
	steps := []struct {
		what string
		do   func()
	}{
		{"v3 built (index fetched)", func() { fetch("/openapi/v3", "application/json") }},
		{"v3 apps/v1 as protobuf", func() {
			fetch("/openapi/v3/apis/apps/v1", "application/com.github.proto-openapi.spec.v3.v1.0+protobuf")
		}},
		{"v2 built, as JSON", func() { fetch("/openapi/v2", "application/json") }},
		{"v2 as protobuf", func() { fetch("/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf") }},
	}
	for _, step := range steps {
		start := time.Now()
		step.do()
		took := time.Since(start)
		t.Logf("%-28s %v (took %v)", step.what+":", measure(), took.Round(time.Millisecond))
	}

	var v3JSON, v3Proto int
	for _, d := range s.allDocuments() {
		v3JSON += len(d.gzJSON)
		v3Proto += len(d.gzProto)
	}
	t.Logf("kept: %d v3 documents, %s of gzipped JSON, %s of gzipped protobuf", len(s.v3.byKey), mb(uint64(v3JSON)), mb(uint64(v3Proto)))
	t.Logf("kept: v2 document, %s of gzipped JSON, %s of gzipped protobuf", mb(uint64(len(s.v2.gzJSON))), mb(uint64(len(s.v2.gzProto))))
	end := measure()
	if grown := end.heap - base.heap; grown > 16<<20 {
		t.Errorf("live heap grew by %.1f MB after serving every document; want under 16 MB", float64(grown)/(1<<20))
	}
}

func (s *Service) allDocuments() []*document {
	docs := []*document{s.v3.index}
	for _, d := range s.v3.byKey {
		docs = append(docs, d)
	}
	return docs
}

type memory struct {
	heap     uint64 // live heap after a GC
	rss, hwm string // resident set now and at its peak
}

func (m memory) String() string {
	return "heap " + mb(m.heap) + ", RSS " + m.rss + ", peak RSS " + m.hwm
}

func mb(b uint64) string { return fmt.Sprintf("%.2f MB", float64(b)/(1<<20)) }

func measure() memory {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := memory{heap: ms.HeapAlloc}
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			m.rss = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			m.hwm = strings.TrimSpace(v)
		}
	}
	return m
}
