package server

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/orca-project/orca/internal/apiserver"
	"github.com/orca-project/orca/internal/auth/bootstrappolicy"
	"github.com/orca-project/orca/internal/auth/node"
	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/auth/rbac"
)

// DefaultAuthorizationModes are upstream's production defaults.
var DefaultAuthorizationModes = []string{"Node", "RBAC"}

// authz holds the authorizers of one server. They read the API server's
// caches, which exist only once the API server does, so they reach it
// through api, set right after apiserver.New.
type authz struct {
	api   *apiserver.Server
	rbac  *rbac.Authorizer
	chain apiserver.AuthorizerChain
}

// newAuthz builds the chain for --authorization-mode: system:masters
// first (the server's own loopback clients use it), then each mode in
// the order given.
func newAuthz(modes []string) (*authz, error) {
	if len(modes) == 0 {
		modes = DefaultAuthorizationModes
	}
	z := &authz{}
	z.rbac = rbac.New(rbacSource{z})
	z.chain = apiserver.AuthorizerChain{apiserver.PrivilegedGroups{"system:masters"}}
	seen := map[string]bool{}
	for _, m := range modes {
		if seen[m] {
			return nil, fmt.Errorf("--authorization-mode: %q given twice", m)
		}
		seen[m] = true
		switch m {
		case "AlwaysAllow":
			z.chain = append(z.chain, apiserver.AlwaysAllow{})
		case "AlwaysDeny":
			z.chain = append(z.chain, apiserver.AlwaysDeny{})
		case "RBAC":
			z.chain = append(z.chain, z.rbac)
		case "Node":
			z.chain = append(z.chain, node.New(nodeSource{z}, nodeRules()))
		default:
			return nil, fmt.Errorf("--authorization-mode: unknown mode %q (AlwaysAllow, AlwaysDeny, Node, RBAC)", m)
		}
	}
	return z, nil
}

// enforcesRBAC reports whether role writes are checked for escalation:
// only when RBAC decides.
func (z *authz) enforcesRBAC() bool {
	for _, a := range z.chain {
		if a == z.rbac {
			return true
		}
	}
	return false
}

// nodeRules are the system:node role's rules, which the Node authorizer
// grants every node for what it does not subdivide.
func nodeRules() []rbacv1.PolicyRule {
	for _, r := range bootstrappolicy.ClusterRoles() {
		if r.Name == "system:node" {
			return r.Rules
		}
	}
	return nil
}

type rbacSource struct{ z *authz }

func (s rbacSource) ClusterRoleBindings() []*rbacv1.ClusterRoleBinding {
	return s.z.api.RBACSource().ClusterRoleBindings()
}
func (s rbacSource) RoleBindings(ns string) []*rbacv1.RoleBinding {
	return s.z.api.RBACSource().RoleBindings(ns)
}
func (s rbacSource) ClusterRole(name string) (*rbacv1.ClusterRole, error) {
	return s.z.api.RBACSource().ClusterRole(name)
}
func (s rbacSource) Role(ns, name string) (*rbacv1.Role, error) {
	return s.z.api.RBACSource().Role(ns, name)
}

type nodeSource struct{ z *authz }

func (s nodeSource) PodsOnNode(n string) []*corev1.Pod { return s.z.api.NodeSource().PodsOnNode(n) }
func (s nodeSource) PersistentVolumeClaim(ns, name string) *corev1.PersistentVolumeClaim {
	return s.z.api.NodeSource().PersistentVolumeClaim(ns, name)
}

// reconcilePolicy writes the bootstrap RBAC policy through the API as the
// server's own admin, retrying until it holds: components started after
// it rely on their roles.
func reconcilePolicy(ctx context.Context, opts Options, tlsDir string, ca *pki.Pair, port int) error {
	client, err := adminClient(opts, tlsDir, ca, port, "orca-rbac-bootstrap", 100, 200)
	if err != nil {
		return err
	}
	return retryFor(ctx, 500*time.Millisecond, "bootstrap RBAC policy", func() error { return bootstrappolicy.Reconcile(ctx, client, opts.Log) })
}
