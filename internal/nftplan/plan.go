// Package nftplan holds the content of one nftables table as plain data,
// a Ruleset, and plans the single atomic transaction that turns the
// kernel's table from one content into another, carrying only what
// changed. The node's nftables programs (the service proxy, network
// policies) each generate a Ruleset with a pure function of their input
// and hand it to a Syncer, so that generating is golden-tested apart from
// applying, and applying is written once.
package nftplan

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"sigs.k8s.io/knftables"
)

// Syncer applies rule sets to one nftables table, each as one atomic
// transaction carrying only what changed since the last one it applied.
type Syncer struct {
	NFT knftables.Interface
	// Comment is the table's comment.
	Comment string
	applied *Ruleset
}

// Applied is the rule set the table holds since the last successful
// Sync; nil before the first and after a failed one.
func (s *Syncer) Applied() *Ruleset { return s.applied }

// Sync makes the table hold next. The first sync replaces the table
// whole; full rewrites every chain and map of next (repairing anything
// changed behind the program's back) but keeps the elements of dynamic
// sets (a proxy's session affinity); otherwise
// only the difference from the last applied rule set is sent. It returns
// the number of operations sent.
func (s *Syncer) Sync(ctx context.Context, next *Ruleset, full bool) (int, error) {
	tx := s.NFT.NewTransaction()
	Plan(tx, s.applied, next, full, s.Comment)
	if tx.NumOperations() == 0 {
		s.applied = next
		return 0, nil
	}
	if err := s.NFT.Run(ctx, tx); err != nil {
		// What the kernel holds is unknown now: the next sync starts over.
		s.applied = nil
		return 0, fmt.Errorf("nftables transaction: %w", err)
	}
	s.applied = next
	return tx.NumOperations(), nil
}

// Plan adds to tx the operations that turn a table holding prev (nil: an
// unknown table) into one holding next; comment is the table's.
func Plan(tx *knftables.Transaction, prev, next *Ruleset, full bool, comment string) {
	fresh := prev == nil
	if fresh {
		// Start clean: whatever an earlier run left goes, atomically with
		// the new content.
		tx.Add(&knftables.Table{Comment: knftables.PtrTo(comment)})
		tx.Delete(&knftables.Table{})
		prev = &Ruleset{}
		full = true
	}
	if full {
		tx.Add(&knftables.Table{Comment: knftables.PtrTo(comment)})
	}
	// Sets, maps and chains exist before anything refers to them.
	for _, name := range missing(next.Sets, prev.Sets, full) {
		tx.Add(next.Sets[name])
	}
	for _, name := range missing(next.Maps, prev.Maps, full) {
		tx.Add(next.Maps[name])
	}
	for _, name := range missing(next.Chains, prev.Chains, full) {
		c := next.Chains[name].Chain
		tx.Add(&c)
	}
	for _, name := range changedChains(prev, next, full) {
		c, old := next.Chains[name], prev.Chains[name]
		if !fresh && (old != nil || full) {
			tx.Flush(&knftables.Chain{Name: name})
		}
		for _, rule := range c.Rules {
			tx.Add(&knftables.Rule{Chain: name, Rule: rule})
		}
	}
	// Elements: a full sync refills the fixed maps and sets; otherwise
	// only changed elements go and come.
	if full {
		for _, name := range sortedKeys(next.Maps) {
			if fresh {
				break
			}
			tx.Flush(&knftables.Map{Name: name})
		}
		for _, name := range sortedKeys(next.Sets) {
			if !fresh && len(next.Sets[name].Flags) == 0 {
				tx.Flush(&knftables.Set{Name: name})
			}
		}
		for _, id := range sortedKeys(next.Elements) {
			tx.Add(next.Elements[id])
		}
	} else {
		var gone, added []string
		for id, e := range prev.Elements {
			if n, ok := next.Elements[id]; !ok || !sameElement(e, n) {
				gone = append(gone, id)
			}
		}
		for id, e := range next.Elements {
			if old, ok := prev.Elements[id]; !ok || !sameElement(old, e) {
				added = append(added, id)
			}
		}
		sort.Strings(gone)
		sort.Strings(added)
		for _, id := range gone {
			tx.Delete(prev.Elements[id])
		}
		for _, id := range added {
			tx.Add(next.Elements[id])
		}
	}
	// Chains and sets no longer wanted go last, once nothing refers to
	// them; chains are emptied first, as they may refer to each other.
	gone := missing(prev.Chains, next.Chains, false)
	for _, name := range gone {
		tx.Flush(&knftables.Chain{Name: name})
	}
	for _, name := range gone {
		tx.Delete(&knftables.Chain{Name: name})
	}
	for _, name := range missing(prev.Sets, next.Sets, false) {
		tx.Delete(&knftables.Set{Name: name})
	}
	for _, name := range missing(prev.Maps, next.Maps, false) {
		tx.Delete(&knftables.Map{Name: name})
	}
}

// missing is the sorted names in a but not in b (all of a when all).
func missing[V any](a, b map[string]V, all bool) []string {
	var out []string
	for name := range a {
		if _, ok := b[name]; all || !ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// changedChains is the sorted names of next's chains whose rules differ
// from prev's (all of them when full). Unchanged parts of a Builder are
// the same objects, so most comparisons end at the pointer.
func changedChains(prev, next *Ruleset, full bool) []string {
	var out []string
	for name, c := range next.Chains {
		old := prev.Chains[name]
		if full || old == nil || (old != c && !slices.Equal(old.Rules, c.Rules)) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func sameElement(a, b *knftables.Element) bool {
	if a == b {
		return true
	}
	return slices.Equal(a.Value, b.Value) && ptrEq(a.Comment, b.Comment)
}

func ptrEq(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
