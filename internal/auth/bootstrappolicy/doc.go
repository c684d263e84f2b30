// Package bootstrappolicy is the RBAC policy a new cluster starts with:
// upstream Kubernetes v1.37's default ClusterRoles and bindings (the user
// facing admin/edit/view roles and their aggregation, the system roles for
// nodes, the scheduler, the controller manager and discovery, one
// system:controller:* role per controller), the roles kube-system and
// kube-public hold, and the few roles Orca needs beyond upstream, which
// orca_policy.go keeps apart.
//
// The policy is plain data built with the k8s.io/api/rbac/v1 types, so that
// the authorizer and tests can read it without an API server. Reconcile
// writes it through the API as upstream's API server does at start-up:
// missing objects are created, and objects still marked
// rbac.authorization.kubernetes.io/autoupdate=true get back any rule or
// subject they lost, while what a user added is kept.
//
// The golden files under testdata list the policy in upstream's testdata
// format, one file per upstream file, so that the two can be compared line
// by line; `go test ./internal/auth/bootstrappolicy -update` rewrites them.
package bootstrappolicy
