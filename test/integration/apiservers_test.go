package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/server"
	"github.com/orca-project/orca/internal/storage/embedded"
)

// TestSeveralAPIServers runs two servers on one external etcd, sharing
// their certificates and keys as servers of one cluster do: both serve
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
	start := func(name, ip string) *server.Instance {
		t.Helper()
		in, err := server.Start(ctx, server.Options{
			DataDir: filepath.Join(dir, name), BindAddress: ip, AdvertiseAddress: ip, Port: port,
			EtcdEndpoints: []string{sock}, EtcdDisableSnapshots: true,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		return in
	}
	a := start("a", "127.0.0.2")
	defer a.Stop()
	// The second server gets the first one's CA, keys and encryption key.
	if out, err := exec.Command("mkdir", "-p", filepath.Join(dir, "b")).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(dir, "a", "tls"), filepath.Join(dir, "b", "tls")).CombinedOutput(); err != nil {
		t.Fatalf("copy tls: %v %s", err, out)
	}
	b := start("b", "127.0.0.3")
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
