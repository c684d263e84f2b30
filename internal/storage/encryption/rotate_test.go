package encryption

import (
	"strings"
	"testing"
	"time"

	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
)

// keysOf lists each rule's first-provider key names, "identity" for a
// rule that writes plain values.
func keysOf(cfg *apiserverconfig.EncryptionConfiguration) []string {
	var out []string
	for _, rc := range cfg.Resources {
		kind, keys := writingKeys(&rc.Providers[0])
		if keys == nil {
			out = append(out, Identity)
			continue
		}
		var names []string
		for _, k := range *keys {
			names = append(names, k.Name)
		}
		out = append(out, kind+":"+strings.Join(names, ","))
	}
	return out
}

func TestRotationSteps(t *testing.T) {
	cfg, err := Parse([]byte(doc(`- resources: [secrets]
  providers:
  - aescbc: {keys: [{name: a, secret: ` + key32 + `}]}
  - identity: {}
- resources: [configmaps]
  providers:
  - identity: {}
  - secretbox: {keys: [{name: s, secret: ` + key32 + `}]}
- resources: ['*.apps']
  providers:
  - secretbox: {keys: [{name: s1, secret: ` + key32 + `}, {name: s0, secret: ` + key32b + `}]}
`)))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	added, fresh, err := addKeys(cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		cfg  *apiserverconfig.EncryptionConfiguration
		want []string
	}{
		{"before", cfg, []string{"aescbc:a", Identity, "secretbox:s1,s0"}},
		{"added: reads, does not write", added, []string{"aescbc:a,aescbckey-20260701T120000Z", Identity, "secretbox:s1,s0,secretboxkey-20260701T120000Z"}},
		{"promoted: writes", promoteKeys(added, fresh), []string{"aescbc:aescbckey-20260701T120000Z,a", Identity, "secretbox:secretboxkey-20260701T120000Z,s1,s0"}},
		{"retired", retireKeys(promoteKeys(added, fresh), fresh), []string{"aescbc:aescbckey-20260701T120000Z", Identity, "secretbox:secretboxkey-20260701T120000Z"}},
	}
	for _, s := range steps {
		if got := keysOf(s.cfg); strings.Join(got, " ") != strings.Join(s.want, " ") {
			t.Errorf("%s: %v, want %v", s.name, got, s.want)
		}
		// Each step is a configuration the server can load again.
		data, err := marshal(s.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(data); err != nil {
			t.Errorf("%s: does not parse back: %v\n%s", s.name, err, data)
		}
	}
	// Later providers are left alone: identity still reads plain values.
	retired := retireKeys(promoteKeys(added, fresh), fresh)
	if retired.Resources[0].Providers[1].Identity == nil {
		t.Error("identity was dropped")
	}
	// The steps copy: the configuration in use is never changed under
	// the transformers built from it.
	if got := keysOf(cfg); got[0] != "aescbc:a" {
		t.Errorf("input changed: %v", got)
	}
	// Two rotations within a second get distinct names.
	again, fresh2, err := addKeys(retired, now)
	if err != nil {
		t.Fatal(err)
	}
	if fresh2[0] != "aescbckey-20260701T120000Z-2" {
		t.Errorf("second key %q (%v)", fresh2[0], keysOf(again))
	}
	// Nothing to rotate when every rule writes plain values.
	plain, _ := Parse([]byte(doc("- resources: [secrets]\n  providers: [{identity: {}}]\n")))
	if _, f, _ := addKeys(plain, now); len(f) != 0 {
		t.Errorf("identity-only configuration got keys %v", f)
	}
}
