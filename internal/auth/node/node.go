// Package node is upstream's Node authorizer: a kubelet's identity
// (system:node:NAME in group system:nodes) may read only the Secrets,
// ConfigMaps, PersistentVolumeClaims, PersistentVolumes and service
// account tokens of the pods bound to its node, its own Node, Lease and
// CSINode, and otherwise what the system:node role's rules allow. Where
// upstream keeps a graph of every object, Orca walks the node's own pods
// on each such request: a node holds few pods, and the API server's pod
// cache is already in memory.
package node

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/orca-project/orca/internal/auth/rbac"
	"github.com/orca-project/orca/internal/localpath"
)

// Group is the group every node identity belongs to.
const Group = "system:nodes"

// Source reads what the authorizer relates to a node.
type Source interface {
	// PodsOnNode lists the pods bound to the node (spec.nodeName).
	PodsOnNode(node string) []*corev1.Pod
	// PersistentVolumeClaim reads one claim; nil when missing.
	PersistentVolumeClaim(namespace, name string) *corev1.PersistentVolumeClaim
}

// Authorizer is the Node authorizer.
type Authorizer struct {
	src   Source
	rules []rbacv1.PolicyRule
}

// New returns a Node authorizer; rules are the system:node role's, which
// every node holds for what is not subdivided by object.
func New(src Source, rules []rbacv1.PolicyRule) *Authorizer {
	return &Authorizer{src: src, rules: rules}
}

var _ authorizer.UnconditionalAuthorizer = (*Authorizer)(nil)

// Identity reports whether u is a node and which: system:node:NAME in
// group system:nodes. A node user without a name yields ("", true).
func Identity(u user.Info) (string, bool) {
	if u == nil {
		return "", false
	}
	isNode := false
	for _, g := range u.GetGroups() {
		if g == Group {
			isNode = true
			break
		}
	}
	if !isNode || !strings.HasPrefix(u.GetName(), "system:node:") {
		return "", false
	}
	return strings.TrimPrefix(u.GetName(), "system:node:"), true
}

