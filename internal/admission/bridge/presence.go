package bridge

import (
	"fmt"
	"sync/atomic"

	"k8s.io/client-go/tools/cache"
)

// Presence says whether an informer holds any object at all. A plugin
// whose configurations (webhook configurations, policies) do not exist
// has nothing to dispatch, and every write would otherwise pay for
// adapting its attributes to upstream's and running the dispatcher's
// matching over an empty list.
type Presence struct {
	n      atomic.Int64
	synced func() bool
}

// NewPresence counts the objects inf holds from now on.
func NewPresence(inf cache.SharedIndexInformer) (*Presence, error) {
	p := &Presence{}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { p.n.Add(1) },
		DeleteFunc: func(any) { p.n.Add(-1) },
	})
	if err != nil {
		return nil, fmt.Errorf("count objects: %w", err)
	}
	p.synced = reg.HasSynced
	return p, nil
}

// None is true once the informer has synced and holds no object. Before
// the sync it is false, so that the plugin runs and refuses as upstream's
// does while it cannot know its configurations yet.
func (p *Presence) None() bool {
	return p != nil && p.n.Load() == 0 && p.synced()
}
