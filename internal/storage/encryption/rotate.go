package encryption

import (
	"slices"
	"time"

	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
)

// The steps of a key rotation are pure functions of the configuration, so
// that what each stage reads and writes with is plain to see and to test.
// A rule takes part when its first provider encrypts (aescbc, aesgcm,
// secretbox); each step returns a new configuration.

// writingKeys returns the keys of a rule's first provider, nil when the
// rule writes values as they are (identity).
func writingKeys(p *apiserverconfig.ProviderConfiguration) (kind string, keys *[]apiserverconfig.Key) {
	switch {
	case p.AESCBC != nil:
		return "aescbc", &p.AESCBC.Keys
	case p.AESGCM != nil:
		return "aesgcm", &p.AESGCM.Keys
	case p.Secretbox != nil:
		return "secretbox", &p.Secretbox.Keys
	}
	return "", nil
}

// addKeys gives every rule that encrypts a new key of its provider's kind,
// last, so that it reads but does not write yet: every server sharing the
// data must be able to read a key before any writes with it. It returns
// the new keys' names by rule index; none means nothing is encrypted.
func addKeys(cfg *apiserverconfig.EncryptionConfiguration, now time.Time) (*apiserverconfig.EncryptionConfiguration, map[int]string, error) {
	out := cfg.DeepCopy()
	fresh := map[int]string{}
	for i := range out.Resources {
		rc := &out.Resources[i]
		if len(rc.Providers) == 0 {
			continue
		}
		kind, keys := writingKeys(&rc.Providers[0])
		if keys == nil {
			continue
		}
		var taken []string
		for _, k := range *keys {
			taken = append(taken, k.Name)
		}
		k, err := newKey(kind, taken, now)
		if err != nil {
			return nil, nil, err
		}
		*keys = append(*keys, k)
		fresh[i] = k.Name
	}
	return out, fresh, nil
}

// promoteKeys moves each rule's new key first: it writes from then on,
// and the others only read.
func promoteKeys(cfg *apiserverconfig.EncryptionConfiguration, fresh map[int]string) *apiserverconfig.EncryptionConfiguration {
	out := cfg.DeepCopy()
	for i, name := range fresh {
		_, keys := writingKeys(&out.Resources[i].Providers[0])
		j := slices.IndexFunc(*keys, func(k apiserverconfig.Key) bool { return k.Name == name })
		k := (*keys)[j]
		*keys = append([]apiserverconfig.Key{k}, slices.Delete(*keys, j, j+1)...)
	}
	return out
}

// retireKeys keeps only each rule's new key in its first provider. Later
// providers stay: identity last still reads what was never encrypted.
func retireKeys(cfg *apiserverconfig.EncryptionConfiguration, fresh map[int]string) *apiserverconfig.EncryptionConfiguration {
	out := cfg.DeepCopy()
	for i, name := range fresh {
		_, keys := writingKeys(&out.Resources[i].Providers[0])
		*keys = slices.DeleteFunc(*keys, func(k apiserverconfig.Key) bool { return k.Name != name })
	}
	return out
}
