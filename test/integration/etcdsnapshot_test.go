package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/etcdsnapshot"
	"github.com/orca-project/orca/internal/server"
)

// TestEtcdSnapshotRestore takes a snapshot of a running server as
// `orca etcd-snapshot save` does, restores it as `orca server
// --cluster-reset --cluster-reset-restore-path` does into another data
// directory, and checks that a server started there serves every object
// with its resourceVersion. It runs servers of its own, in directories of
// its own: the shared server is never stopped.
func TestEtcdSnapshotRestore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes of its own")
	}
	ctx := context.Background()
	dir := t.TempDir()
	start := func(dataDir string) (*server.Instance, kubernetes.Interface) {
		t.Helper()
		in, err := server.Start(ctx, server.Options{
			DataDir: dataDir, BindAddress: "127.0.0.1", Port: 0,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", in.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		cfg.QPS, cfg.Burst = 1000, 1000
		return in, kubernetes.NewForConfigOrDie(cfg)
	}

	src := filepath.Join(dir, "src")
	in, c := start(src)
	stopped := false
	defer func() {
		if !stopped {
			in.Stop()
		}
	}()
	const ns, count = "snapshot", 10000
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		versions = map[string]string{}
		wg       sync.WaitGroup
		errs     = make(chan error, 16)
	)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < count; i += 16 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i)}, Data: map[string]string{"i": strconv.Itoa(i)}}
				got, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				versions[got.Name] = got.ResourceVersion
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	secret, err := c.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"k": []byte("secret value")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// One update, so that not every object is at its first version.
	cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "cm-0007", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["updated"] = "yes"
	if cm, err = c.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	versions[cm.Name] = cm.ResourceVersion

	snap, err := server.SaveSnapshot(ctx, src, "", etcdsnapshot.OnDemand, "node1")
	if err != nil {
		t.Fatal(err)
	}
	listed, err := etcdsnapshot.List(server.SnapshotDir(src, ""))
	if err != nil || len(listed) != 1 || listed[0].Name != snap.Name {
		t.Fatalf("snapshots after save: %v, %v", listed, err)
	}
	// A change after the snapshot, which the restore must not have.
	if err := c.CoreV1().ConfigMaps(ns).Delete(ctx, "cm-0001", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if err := in.Stop(); err != nil {
		t.Fatal(err)
	}

	// A new data directory, as on a replacement machine. The snapshot
	// holds etcd's keys; the CA and the key Secrets are encrypted with
	// are in DATA_DIR/tls, which comes back from the same backup.
	dst := filepath.Join(dir, "dst")
	if err := os.CopyFS(filepath.Join(dst, "tls"), os.DirFS(filepath.Join(src, "tls"))); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := server.ResetCluster(ctx, server.Options{DataDir: dst, Out: &out}, snap.Path); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), server.ClusterResetMessage) || !strings.Contains(out.String(), snap.Path) || strings.Contains(out.String(), "warning") {
		t.Errorf("cluster reset printed %q", out.String())
	}

	in2, c2 := start(dst)
	defer in2.Stop()
	list, err := c2.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.Name, "cm-") {
			got[cm.Name] = cm.ResourceVersion
		}
	}
	if len(got) != count {
		t.Errorf("%d ConfigMaps after restore, want %d", len(got), count)
	}
	for name, rv := range versions {
		if got[name] != rv {
			t.Errorf("%s: resourceVersion %q after restore, %q before", name, got[name], rv)
		}
	}
	updated, err := c2.CoreV1().ConfigMaps(ns).Get(ctx, "cm-0007", metav1.GetOptions{})
	if err != nil || updated.Data["updated"] != "yes" {
		t.Errorf("updated ConfigMap after restore: %v, %v", updated, err)
	}
	gotSecret, err := c2.CoreV1().Secrets(ns).Get(ctx, "s", metav1.GetOptions{})
	if err != nil || string(gotSecret.Data["k"]) != "secret value" || gotSecret.ResourceVersion != secret.ResourceVersion {
		t.Errorf("Secret after restore: %v, %v", gotSecret, err)
	}
	// The restored server goes on from the snapshot's revision.
	created, err := c2.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-restore"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	newRV, _ := strconv.ParseInt(created.ResourceVersion, 10, 64)
	for name, rv := range versions {
		if old, _ := strconv.ParseInt(rv, 10, 64); old >= newRV {
			t.Fatalf("new object's resourceVersion %d is not above %s's %d", newRV, name, old)
		}
	}
}
