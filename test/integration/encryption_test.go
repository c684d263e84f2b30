package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/server"
	"github.com/orca-project/orca/internal/storage/encryption"
)

// rawValue reads a key from etcd as it is stored.
func rawValue(t *testing.T, etcd *clientv3.Client, key string) []byte {
	t.Helper()
	resp, err := etcd.Get(context.Background(), key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("etcd get %s: %v (%d values)", key, err, len(resp.Kvs))
	}
	return resp.Kvs[0].Value
}

func encryptionClientFor(t *testing.T, cfg *rest.Config) *encryption.Client {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return encryption.NewClient(hc, cfg.Host)
}

// secretsStatus is the report's entry for secrets.
func secretsStatus(t *testing.T, st *encryption.Status) encryption.ResourceStatus {
	t.Helper()
	for _, r := range st.Resources {
		if r.Resource == "secrets" {
			return r
		}
	}
	t.Fatalf("no secrets in the report: %+v", st)
	return encryption.ResourceStatus{}
}

// A Secret is stored encrypted, with upstream's prefix, and read back in
// every way a client reads: get, list from etcd and from the cache, watch.
func TestSecretsEncryptedAtRest(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "enc")
	const plain = "hunter2-plaintext-canary"
	w, err := client.CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	s, err := client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		StringData: map[string]string{"password": plain},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v := rawValue(t, inst.Etcd, "/registry/secrets/"+ns+"/db")
	if !bytes.HasPrefix(v, []byte("k8s:enc:aescbc:v1:aescbckey-")) {
		t.Errorf("stored value starts %q, want upstream's aescbc prefix", v[:min(len(v), 40)])
	}
	if bytes.Contains(v, []byte(plain)) || bytes.Contains(v, []byte(base64.StdEncoding.EncodeToString([]byte(plain)))) || bytes.Contains(v, []byte("password")) {
		t.Error("the stored value holds the secret in plaintext")
	}
	// Other resources are not encrypted.
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"k": plain}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := rawValue(t, inst.Etcd, "/registry/configmaps/"+ns+"/cm"); !bytes.HasPrefix(v, []byte("k8s\x00")) || !bytes.Contains(v, []byte(plain)) {
		t.Errorf("a ConfigMap was transformed: %q", v[:min(len(v), 40)])
	}

	got, err := client.CoreV1().Secrets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil || string(got.Data["password"]) != plain {
		t.Fatalf("get: %v %v", got.Data, err)
	}
	for _, opts := range []metav1.ListOptions{{}, {ResourceVersion: "0"}, {Limit: 10}} {
		l, err := client.CoreV1().Secrets(ns).List(ctx, opts)
		if err != nil || len(l.Items) != 1 || string(l.Items[0].Data["password"]) != plain {
			t.Fatalf("list %+v: %v %v", opts, l, err)
		}
	}
	s.Data = map[string][]byte{"password": []byte(plain + "-2")}
	if _, err := client.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{plain, plain + "-2"} {
		select {
		case ev := <-w.ResultChan():
			if sec, ok := ev.Object.(*corev1.Secret); !ok || string(sec.Data["password"]) != want {
				t.Errorf("watch: %s %v, want password %q", ev.Type, ev.Object, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no watch event")
		}
	}

	st, err := encryptionClientFor(t, restCfg).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rs := secretsStatus(t, st)
	if !st.Enabled || !st.Generated || len(rs.Keys) != 2 || !rs.Keys[0].Active || rs.Keys[0].Objects < 1 || rs.Keys[1].Name != encryption.Identity {
		t.Errorf("status: %+v %+v", st, rs)
	}
}

// Only system:masters administer keys.
func TestSecretsEncryptionNeedsMasters(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "enc-authz")
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "sa", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(restCfg)
	cfg.BearerToken = tr.Status.Token
	_, err = encryptionClientFor(t, cfg).Rotate(ctx)
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("rotate as a service account: %v, want 403", err)
	}
}

// ownServer is a control plane of a test's own.
type ownServer struct {
	*server.Instance
	client kubernetes.Interface
	cfg    *rest.Config
	once   sync.Once
}

// Stop stops the server; the test's end stops it if the test does not.
func (s *ownServer) Stop() { s.once.Do(func() { _ = s.Instance.Stop() }) }

