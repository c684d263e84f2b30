package encryption

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/orca-project/orca/internal/storage"
)

// Errors of Rotate, matched with errors.Is.
var (
	ErrRotating     = errors.New("encryption: a key rotation is already running")
	ErrNotGenerated = errors.New("encryption: keys come from --encryption-provider-config; rotate them by editing that file, as upstream documents")
	ErrNotEncrypted = errors.New("encryption: no resource is encrypted (every rule writes with identity)")
)

// Resource is a served resource's place in etcd.
type Resource struct {
	schema.GroupResource
	// Prefix is its etcd key prefix, ending in "/".
	Prefix string
}

// Status is what `orca secrets-encrypt status` reports.
type Status struct {
	// Enabled is true when some resource is written encrypted.
	Enabled bool `json:"enabled"`
	// Generated is true when the server generated its configuration and
	// rotates its keys; false with --encryption-provider-config.
	Generated bool `json:"generated"`
	// Resources are the resources the configuration covers.
	Resources []ResourceStatus `json:"resources"`
}

// ResourceStatus counts one resource's stored objects by key.
type ResourceStatus struct {
	Resource string `json:"resource"`
	// Keys are the keys that read, in the order tried; the first writes.
	Keys []KeyStatus `json:"keys"`
	// Unknown counts objects under keys the configuration does not hold
	// ("aescbc:NAME", or "unknown"): they cannot be read.
	Unknown map[string]int `json:"unknown,omitempty"`
}

// KeyStatus is one key and how many objects it encrypts.
type KeyStatus struct {
	// Name is "PROVIDER:KEYNAME", or "identity" for plain values.
	Name    string `json:"name"`
	Active  bool   `json:"active"`
	Objects int    `json:"objects"`
}

// ManagerConfig describes what a Manager administers.
type ManagerConfig struct {
	Client       *clientv3.Client
	Transformers *Transformers
	// Config is the configuration Transformers were built from.
	Config *apiserverconfig.EncryptionConfiguration
	// Path is the generated configuration's file, which rotation
	// rewrites; empty when the operator's file is in use.
	Path string
	// Resources lists the served resources; it is called per operation.
	Resources func() []Resource
	Log       *slog.Logger
}

// Manager reports on encryption at rest and rotates the server's own key.
//
// Rotation is single-server: each server keeps its keys in its own data
// directory, and only this process's transformers switch in step with the
// rewrite. Servers sharing an etcd need one shared
// --encryption-provider-config, rotated as upstream documents (add the
// key on every server and restart, make it first and restart, rewrite,
// remove the old key). Rotate notices another writer using the old key and
// stops before retiring it.
type Manager struct {
	cfg      ManagerConfig
	now      func() time.Time
	rotating sync.Mutex
	mu       sync.Mutex // guards current
	current  *apiserverconfig.EncryptionConfiguration
}

// NewManager returns a manager.
func NewManager(cfg ManagerConfig) *Manager {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Manager{cfg: cfg, now: time.Now, current: cfg.Config}
}

// covered lists the resources the configuration covers, by prefix, each
// prefix once (a resource served as another shares its keys).
func (m *Manager) covered() []Resource {
	var out []Resource
	seen := map[string]bool{}
	for _, r := range m.cfg.Resources() {
		if !seen[r.Prefix] && m.cfg.Transformers.lookup(r.GroupResource) != nil {
			seen[r.Prefix] = true
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Prefix < out[j].Prefix })
	return out
}

// Status counts the stored objects of every covered resource by the key
// that encrypts them.
func (m *Manager) Status(ctx context.Context) (*Status, error) {
	st := &Status{Generated: m.cfg.Path != ""}
	for _, r := range m.covered() {
		p := m.cfg.Transformers.lookup(r.GroupResource)
		counts := map[string]int{}
		err := m.scan(ctx, r.Prefix, func(kv *kvPair) error {
			counts[p.labelOf(kv.value)]++
			return nil
		})
		if err != nil {
			return nil, err
		}
		rs := ResourceStatus{Resource: yamlName(r.GroupResource)}
		for i, k := range p.keys {
			rs.Keys = append(rs.Keys, KeyStatus{Name: k.label, Active: i == 0, Objects: counts[k.label]})
			delete(counts, k.label)
		}
		if len(counts) > 0 {
			rs.Unknown = counts
		}
		st.Enabled = st.Enabled || p.write() != Identity
		st.Resources = append(st.Resources, rs)
	}
	return st, nil
}