// Authorize implements authorizer.Authorizer.
func (a *Authorizer) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	node, isNode := Identity(attrs.GetUser())
	if !isNode {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if node == "" {
		return authorizer.DecisionNoOpinion, fmt.Sprintf("unknown node for user %q", attrs.GetUser().GetName()), nil
	}
	if attrs.IsResourceRequest() {
		switch attrs.GetAPIGroup() + "/" + attrs.GetResource() {
		case "/secrets":
			return a.readNamespaced(node, kindSecret, attrs)
		case "/configmaps":
			return a.readNamespaced(node, kindConfigMap, attrs)
		case "/persistentvolumeclaims":
			if attrs.GetSubresource() == "status" {
				switch attrs.GetVerb() {
				case "update", "patch":
					return a.related(node, kindPVC, attrs)
				}
				return authorizer.DecisionNoOpinion, "can only get/update/patch this type", nil
			}
			return a.get(node, kindPVC, attrs)
		case "/persistentvolumes":
			return a.persistentVolume(node, attrs)
		case "/serviceaccounts":
			if attrs.GetVerb() == "get" && attrs.GetSubresource() == "" {
				// The service accounts of its pods, whose UIDs a kubelet
				// puts in their certificate requests, as upstream allows.
				return a.related(node, kindServiceAccount, attrs)
			}
			if attrs.GetVerb() != "create" || attrs.GetName() == "" {
				return authorizer.DecisionNoOpinion, "can only create tokens for individual service accounts", nil
			}
			if attrs.GetSubresource() != "token" {
				return authorizer.DecisionNoOpinion, "can only create token subresource of serviceaccount", nil
			}
			return a.related(node, kindServiceAccount, attrs)
		case "coordination.k8s.io/leases":
			return lease(node, attrs)
		case "storage.k8s.io/csinodes":
			return csiNode(node, attrs)
		case "/nodes":
			return nodeObject(node, attrs)
		case "/pods":
			return a.pod(node, attrs)
		}
	}
	if rbac.RulesAllow(attrs, a.rules) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (a *Authorizer) readNamespaced(node string, k kind, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	switch attrs.GetVerb() {
	case "get", "list", "watch":
	default:
		return authorizer.DecisionNoOpinion, "can only read resources of this type", nil
	}
	if attrs.GetSubresource() != "" {
		return authorizer.DecisionNoOpinion, "cannot read subresource", nil
	}
	if attrs.GetNamespace() == "" {
		return authorizer.DecisionNoOpinion, "can only read namespaced object of this type", nil
	}
	return a.related(node, k, attrs)
}

func (a *Authorizer) get(node string, k kind, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	if attrs.GetVerb() != "get" {
		return authorizer.DecisionNoOpinion, "can only get individual resources of this type", nil
	}
	if attrs.GetSubresource() != "" {
		return authorizer.DecisionNoOpinion, "cannot get subresource", nil
	}
	return a.related(node, k, attrs)
}

func (a *Authorizer) related(node string, k kind, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	if attrs.GetName() == "" {
		return authorizer.DecisionNoOpinion, "No Object name found", nil
	}
	if Related(a.src, node, k, attrs.GetNamespace(), attrs.GetName()) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, fmt.Sprintf("no relationship found between node '%s' and this object", node), nil
}

func lease(node string, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	switch attrs.GetVerb() {
	case "get", "create", "update", "patch", "delete":
	default:
		return authorizer.DecisionNoOpinion, "can only get, create, update, patch, or delete a node lease", nil
	}
	if attrs.GetNamespace() != corev1.NamespaceNodeLease {
		return authorizer.DecisionNoOpinion, fmt.Sprintf("can only access leases in the %q system namespace", corev1.NamespaceNodeLease), nil
	}
	// A create names its lease only in the body: NodeRestriction checks it.
	if attrs.GetVerb() != "create" && attrs.GetName() != node {
		return authorizer.DecisionNoOpinion, "can only access node lease with the same name as the requesting node", nil
	}
	return authorizer.DecisionAllow, "", nil
}

// csiNode: a node registers its CSI drivers in the CSINode named after
// it. As upstream, its status (storage health) is closed while
// CSIVolumeHealth is off, as it is by default.
func csiNode(node string, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	switch attrs.GetSubresource() {
	case "":
		switch attrs.GetVerb() {
		case "get", "create", "update", "patch", "delete":
		default:
			return authorizer.DecisionNoOpinion, "can only get, create, update, patch, or delete a CSINode", nil
		}
	case "status":
		return authorizer.DecisionNoOpinion, "CSINode status access requires CSIVolumeHealth feature", nil
	default:
		return authorizer.DecisionNoOpinion, "cannot authorize CSINode subresources", nil
	}
	// A create names its CSINode only in the body: NodeRestriction checks it.
	if attrs.GetVerb() != "create" && attrs.GetName() != node {
		return authorizer.DecisionNoOpinion, "can only access CSINode with the same name as the requesting node", nil
	}
	return authorizer.DecisionAllow, "", nil
}

func nodeObject(node string, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	switch attrs.GetSubresource() {
	case "":
		switch attrs.GetVerb() {
		case "create", "update", "patch":
			// NodeRestriction limits a node to its own object.
			return authorizer.DecisionAllow, "", nil
		case "get", "list", "watch":
			switch attrs.GetName() {
			case node:
				return authorizer.DecisionAllow, "", nil
			case "":
				return authorizer.DecisionNoOpinion, fmt.Sprintf("node '%s' cannot read all nodes, only its own Node object", node), nil
			default:
				return authorizer.DecisionNoOpinion, fmt.Sprintf("node '%s' cannot read '%s', only its own Node object", node, attrs.GetName()), nil
			}
		}
	case "status":
		switch attrs.GetVerb() {
		case "update", "patch":
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// persistentVolume: the volumes of its pods, as upstream; besides, the
// local-path volumes kept on the node, which it watches by their node
// label and whose finalizer it removes once their directory is gone
// (NodeRestriction allows no other change).
func (a *Authorizer) persistentVolume(node string, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	if attrs.GetSubresource() == "" {
		switch attrs.GetVerb() {
		case "list", "watch":
			reqs, _ := attrs.GetLabelSelector()
			for _, r := range reqs {
				if r.Key() == localpath.NodeLabel && (r.Operator() == selection.Equals || r.Operator() == selection.DoubleEquals) &&
					r.Values().Len() == 1 && r.Values().Has(node) {
					return authorizer.DecisionAllow, "", nil
				}
			}
			return authorizer.DecisionNoOpinion, "can only list/watch persistentvolumes with the " + localpath.NodeLabel + " label selector of the node", nil
		case "update", "patch":
			return authorizer.DecisionAllow, "", nil
		}
	}
	return a.get(node, kindPV, attrs)
}

func (a *Authorizer) pod(node string, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	switch attrs.GetSubresource() {
	case "":
		switch attrs.GetVerb() {
		case "get":
			return a.related(node, kindPod, attrs)
		case "list", "watch":
			reqs, _ := attrs.GetFieldSelector()
			for _, r := range reqs {
				if r.Field == "spec.nodeName" && (r.Operator == selection.Equals || r.Operator == selection.DoubleEquals) && r.Value == node {
					return authorizer.DecisionAllow, "", nil
				}
			}
			if attrs.GetName() != "" {
				return a.related(node, kindPod, attrs)
			}
			return authorizer.DecisionNoOpinion, "can only list/watch pods with spec.nodeName field selector", nil
		case "create", "delete":
			// Mirror pods; NodeRestriction limits them to this node.
			return authorizer.DecisionAllow, "", nil
		}
	case "status":
		switch attrs.GetVerb() {
		case "update", "patch":
			return authorizer.DecisionAllow, "", nil
		}
	case "eviction":
		if attrs.GetVerb() == "create" {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}