// startServer runs a control plane of its own on dir, without
// controllers or scheduler.
func startServer(t *testing.T, dir, encryptionConfig string) *ownServer {
	t.Helper()
	in, err := server.Start(context.Background(), server.Options{
		DataDir: dir, BindAddress: "127.0.0.1", Port: 0,
		EncryptionProviderConfig: encryptionConfig,
		DisableControllerManager: true, DisableScheduler: true,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &ownServer{Instance: in}
	t.Cleanup(s.Stop)
	if s.cfg, err = clientcmd.BuildConfigFromFlags("", in.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	s.client = kubernetes.NewForConfigOrDie(s.cfg)
	return s
}

// The generated key survives a restart; a configuration with identity
// first stores new and updated Secrets plainly while the old key still
// reads; identity alone writes plaintext; a bad file stops start-up.
func TestSecretsEncryptionRestartAndConfigFile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four control planes")
	}
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	secret := func(name, v string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"v": []byte(v)}}
	}
	read := func(c kubernetes.Interface, name, want string) {
		t.Helper()
		s, err := c.CoreV1().Secrets("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil || string(s.Data["v"]) != want {
			t.Fatalf("secret %s: %v %v, want %q", name, s, err, want)
		}
	}
	isPlain := func(in *ownServer, name string) bool {
		return bytes.HasPrefix(rawValue(t, in.Etcd, "/registry/secrets/default/"+name), []byte("k8s\x00"))
	}

	in := startServer(t, data, "")
	c := in.client
	if _, err := c.CoreV1().Secrets("default").Create(ctx, secret("a", "first"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stored := rawValue(t, in.Etcd, "/registry/secrets/default/a")
	keyFile := filepath.Join(data, "tls", encryption.GeneratedFile)
	fi, err := os.Stat(keyFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("generated configuration: %v %v", fi, err)
	}
	in.Stop()

	in = startServer(t, data, "")
	read(in.client, "a", "first")
	if again := rawValue(t, in.Etcd, "/registry/secrets/default/a"); !bytes.Equal(again, stored) {
		t.Error("the stored value changed across a restart")
	}
	in.Stop()

	// Upstream's way out of encryption: identity first, the old key after.
	generated, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := encryption.Parse(generated)
	if err != nil {
		t.Fatal(err)
	}
	oldKey := cfg.Resources[0].Providers[0].AESCBC.Keys[0]
	decrypt := filepath.Join(dir, "decrypt.yaml")
	writeFile(t, decrypt, fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - identity: {}
  - aescbc:
      keys:
      - name: %s
        secret: %s
`, oldKey.Name, oldKey.Secret))
	in = startServer(t, data, decrypt)
	c, cfgA := in.client, in.cfg
	read(c, "a", "first")
	if _, err := c.CoreV1().Secrets("default").Create(ctx, secret("b", "second"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !isPlain(in, "b") {
		t.Error("a new Secret was encrypted under identity-first")
	}
	// An unchanged update writes a value an old provider read (stale).
	a, _ := c.CoreV1().Secrets("default").Get(ctx, "a", metav1.GetOptions{})
	updated, err := c.CoreV1().Secrets("default").Update(ctx, a, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.ResourceVersion == a.ResourceVersion || !isPlain(in, "a") {
		t.Errorf("the no-op update did not rewrite the stale value (rv %s -> %s)", a.ResourceVersion, updated.ResourceVersion)
	}
	st, err := encryptionClientFor(t, cfgA).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Enabled || st.Generated {
		t.Errorf("status with identity first: %+v", st)
	}
	if _, err := encryptionClientFor(t, cfgA).Rotate(ctx); err == nil || !strings.Contains(err.Error(), "--encryption-provider-config") {
		t.Errorf("rotate with the operator's file: %v", err)
	}
	in.Stop()

	identityOnly := filepath.Join(dir, "identity.yaml")
	writeFile(t, identityOnly, "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers: [{identity: {}}]\n")
	in = startServer(t, data, identityOnly)
	c = in.client
	read(c, "a", "first")
	read(c, "b", "second")
	if _, err := c.CoreV1().Secrets("default").Create(ctx, secret("c", "third-plaintext"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := rawValue(t, in.Etcd, "/registry/secrets/default/c"); !bytes.HasPrefix(v, []byte("k8s\x00")) || !bytes.Contains(v, []byte("third-plaintext")) {
		t.Errorf("identity stored %q", v[:min(len(v), 40)])
	}
	in.Stop()

	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{name: k, secret: c2hvcnQ=}]}\n")
	_, err = server.Start(ctx, server.Options{DataDir: data, BindAddress: "127.0.0.1", EncryptionProviderConfig: bad, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "secret is not of the expected length") {
		t.Fatalf("start with an invalid file: %v", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Rotation under concurrent Secret writes and reads loses no write,
// never fails a read, and leaves every Secret under the new key alone.
func TestSecretsEncryptionRotateUnderLoad(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "enc-rotate")
	secrets := client.CoreV1().Secrets(ns)
	var (
		mu   sync.Mutex
		last = map[string]string{} // name -> last value written
	)
	for i := range 40 {
		name := "s" + strconv.Itoa(i)
		if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"v": []byte("0")}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		last[name] = "0"
	}
	ec := encryptionClientFor(t, restCfg)
	before, err := ec.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oldKey := secretsStatus(t, before).Keys[0].Name

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writes, reads atomic.Int64
	fail := t.Errorf
	for wk := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				v := fmt.Sprintf("w%d-%d", wk, n)
				if n%3 == 0 {
					name := fmt.Sprintf("new-%d-%d", wk, n)
					if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"v": []byte(v)}}, metav1.CreateOptions{}); err != nil {
						fail("create %s: %v", name, err)
						return
					}
					mu.Lock()
					last[name] = v
					mu.Unlock()
				} else {
					// Each writer owns the names with its residue, so the
					// last value each wrote is the one to find.
					name := "s" + strconv.Itoa(wk+3*rand.IntN(13))
					s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"v": []byte(v)}}
					if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
						fail("update %s: %v", name, err)
						return
					}
					mu.Lock()
					last[name] = v
					mu.Unlock()
				}
				writes.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Limit reads etcd (not the cache), page by page.
			l, err := secrets.List(ctx, metav1.ListOptions{Limit: 17})
			if err != nil {
				fail("list during rotation: %v", err)
				return
			}
			if _, err := secrets.Get(ctx, l.Items[rand.IntN(len(l.Items))].Name, metav1.GetOptions{}); err != nil {
				fail("get during rotation: %v", err)
				return
			}
			reads.Add(1)
		}
	}()
	time.Sleep(200 * time.Millisecond)
	after, err := ec.Rotate(ctx)
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("rotate: %v", err)
	}
	t.Logf("%d writes and %d reads during the rotation", writes.Load(), reads.Load())

	rs := secretsStatus(t, after)
	newKey := rs.Keys[0].Name
	if newKey == oldKey || !rs.Keys[0].Active || len(rs.Keys) != 2 || rs.Keys[1].Name != encryption.Identity || len(rs.Unknown) != 0 {
		t.Fatalf("after rotation: %+v (old key %s)", rs, oldKey)
	}
	for name, v := range last {
		s, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if err != nil || string(s.Data["v"]) != v {
			t.Errorf("%s: %v %v, want %q", name, s, err, v)
		}
	}
	// Every Secret in etcd is under the new key: none under the old one,
	// none plain.
	prefix := "k8s:enc:" + strings.Replace(newKey, ":", ":v1:", 1) + ":"
	resp, err := inst.Etcd.Get(ctx, "/registry/secrets/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		if !bytes.HasPrefix(kv.Value, []byte(prefix)) {
			t.Errorf("%s is stored as %q, want prefix %q", kv.Key, kv.Value[:min(len(kv.Value), 48)], prefix)
		}
	}
	now, err := ec.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := secretsStatus(t, now).Keys[0].Objects; n != len(resp.Kvs) {
		t.Errorf("status counts %d under the new key, etcd holds %d Secrets", n, len(resp.Kvs))
	}
	// A watch still sees changes after the switch of key.
	w, err := secrets.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=s0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := secrets.Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s0"}, Data: map[string][]byte{"v": []byte("after")}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-w.ResultChan():
			if s, ok := ev.Object.(*corev1.Secret); ok && ev.Type == watch.Modified && string(s.Data["v"]) == "after" {
				return
			}
		case <-timeout:
			t.Fatal("no watch event for the update after the rotation")
		}
	}
}
