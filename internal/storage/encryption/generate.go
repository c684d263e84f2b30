package encryption

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
)

// GeneratedFile is the name of the configuration the server generates, in
// its TLS directory beside the other keys it keeps (so that whoever copies
// that directory to set up or restore a server copies the key too).
const GeneratedFile = "encryption-config.yaml"

// LoadOrGenerate reads the server's own configuration at path, writing it
// at first start: Secrets under a new aescbc key, with identity last so
// that Secrets stored before encryption was on stay readable (and are
// encrypted at their next write). aescbc is k3s's choice too; aesgcm's
// random nonces would force a rotation every 200,000 writes.
func LoadOrGenerate(path string, now time.Time) (*apiserverconfig.EncryptionConfiguration, error) {
	if _, err := os.Stat(path); err == nil {
		return Load(path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("encryption config: %w", err)
	}
	key, err := newKey("aescbc", nil, now)
	if err != nil {
		return nil, err
	}
	cfg := &apiserverconfig.EncryptionConfiguration{Resources: []apiserverconfig.ResourceConfiguration{{
		Resources: []string{"secrets"},
		Providers: []apiserverconfig.ProviderConfiguration{
			{AESCBC: &apiserverconfig.AESConfiguration{Keys: []apiserverconfig.Key{key}}},
			{Identity: &apiserverconfig.IdentityConfiguration{}},
		},
	}}}
	if err := save(path, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// newKey makes a random 32-byte key (AES-256, or secretbox's only size)
// named after the provider and the time, unlike every name in taken.
func newKey(kind string, taken []string, now time.Time) (apiserverconfig.Key, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return apiserverconfig.Key{}, fmt.Errorf("generate encryption key: %w", err)
	}
	base := kind + "key-" + now.UTC().Format("20060102T150405Z")
	name := base
	for i := 2; slices.Contains(taken, name); i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return apiserverconfig.Key{Name: name, Secret: base64.StdEncoding.EncodeToString(secret)}, nil
}

// save writes cfg to path, readable by the owner only, atomically: a
// crash leaves the previous configuration or the new one, never half.
func save(path string, cfg *apiserverconfig.EncryptionConfiguration) error {
	data, err := marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode encryption config: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("encryption config: %w", err)
	}
	tmp := path + ".tmp"
	// A file left by a crash keeps its mode through O_TRUNC.
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write encryption config: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		// The key must be on disk before values encrypted with it are.
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write encryption config: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
