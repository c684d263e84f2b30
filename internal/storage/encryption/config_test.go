package encryption

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage/value"
)

// Keys of the right sizes, base64 as the file holds them.
var (
	key16  = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 16))
	key32  = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	key32b = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))
)

func doc(resources string) string {
	return "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n" + resources
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, file, want string
	}{
		{"empty", "  \n", "the file is empty"},
		{"not yaml", "{{{", "decode"},
		{"wrong kind", "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n", "AdmissionConfiguration"},
		{"wrong version", "apiVersion: apiserver.config.k8s.io/v9\nkind: EncryptionConfiguration\n", "v9"},
		{"no resources", doc(""), "resources: Required value: at least one resources is required"},
		{"no providers", doc("- resources: [secrets]\n"), "resources[0].providers: Required value"},
		{"no resource names", doc("- providers: [{identity: {}}]\n"), "resources[0].resources: Required value"},
		{"empty provider", doc("- resources: [secrets]\n  providers: [{}]\n"), "provider does not contain any of the expected providers"},
		{"two in one", doc("- resources: [secrets]\n  providers:\n  - identity: {}\n    aescbc: {keys: [{name: k, secret: " + key32 + "}]}\n"), "more than one provider specified in a single element"},
		{"short key", doc("- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{name: k, secret: " + base64.StdEncoding.EncodeToString([]byte("8 bytes!")) + "}]}\n"),
			`resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 8, expected one of [16 24 32]`},
		{"secretbox needs 32", doc("- resources: [secrets]\n  providers:\n  - secretbox: {keys: [{name: k, secret: " + key16 + "}]}\n"), "got 16, expected one of [32]"},
		{"not base64", doc("- resources: [secrets]\n  providers:\n  - aesgcm: {keys: [{name: k, secret: '***'}]}\n"), "secrets must be base64 encoded"},
		{"no keys", doc("- resources: [secrets]\n  providers:\n  - aescbc: {keys: []}\n"), "aescbc.keys: Required value"},
		{"unnamed key", doc("- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{secret: " + key32 + "}]}\n"), "keys[0].name: Required value"},
		{"kms", doc("- resources: [secrets]\n  providers:\n  - kms: {apiVersion: v2, name: p, endpoint: unix:///k.sock}\n"), "KMS providers are not supported"},
		{"star alone", doc("- resources: ['*']\n  providers: [{identity: {}}]\n"), "use '*.' to encrypt all the resources from core API group"},
		{"capitals", doc("- resources: [Secrets]\n  providers: [{identity: {}}]\n"), "resource name should not contain capital letters"},
		{"events.k8s.io", doc("- resources: [events.events.k8s.io]\n  providers: [{identity: {}}]\n"), "stored using the 'events' API group"},
		{"overlap", doc("- resources: [secrets, '*.']\n  providers: [{identity: {}}]\n"), "overlapping resources"},
		{"duplicate", doc("- resources: [secrets, secrets]\n  providers: [{identity: {}}]\n"), "the same resource cannot be specified multiple times"},
		{"across groups", doc("- resources: ['deployments.*']\n  providers: [{identity: {}}]\n"), "encrypting the same resource across groups is not supported"},
		{"masked", doc("- resources: ['*.']\n  providers: [{identity: {}}]\n- resources: [configmaps]\n  providers: [{identity: {}}]\n"), `resource "configmaps" is masked by earlier rule "*."`},
		{"masked by any", doc("- resources: ['*.*']\n  providers: [{identity: {}}]\n- resources: [deployments.apps]\n  providers: [{identity: {}}]\n"), `resource "deployments.apps" is masked by earlier rule "*.*"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.file))
			if err == nil {
				t.Fatalf("accepted:\n%s", c.file)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, c.want)
			}
		})
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "enc.yaml")
	if err := os.WriteFile(path, []byte(doc("")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v does not name %s", err, path)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("a missing file was accepted")
	}
}

// Which providers serve a resource: its own rule, then its group's
// wildcard, then "*.*", as upstream; rules earlier in the file win.
func TestTransformerChoice(t *testing.T) {
	cfg, err := Parse([]byte(doc(`- resources: [events]
  providers: [{identity: {}}]
- resources: [secrets, configmaps]
  providers:
  - aescbc: {keys: [{name: k1, secret: ` + key32 + `}]}
  - identity: {}
- resources: ['*.apps']
  providers:
  - secretbox: {keys: [{name: sb, secret: ` + key32 + `}]}
- resources: ['*.']
  providers:
  - aesgcm: {keys: [{name: g, secret: ` + key16 + `}]}
- resources: ['*.*']
  providers:
  - aescbc: {keys: [{name: any, secret: ` + key32b + `}]}
`)))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		gr     schema.GroupResource
		writes string
		prefix string
	}{
		{schema.GroupResource{Resource: "secrets"}, "aescbc:k1", "k8s:enc:aescbc:v1:k1:"},
		{schema.GroupResource{Resource: "configmaps"}, "aescbc:k1", "k8s:enc:aescbc:v1:k1:"},
		{schema.GroupResource{Resource: "events"}, Identity, ""},
		{schema.GroupResource{Group: "apps", Resource: "deployments"}, "secretbox:sb", "k8s:enc:secretbox:v1:sb:"},
		{schema.GroupResource{Resource: "pods"}, "aesgcm:g", "k8s:enc:aesgcm:v1:g:"},
		{schema.GroupResource{Group: "batch", Resource: "jobs"}, "aescbc:any", "k8s:enc:aescbc:v1:any:"},
	}
	ctx := context.Background()
	for _, c := range cases {
		p := ts.lookup(c.gr)
		if p == nil || p.write() != c.writes {
			t.Errorf("%s: writes with %v, want %s", c.gr, p, c.writes)
			continue
		}
		tr := ts.TransformerForResource(c.gr)
		key := value.DefaultContext("/registry/" + c.gr.Resource + "/ns/a")
		out, err := tr.TransformToStorage(ctx, []byte("k8s\x00plain"), key)
		if err != nil {
			t.Fatal(err)
		}
		if c.prefix == "" {
			if string(out) != "k8s\x00plain" {
				t.Errorf("%s: identity wrote %q", c.gr, out)
			}
		} else if !bytes.HasPrefix(out, []byte(c.prefix)) || bytes.Contains(out, []byte("plain")) {
			t.Errorf("%s: wrote %q, want prefix %q and no plaintext", c.gr, out, c.prefix)
		}
		back, stale, err := tr.TransformFromStorage(ctx, out, key)
		if err != nil || stale || string(back) != "k8s\x00plain" {
			t.Errorf("%s: read back %q stale=%v err=%v", c.gr, back, stale, err)
		}
	}
	// Without "*.*", a resource no rule names has no transformer at all.
	only, err := Parse([]byte(doc("- resources: [secrets]\n  providers: [{identity: {}}]\n")))
	if err != nil {
		t.Fatal(err)
	}
	ts2, _ := New(only)
	if tr := ts2.TransformerForResource(schema.GroupResource{Resource: "pods"}); tr != nil {
		t.Errorf("pods got a transformer: %v", tr)
	}
}

// The first key writes; every key and identity read, and whatever a key
// other than the writing one read is stale (rewritten at the next update).
func TestReadersAndStale(t *testing.T) {
	ctx := context.Background()
	parse := func(s string) *Transformers {
		t.Helper()
		cfg, err := Parse([]byte(doc(s)))
		if err != nil {
			t.Fatal(err)
		}
		ts, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	secrets := schema.GroupResource{Resource: "secrets"}
	key := value.DefaultContext("/registry/secrets/ns/a")
	old := parse("- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{name: old, secret: " + key32 + "}]}\n")
	oldValue, err := old.TransformerForResource(secrets).TransformToStorage(ctx, []byte("k8s\x00v"), key)
	if err != nil {
		t.Fatal(err)
	}
	both := parse("- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{name: new, secret: " + key32b + "}, {name: old, secret: " + key32 + "}]}\n  - identity: {}\n")
	tr := both.TransformerForResource(secrets)
	newValue, _ := tr.TransformToStorage(ctx, []byte("k8s\x00v"), key)
	if !bytes.HasPrefix(newValue, []byte("k8s:enc:aescbc:v1:new:")) {
		t.Fatalf("wrote %q", newValue)
	}
	for _, c := range []struct {
		name  string
		data  []byte
		stale bool
	}{
		{"writing key", newValue, false},
		{"older key", oldValue, true},
		{"plain", []byte("k8s\x00v"), true},
	} {
		out, stale, err := tr.TransformFromStorage(ctx, c.data, key)
		if err != nil || string(out) != "k8s\x00v" || stale != c.stale {
			t.Errorf("%s: %q stale=%v err=%v, want stale=%v", c.name, out, stale, err, c.stale)
		}
	}
	// A value under a key the configuration lacks is an error, not
	// garbage, and identity does not pass it through.
	if _, _, err := old.TransformerForResource(secrets).TransformFromStorage(ctx, newValue, key); err == nil {
		t.Error("a value under an unknown key was read")
	}
	p := both.lookup(secrets)
	for data, want := range map[string]string{
		string(newValue):                       "aescbc:new",
		string(oldValue):                       "aescbc:old",
		"k8s\x00v":                             Identity,
		"k8s:enc:secretbox:v1:gone:ciphertext": "secretbox:gone",
		"k8s:enc:":                             "unknown",
	} {
		if got := p.labelOf([]byte(data)); got != want {
			t.Errorf("labelOf(%q) = %s, want %s", data[:min(len(data), 24)], got, want)
		}
	}
}

func TestLoadOrGenerate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tls", GeneratedFile)
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	first, err := LoadOrGenerate(path, now)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	rc := first.Resources[0]
	if len(rc.Resources) != 1 || rc.Resources[0] != "secrets" || len(rc.Providers) != 2 ||
		rc.Providers[0].AESCBC == nil || rc.Providers[1].Identity == nil {
		t.Fatalf("generated %+v", first)
	}
	if name := rc.Providers[0].AESCBC.Keys[0].Name; name != "aescbckey-20260701T120000Z" {
		t.Errorf("key name %s", name)
	}
	data, _ := os.ReadFile(path)
	if !bytes.HasPrefix(data, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n")) {
		t.Errorf("file does not read as upstream's:\n%s", data)
	}
	again, err := LoadOrGenerate(path, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if again.Resources[0].Providers[0].AESCBC.Keys[0] != rc.Providers[0].AESCBC.Keys[0] {
		t.Error("the key changed on the second start")
	}
}
