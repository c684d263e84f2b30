package embedded

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Member is what a cluster knows of one of its members.
type Member struct {
	ID         uint64
	Name       string // empty until the member has started once
	PeerURLs   []string
	ClientURLs []string
	Learner    bool
}

func membersOf(ms []*etcdserverpb.Member) []Member {
	out := make([]Member, 0, len(ms))
	for _, m := range ms {
		out = append(out, Member{ID: m.ID, Name: m.Name, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs, Learner: m.IsLearner})
	}
	return out
}

// Members lists the cluster's members.
func Members(ctx context.Context, c *clientv3.Client) ([]Member, error) {
	resp, err := c.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list etcd members: %w", err)
	}
	return membersOf(resp.Members), nil
}

// joinPlan is what adding a member at a peer URL takes, given the
// current members.
type joinPlan struct {
	// remove is a started member that already holds the peer URL: a
	// server whose data was lost (reinstalled, or reset) and that comes
	// back under the same address. Its old identity must go first, or
	// the cluster would count a member that never answers again.
	remove uint64
	// reuse is an unstarted member at the peer URL, added by an attempt
	// that stopped before the member started; it is started as is.
	reuse uint64
}

func planJoin(members []Member, peerURL string) joinPlan {
	for _, m := range members {
		if !slices.Contains(m.PeerURLs, peerURL) {
			continue
		}
		if m.Name == "" {
			return joinPlan{reuse: m.ID}
		}
		return joinPlan{remove: m.ID}
	}
	return joinPlan{}
}

// initialCluster is etcd's --initial-cluster for a member joining
// members, as `etcdctl member add` prints it: every member's peer URLs
// under its name, the new one under the name it will start with.
func initialCluster(members []Member, self uint64, name string) string {
	var parts []string
	for _, m := range members {
		n := m.Name
		if m.ID == self {
			n = name
		}
		for _, u := range m.PeerURLs {
			parts = append(parts, n+"="+u)
		}
	}
	return strings.Join(parts, ",")
}

// AddLearner adds a member named name at peerURL to the cluster c
// reaches, as a learner (it gets the data but no vote until promoted, so
// a slow joiner never costs the cluster its quorum), and returns its ID
// and the InitialCluster to start it with.
func AddLearner(ctx context.Context, c *clientv3.Client, name, peerURL string) (uint64, string, error) {
	members, err := Members(ctx, c)
	if err != nil {
		return 0, "", err
	}
	plan := planJoin(members, peerURL)
	if plan.remove != 0 {
		if _, err := c.MemberRemove(ctx, plan.remove); err != nil {
			return 0, "", fmt.Errorf("remove the stale etcd member %x at %s: %w", plan.remove, peerURL, err)
		}
	}
	id := plan.reuse
	for id == 0 {
		resp, err := c.MemberAddAsLearner(ctx, []string{peerURL})
		switch {
		case err == nil:
			id, members = resp.Member.ID, membersOf(resp.Members)
		case errors.Is(err, rpctypes.ErrTooManyLearners) || errors.Is(err, rpctypes.ErrUnhealthy):
			// etcd takes one learner at a time, and no member while
			// one it promoted just now is not yet connected: another
			// server is catching up; this one waits its turn.
			select {
			case <-ctx.Done():
				return 0, "", fmt.Errorf("add etcd member at %s: another member is still catching up: %w", peerURL, ctx.Err())
			case <-time.After(time.Second):
			}
		default:
			return 0, "", fmt.Errorf("add etcd member at %s: %w", peerURL, err)
		}
	}
	return id, initialCluster(members, id, name), nil
}

// Promote makes the learner id a voting member once it has caught up
// with the leader, retrying until then or until ctx ends.
func Promote(ctx context.Context, c *clientv3.Client, id uint64, retry time.Duration) error {
	for {
		_, err := c.MemberPromote(ctx, id)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, rpctypes.ErrMemberNotLearner):
			// Promoted already, by an earlier attempt that lost its answer.
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("promote etcd member %x: %w (last error: %v)", id, ctx.Err(), err)
		case <-time.After(retry):
		}
	}
}

// EnsurePeerURL makes the cluster advertise peerURL for member id, for a
// member whose address changed since it was added (a single server that
// first listened on a unix socket and now serves peers on the network).
func EnsurePeerURL(ctx context.Context, c *clientv3.Client, id uint64, peerURL string) (bool, error) {
	members, err := Members(ctx, c)
	if err != nil {
		return false, err
	}
	for _, m := range members {
		if m.ID != id {
			continue
		}
		if slices.Equal(m.PeerURLs, []string{peerURL}) {
			return false, nil
		}
		if _, err := c.MemberUpdate(ctx, id, []string{peerURL}); err != nil {
			return false, fmt.Errorf("advertise etcd peer URL %s: %w", peerURL, err)
		}
		return true, nil
	}
	return false, fmt.Errorf("etcd member %x is not in its cluster", id)
}

// Remove takes the member with the given name or peer URL out of the
// cluster; a member that is not there is not an error.
func Remove(ctx context.Context, c *clientv3.Client, nameOrPeerURL string) (bool, error) {
	members, err := Members(ctx, c)
	if err != nil {
		return false, err
	}
	for _, m := range members {
		if m.Name == nameOrPeerURL || slices.Contains(m.PeerURLs, nameOrPeerURL) {
			if _, err := c.MemberRemove(ctx, m.ID); err != nil {
				return false, fmt.Errorf("remove etcd member %s (%x): %w", m.Name, m.ID, err)
			}
			return true, nil
		}
	}
	return false, nil
}
