package encryption

import (
	"bytes"
	"context"
	"crypto/aes"
	"encoding/base64"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/storage/value"
	aestransformer "k8s.io/apiserver/pkg/storage/value/encrypt/aes"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	"k8s.io/apiserver/pkg/storage/value/encrypt/secretbox"

	"github.com/orca-project/orca/internal/storage"
)

// Upstream's value prefixes; a key's name and ":" follow.
const (
	aesCBCPrefix    = "k8s:enc:aescbc:v1:"
	aesGCMPrefix    = "k8s:enc:aesgcm:v1:"
	secretboxPrefix = "k8s:enc:secretbox:v1:"
)

// Identity is the label of values stored as they are (no encryption).
const Identity = "identity"

// providers is what one configuration makes of one resource: the
// transformer, and its keys in the order they are tried (the first writes).
type providers struct {
	transformer value.Transformer
	keys        []key
}

// key names one key of a provider.
type key struct {
	// label is "PROVIDER:NAME", or "identity".
	label string
	// prefix starts every value the key encrypts (empty for identity).
	prefix []byte
}

// write is the label of the key that writes.
func (p *providers) write() string { return p.keys[0].label }

// labelOf names the key a stored value was written with: one of the
// resource's keys, "identity" for a plain value, or the value's own
// prefix for a key the configuration does not know.
func (p *providers) labelOf(data []byte) string {
	for _, k := range p.keys {
		if len(k.prefix) > 0 && bytes.HasPrefix(data, k.prefix) {
			return k.label
		}
	}
	if !bytes.HasPrefix(data, []byte("k8s:enc:")) {
		return Identity
	}
	// k8s:enc:PROVIDER:VERSION:NAME:... names an unknown key.
	parts := bytes.SplitN(data[:min(len(data), 256)], []byte(":"), 6)
	if len(parts) < 6 {
		return "unknown"
	}
	return string(parts[2]) + ":" + string(parts[4])
}

// build turns a configuration into each resource's providers, as
// kube-apiserver does: the first provider (and its first key) writes, a
// value's prefix selects the provider that reads it.
//
// A resource named by several rules gets their providers in order, as
// upstream; a rule that an earlier wildcard covers is refused, since it
// could never apply.
func build(cfg *apiserverconfig.EncryptionConfiguration) (map[schema.GroupResource]*providers, error) {
	type entry struct {
		list []value.PrefixTransformer
		keys []key
	}
	entries := map[schema.GroupResource]*entry{}
	for _, rc := range cfg.Resources {
		var list []value.PrefixTransformer
		var keys []key
		for _, pc := range rc.Providers {
			t, k, err := provider(pc)
			if err != nil {
				return nil, err
			}
			list = append(list, t)
			keys = append(keys, k...)
		}
		for _, r := range rc.Resources {
			gr := schema.ParseGroupResource(r)
			for _, w := range []schema.GroupResource{{Group: gr.Group, Resource: "*"}, {Group: "*", Resource: "*"}} {
				if _, masked := entries[w]; masked {
					return nil, fmt.Errorf("resource %q is masked by earlier rule %q", yamlName(gr), yamlName(w))
				}
			}
			e := entries[gr]
			if e == nil {
				e = &entry{}
				entries[gr] = e
			}
			e.list = append(e.list, list...)
			e.keys = append(e.keys, keys...)
		}
	}
	out := make(map[schema.GroupResource]*providers, len(entries))
	for gr, e := range entries {
		out[gr] = &providers{
			transformer: value.NewPrefixTransformers(fmt.Errorf("no matching prefix found"), e.list...),
			keys:        e.keys,
		}
	}
	return out, nil
}

// yamlName spells a group resource as the configuration file does.
func yamlName(gr schema.GroupResource) string {
	if gr.Group == "" && gr.Resource == "*" {
		return "*."
	}
	return gr.String()
}

// provider builds one provider entry: its prefixed transformer and its
// keys, in order.
func provider(pc apiserverconfig.ProviderConfiguration) (value.PrefixTransformer, []key, error) {
	switch {
	case pc.AESCBC != nil:
		return keyed(aesCBCPrefix, "aescbc", pc.AESCBC.Keys, func(key []byte) (value.Transformer, error) {
			block, err := aes.NewCipher(key)
			if err != nil {
				return nil, err
			}
			return aestransformer.NewCBCTransformer(block), nil
		})
	case pc.AESGCM != nil:
		return keyed(aesGCMPrefix, "aesgcm", pc.AESGCM.Keys, func(key []byte) (value.Transformer, error) {
			block, err := aes.NewCipher(key)
			if err != nil {
				return nil, err
			}
			return aestransformer.NewGCMTransformer(block)
		})
	case pc.Secretbox != nil:
		return keyed(secretboxPrefix, "secretbox", pc.Secretbox.Keys, func(key []byte) (value.Transformer, error) {
			if len(key) != 32 {
				return nil, fmt.Errorf("expected key size 32 for secretbox provider, got %d", len(key))
			}
			return secretbox.NewSecretboxTransformer([32]byte(key)), nil
		})
	case pc.Identity != nil:
		return value.PrefixTransformer{Transformer: identity.NewEncryptCheckTransformer(), Prefix: []byte{}}, []key{{label: Identity}}, nil
	}
	return value.PrefixTransformer{}, nil, fmt.Errorf("provider does not contain any of the expected providers: AESGCM, AESCBC, Secretbox, Identity")
}