// Rotate replaces the key of every encrypting rule of the generated
// configuration, with no object unreadable at any moment:
//
//  1. a new key is added last: it reads, it does not write;
//  2. the new key is moved first: it writes. Transformers.Set returns once
//     no write still uses the old key;
//  3. every object read with another key (or stored plain) is written
//     again, compared on its revision, so a concurrent write wins;
//  4. a second pass must find nothing left, then the old keys go.
//
// The file is written before each switch, so a crash leaves a
// configuration that reads everything stored; running Rotate again
// finishes the job.
func (m *Manager) Rotate(ctx context.Context) (*Status, error) {
	if m.cfg.Path == "" {
		return nil, ErrNotGenerated
	}
	if !m.rotating.TryLock() {
		return nil, ErrRotating
	}
	defer m.rotating.Unlock()
	added, fresh, err := addKeys(m.config(), m.now())
	if err != nil {
		return nil, err
	}
	if len(fresh) == 0 {
		return nil, ErrNotEncrypted
	}
	if err := m.apply(added); err != nil {
		return nil, err
	}
	if err := m.apply(promoteKeys(added, fresh)); err != nil {
		return nil, err
	}
	m.cfg.Log.Info("encryption key rotation: new key writes; rewriting stored objects", "keys", fresh)
	n, err := m.rewrite(ctx)
	if err != nil {
		return nil, err
	}
	left, err := m.rewrite(ctx)
	if err != nil {
		return nil, err
	}
	if left > 0 {
		return nil, fmt.Errorf("encryption: %d objects were written with an old key during the rotation: another server shares this etcd with its own keys; the old key stays until a rotation completes", left)
	}
	if err := m.apply(retireKeys(m.config(), fresh)); err != nil {
		return nil, err
	}
	m.cfg.Log.Info("encryption key rotation done; old keys retired", "rewritten", n)
	return m.Status(ctx)
}

func (m *Manager) config() *apiserverconfig.EncryptionConfiguration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.current
}

// apply makes cfg the configuration on disk, then in memory.
func (m *Manager) apply(cfg *apiserverconfig.EncryptionConfiguration) error {
	if err := save(m.cfg.Path, cfg); err != nil {
		return err
	}
	if err := m.cfg.Transformers.Set(cfg); err != nil {
		return err
	}
	m.mu.Lock()
	m.current = cfg
	m.mu.Unlock()
	return nil
}

// rewrite writes again every stored object that a key other than the
// writing one reads, and returns how many it wrote. An object nothing
// reads stops it: retiring keys then could only make matters worse.
func (m *Manager) rewrite(ctx context.Context) (int, error) {
	n := 0
	for _, r := range m.covered() {
		t := m.cfg.Transformers.TransformerForResource(r.GroupResource)
		fence := t.(storage.WriteFence)
		err := m.scan(ctx, r.Prefix, func(kv *kvPair) error {
			dataCtx := value.DefaultContext(kv.key)
			plain, stale, err := t.TransformFromStorage(ctx, kv.value, dataCtx)
			if err != nil {
				return fmt.Errorf("encryption: %s cannot be read with any key: %w", kv.key, err)
			}
			if !stale {
				return nil
			}
			release := fence.HoldWrite()
			defer release()
			out, err := t.TransformToStorage(ctx, plain, dataCtx)
			if err != nil {
				return fmt.Errorf("encryption: rewrite %s: %w", kv.key, err)
			}
			resp, err := m.cfg.Client.Txn(ctx).
				If(clientv3.Compare(clientv3.ModRevision(kv.key), "=", kv.rev)).
				Then(clientv3.OpPut(kv.key, string(out))).
				Commit()
			if err != nil {
				return fmt.Errorf("encryption: rewrite %s: %w", kv.key, err)
			}
			// A failed compare means a newer write, which used the new key.
			if resp.Succeeded {
				n++
			}
			return nil
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

type kvPair struct {
	key   string
	value []byte
	rev   int64
}

// scan visits the values under prefix in pages, each at etcd's latest
// revision: a long scan never reads a compacted revision.
func (m *Manager) scan(ctx context.Context, prefix string, visit func(*kvPair) error) error {
	end := clientv3.GetPrefixRangeEnd(prefix)
	start := prefix
	for {
		resp, err := m.cfg.Client.Get(ctx, start, clientv3.WithRange(end), clientv3.WithLimit(256))
		if err != nil {
			return fmt.Errorf("encryption: list %s: %w", prefix, err)
		}
		for _, kv := range resp.Kvs {
			if err := visit(&kvPair{key: string(kv.Key), value: kv.Value, rev: kv.ModRevision}); err != nil {
				return err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}
