package apiserver

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orca-project/orca/internal/registry/builtin"
	"github.com/orca-project/orca/internal/storage"
	"github.com/orca-project/orca/internal/storage/embedded"
)

// testServer is an API server with the built-in resources over a real
// etcd, served over HTTPS, for tests that go through the whole handler.
type testServer struct {
	api    *Server
	store  *storage.Store
	config *rest.Config
	client kubernetes.Interface
}

// startTestServer starts one; cfg may set anything but the store and
// the resources. Compaction is off unless cfg asks for it. Each tweak
// changes the server before it serves anything.
func startTestServer(t testing.TB, cfg Config, tweaks ...func(*Server)) *testServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e, err := embedded.Start(ctx, embedded.Config{Dir: filepath.Join(t.TempDir(), "etcd"), LogLevel: "error"})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cfg.Store = storage.NewStore(e.Client(), storage.NewCodec())
	cfg.Resources = builtin.Resources()
	if cfg.CompactInterval == 0 {
		cfg.CompactInterval = -1
	}
	api, err := New(cfg)
	if err != nil {
		cancel()
		e.Close()
		t.Fatal(err)
	}
	for _, tweak := range tweaks {
		tweak(api)
	}
	done := make(chan struct{})
	go func() { _ = api.Run(ctx); close(done) }()
	srv := httptest.NewUnstartedServer(api.Handler())
	srv.StartTLS()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
		e.Close()
	})
	for !api.Ready() {
		time.Sleep(20 * time.Millisecond)
	}
	config := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: 1000, Burst: 1000}
	return &testServer{api: api, store: cfg.Store, config: config, client: kubernetes.NewForConfigOrDie(config)}
}