// keyed builds a provider with named keys: the provider's prefix, then
// the key's name and ":", select the key that reads a value.
func keyed(prefix, kind string, keys []apiserverconfig.Key, newKey func([]byte) (value.Transformer, error)) (value.PrefixTransformer, []key, error) {
	var list []value.PrefixTransformer
	var labels []key
	for _, k := range keys {
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			return value.PrefixTransformer{}, nil, fmt.Errorf("could not obtain secret for named key %s: %w", k.Name, err)
		}
		t, err := newKey(secret)
		if err != nil {
			return value.PrefixTransformer{}, nil, fmt.Errorf("key %s: %w", k.Name, err)
		}
		list = append(list, value.PrefixTransformer{Transformer: t, Prefix: []byte(k.Name + ":")})
		labels = append(labels, key{label: kind + ":" + k.Name, prefix: []byte(prefix + k.Name + ":")})
	}
	t := value.NewPrefixTransformers(fmt.Errorf("no matching key was found for the provided %s transformer", kind), list...)
	return value.PrefixTransformer{Transformer: t, Prefix: []byte(prefix)}, labels, nil
}

// Transformers hold the transformer of every resource under one
// configuration, which Set may replace while the server runs (key
// rotation). Stores keep the transformer TransformerForResource gave them;
// it reads the configuration current at each call.
type Transformers struct {
	cur atomic.Pointer[map[schema.GroupResource]*providers]
	// writes is held for reading by every store write from encryption
	// to etcd's answer (storage.WriteFence), and for writing by Set.
	writes sync.RWMutex
}

// New returns the transformers of a valid configuration (see Parse).
func New(cfg *apiserverconfig.EncryptionConfiguration) (*Transformers, error) {
	t := &Transformers{}
	if err := t.Set(cfg); err != nil {
		return nil, err
	}
	return t, nil
}

// Set switches every resource to cfg. It returns once no write that used
// the previous configuration is still in flight, so that a caller
// retiring a key after Set knows no value encrypted with it is on its way.
func (t *Transformers) Set(cfg *apiserverconfig.EncryptionConfiguration) error {
	m, err := build(cfg)
	if err != nil {
		return err
	}
	t.writes.Lock()
	t.cur.Store(&m)
	t.writes.Unlock()
	return nil
}

// lookup finds a resource's providers as upstream does: the resource
// itself, then its group's wildcard, then "*.*". Nil means identity.
func (t *Transformers) lookup(gr schema.GroupResource) *providers {
	m := *t.cur.Load()
	if p := m[gr]; p != nil {
		return p
	}
	if p := m[schema.GroupResource{Group: gr.Group, Resource: "*"}]; p != nil {
		return p
	}
	return m[schema.GroupResource{Group: "*", Resource: "*"}]
}

// TransformerForResource returns the transformer of a resource's values,
// nil when the configuration leaves the resource alone (values stored as
// they are, no cost on its path). Which resources a configuration covers
// is fixed when the server starts: rotation changes keys only.
func (t *Transformers) TransformerForResource(gr schema.GroupResource) value.Transformer {
	if t.lookup(gr) == nil {
		return nil
	}
	return &resourceTransformer{gr: gr, t: t}
}

var _ value.ResourceTransformers = (*Transformers)(nil)

// resourceTransformer is one resource's view of the current configuration.
type resourceTransformer struct {
	gr schema.GroupResource
	t  *Transformers
}

var (
	_ value.Transformer  = (*resourceTransformer)(nil)
	_ storage.WriteFence = (*resourceTransformer)(nil)
)

func (r *resourceTransformer) current() value.Transformer {
	if p := r.t.lookup(r.gr); p != nil {
		return p.transformer
	}
	return identity.NewEncryptCheckTransformer()
}

func (r *resourceTransformer) TransformFromStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, bool, error) {
	return r.current().TransformFromStorage(ctx, data, dataCtx)
}

func (r *resourceTransformer) TransformToStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, error) {
	return r.current().TransformToStorage(ctx, data, dataCtx)
}

// HoldWrite implements storage.WriteFence.
func (r *resourceTransformer) HoldWrite() func() {
	r.t.writes.RLock()
	return r.t.writes.RUnlock
}
