package integration

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/server"
	"github.com/orca-project/orca/internal/storage/embedded"
)

// TestExternalEtcd runs a second control plane against an etcd it does not
// own, reached over etcd's client protocol as --etcd-endpoints would.
func TestExternalEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second etcd and control plane")
	}
	ctx := context.Background()
	dir := t.TempDir()
	sock := "unix://" + filepath.Join(dir, "etcd.sock")
	e, err := embedded.Start(ctx, embedded.Config{Dir: filepath.Join(dir, "etcd"), ClientURL: sock, PeerURL: "unix://" + filepath.Join(dir, "peer.sock")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	in, err := server.Start(ctx, server.Options{
		DataDir: filepath.Join(dir, "server"), BindAddress: "127.0.0.1", Port: 0,
		EtcdEndpoints: []string{sock},
		Log:           slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", in.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c := kubernetes.NewForConfigOrDie(cfg)
	if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ext"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The object is in the external etcd, under the registry prefix.
	resp, err := e.Client().Get(ctx, "/registry/configmaps/default/ext")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("object not in the external etcd: %v %v", err, resp)
	}
	// A missing etcd is a clear start-up error, not a hang.
	_, err = server.Start(ctx, server.Options{
		DataDir: filepath.Join(dir, "server2"), BindAddress: "127.0.0.1", Port: 0,
		EtcdEndpoints: []string{"unix://" + filepath.Join(dir, "nothing.sock")},
		Log:           slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err == nil {
		t.Fatal("start against a missing etcd succeeded")
	}
}
