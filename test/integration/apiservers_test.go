package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/server"
	"github.com/orca-project/orca/internal/storage/embedded"
)

// TestSeveralAPIServers runs two servers on one external etcd, the second
// joined with the first's server token, which shares the certificates and
// keys as servers of one cluster do: both serve
// the same objects, the `kubernetes` Service's endpoints name both, and a
// server that stops leaves them at once.
func TestSeveralAPIServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd and two control planes")
	}
	ctx := context.Background()
	dir := t.TempDir()
	sock := "unix://" + filepath.Join(dir, "etcd.sock")
	e, err := embedded.Start(ctx, embedded.Config{Dir: filepath.Join(dir, "etcd"), ClientURL: sock, PeerURL: "unix://" + filepath.Join(dir, "peer.sock")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// One port on two loopback addresses, as servers on two machines
	// share theirs: the Service has one target port.
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 on this machine: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	options := func(name, ip string) server.Options {
		return server.Options{
			DataDir: filepath.Join(dir, name), BindAddress: ip, AdvertiseAddress: ip, Port: port,
			EtcdEndpoints: []string{sock}, EtcdDisableSnapshots: true, AnonymousAuth: true,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		}
	}
	a, err := server.Start(ctx, options("a", "127.0.0.2"))
	if err != nil {
		t.Fatalf("start a: %v", err)
	}
	defer a.Stop()
	// The second server joins with the server token, which gets it the
	// first one's CA, keys and encryption key.
	token, err := os.ReadFile(filepath.Join(dir, "a", server.ServerTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	join := options("b", "127.0.0.3")
	join.JoinServer, join.JoinToken = fmt.Sprintf("https://127.0.0.2:%d", port), strings.TrimSpace(string(token))
	// A server that would keep its data in an embedded etcd of its own
	// is refused: it would be a second cluster.
	alone := join
	alone.EtcdEndpoints, alone.DataDir = nil, filepath.Join(dir, "alone")
	if _, err := server.Start(ctx, alone); err == nil || !strings.Contains(err.Error(), "--etcd-endpoints") {
		t.Errorf("a server without the cluster's external etcd joined: %v", err)
	}
	b, err := server.Start(ctx, join)
	if err != nil {
		t.Fatalf("start b: %v", err)
	}
	bStopped := false
	defer func() {
		if !bStopped {
			b.Stop()
		}
	}()
	clientOf := func(in *server.Instance) kubernetes.Interface {
		cfg, err := clientcmd.BuildConfigFromFlags("", in.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		return kubernetes.NewForConfigOrDie(cfg)
	}
	ca, cb := clientOf(a), clientOf(b)

	endpoints := func(want ...string) func() error {
		return func() error {
			ep, err := ca.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				return err
			}
			var got []string
			for _, ss := range ep.Subsets {
				for _, ad := range ss.Addresses {
					got = append(got, ad.IP)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				return fmt.Errorf("kubernetes endpoints %v, want %v", got, want)
			}
			slice, err := ca.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				return err
			}
			var sliceIPs []string
			for _, ep := range slice.Endpoints {
				sliceIPs = append(sliceIPs, ep.Addresses...)
			}
			slices.Sort(sliceIPs)
			if !slices.Equal(sliceIPs, want) {
				return fmt.Errorf("kubernetes endpointslice %v, want %v", sliceIPs, want)
			}
			return nil
		}
	}
	eventually(t, 20*time.Second, endpoints("127.0.0.2", "127.0.0.3"))

	// Both serve one cluster.
	if _, err := cb.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if s, err := ca.CoreV1().Secrets("default").Get(ctx, "shared", metav1.GetOptions{}); err != nil || string(s.Data["k"]) != "v" {
		t.Fatalf("secret written through b, read through a: %v %v", s, err)
	}

	// A server that stops leaves the endpoints at once, not after its
	// lease runs out.
	stopped := time.Now()
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	bStopped = true
	eventually(t, 20*time.Second, endpoints("127.0.0.2"))
	if d := time.Since(stopped); d > 10*time.Second {
		t.Errorf("endpoints updated %v after the server stopped", d)
	}
}
