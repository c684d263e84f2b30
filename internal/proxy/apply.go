package proxy

import (
	"context"

	"sigs.k8s.io/knftables"

	"github.com/orca-project/orca/internal/nftplan"
)

// tableComment is the comment on the proxy's table.
const tableComment = "rules for the orca service proxy"

// Syncer applies the proxy's rule sets to its table (nftplan.Syncer).
type Syncer struct {
	NFT knftables.Interface
	s   *nftplan.Syncer
}

// Sync makes the table hold next (see nftplan.Syncer.Sync).
func (s *Syncer) Sync(ctx context.Context, next *Ruleset, full bool) (int, error) {
	if s.s == nil {
		s.s = &nftplan.Syncer{NFT: s.NFT, Comment: tableComment}
	}
	return s.s.Sync(ctx, next.Ruleset, full)
}

// Plan adds to tx the operations that turn a table holding prev (nil: an
// unknown table) into one holding next.
func Plan(tx *knftables.Transaction, prev, next *Ruleset, full bool) {
	var p *nftplan.Ruleset
	if prev != nil {
		p = prev.Ruleset
	}
	nftplan.Plan(tx, p, next.Ruleset, full, tableComment)
}
