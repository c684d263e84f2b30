package nftplan

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"

	"sigs.k8s.io/knftables"
)

// Chain is a chain and its rules.
type Chain struct {
	knftables.Chain
	Rules []string
}

// Ruleset is the whole content of a table.
type Ruleset struct {
	Chains map[string]*Chain
	Sets   map[string]*knftables.Set
	Maps   map[string]*knftables.Map
	// Elements are keyed by ElementID.
	Elements map[string]*knftables.Element
}

// New is an empty Ruleset.
func New() *Ruleset {
	return &Ruleset{Chains: map[string]*Chain{}, Sets: map[string]*knftables.Set{}, Maps: map[string]*knftables.Map{}, Elements: map[string]*knftables.Element{}}
}

// ElementID is the key of an element of a set or map.
func ElementID(e *knftables.Element) string {
	return e.Set + e.Map + "\x00" + strings.Join(e.Key, " . ")
}

// Chain appends rules to the named chain, making it on first use.
func (r *Ruleset) Chain(name string, rules ...string) *Chain {
	c := r.Chains[name]
	if c == nil {
		c = &Chain{Chain: knftables.Chain{Name: name}}
		r.Chains[name] = c
	}
	c.Rules = append(c.Rules, rules...)
	return c
}

// Element adds e to its set or map.
func (r *Ruleset) Element(e *knftables.Element) { r.Elements[ElementID(e)] = e }

// BaseChain is a hooked chain; priority is relative to its named base.
func (r *Ruleset) BaseChain(name string, t knftables.BaseChainType, h knftables.BaseChainHook, p knftables.BaseChainPriority, rules ...string) {
	c := r.Chain(name, rules...)
	c.Type, c.Hook, c.Priority = &t, &h, &p
}

// Merge adds p's chains, sets and elements to r; a chain or set of the
// same name is replaced, not appended to.
func (r *Ruleset) Merge(p *Ruleset) {
	for k, v := range p.Chains {
		r.Chains[k] = v
	}
	for k, v := range p.Sets {
		r.Sets[k] = v
	}
	for k, v := range p.Maps {
		r.Maps[k] = v
	}
	for k, v := range p.Elements {
		r.Elements[k] = v
	}
}

// HashAndTruncate is upstream kube-proxy's chain-name scheme: a hash
// prefix keeps names unique, the readable rest says whose chain it is.
func HashAndTruncate(name string) string {
	hash := sha256.Sum256([]byte(name))
	name = base32.StdEncoding.EncodeToString(hash[:])[:8] + "-" + name
	if len(name) > knftables.NameLengthMax-16 {
		name = name[:knftables.NameLengthMax-16-3] + "..."
	}
	return name
}
