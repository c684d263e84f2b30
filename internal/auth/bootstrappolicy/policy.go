package bootstrappolicy

import (
	"cmp"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Upstream's well-known users and groups (k8s.io/apiserver's user package).
const (
	systemMasters         = "system:masters"
	allAuthenticated      = "system:authenticated"
	allUnauthenticated    = "system:unauthenticated"
	allServiceAccounts    = "system:serviceaccounts"
	monitoringGroup       = "system:monitoring"
	kubeProxyUser         = "system:kube-proxy"
	kubeSchedulerUser     = "system:kube-scheduler"
	kubeControllerMgr     = "system:kube-controller-manager"
	aggregateToAdmin      = "rbac.authorization.k8s.io/aggregate-to-admin"
	aggregateToEdit       = "rbac.authorization.k8s.io/aggregate-to-edit"
	aggregateToView       = "rbac.authorization.k8s.io/aggregate-to-view"
	kubeSystemNamespace   = metav1.NamespaceSystem
	kubePublicNamespace   = metav1.NamespacePublic
	kubeDNSServiceAccount = "kube-dns"
)

// ClusterRoles is every default ClusterRole: upstream's, the
// system:controller:* roles, and Orca's own, sorted by name.
func ClusterRoles() []rbacv1.ClusterRole {
	return sortedByName(slices.Concat(clusterRoles(), controllerRoles(), orcaClusterRoles()))
}

// ClusterRoleBindings is every default ClusterRoleBinding, sorted by name.
func ClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	return sortedByName(slices.Concat(clusterRoleBindings(), controllerRoleBindings(), orcaClusterRoleBindings()))
}

// NamespaceRoles is every default Role, by namespace.
func NamespaceRoles() map[string][]rbacv1.Role {
	out := map[string][]rbacv1.Role{}
	for _, r := range slices.Concat(namespaceRoles(), orcaNamespaceRoles()) {
		out[r.Namespace] = append(out[r.Namespace], r)
	}
	for ns := range out {
		out[ns] = sortedByName(out[ns])
	}
	return out
}

// NamespaceRoleBindings is every default RoleBinding, by namespace.
func NamespaceRoleBindings() map[string][]rbacv1.RoleBinding {
	out := map[string][]rbacv1.RoleBinding{}
	for _, b := range slices.Concat(namespaceRoleBindings(), orcaNamespaceRoleBindings()) {
		out[b.Namespace] = append(out[b.Namespace], b)
	}
	for ns := range out {
		out[ns] = sortedByName(out[ns])
	}
	return out
}

type named interface {
	rbacv1.ClusterRole | rbacv1.ClusterRoleBinding | rbacv1.Role | rbacv1.RoleBinding
}

func sortedByName[T named](in []T) []T {
	name := func(v T) string {
		switch o := any(v).(type) {
		case rbacv1.ClusterRole:
			return o.Name
		case rbacv1.ClusterRoleBinding:
			return o.Name
		case rbacv1.Role:
			return o.Name
		case rbacv1.RoleBinding:
			return o.Name
		}
		return ""
	}
	slices.SortStableFunc(in, func(a, b T) int { return cmp.Compare(name(a), name(b)) })
	return in
}

// aggregated is one of the user-facing roles whose rules the
// clusterrole-aggregation controller fills from the roles labelled for it.
func aggregated(name, selectLabel string, labels map[string]string) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{
		ObjectMeta: defaultMeta(name, "", labels),
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{selectLabel: "true"}},
		}},
	}
}

// clusterRoles are upstream's ClusterRoles other than the controllers'.
func clusterRoles() []rbacv1.ClusterRole {
	aggregateTo := func(name, label string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
		return rbacv1.ClusterRole{ObjectMeta: defaultMeta(name, "", map[string]string{label: "true"}), Rules: rules}
	}
	return []rbacv1.ClusterRole{
		// Anything, anywhere: bound to system:masters.
		clusterRole("cluster-admin",
			rule("*").groups("*").resources("*").build(),
			rule("*").urls("*").build(),
		),
		clusterRole("system:discovery",
			rule("get").urls(
				"/livez", "/readyz", "/healthz",
				"/version", "/version/",
				"/openapi", "/openapi/*",
				"/api", "/api/*",
				"/apis", "/apis/*",
			).build(),
		),
		// What anyone, signed in or not, may read about the cluster.
		clusterRole("system:public-info-viewer",
			rule("get").urls("/livez", "/readyz", "/healthz", "/version", "/version/").build(),
		),
		clusterRole("system:monitoring",
			rule("get").urls(
				"/metrics", "/metrics/slis",
				"/livez", "/readyz", "/healthz",
				"/livez/*", "/readyz/*", "/healthz/*",
				"/statusz",
			).build(),
			rule("get").groups(legacyGroup).resources("nodes/metrics").build(),
		),
		// What a user may learn about itself.
		clusterRole("system:basic-user",
			rule("create").groups(authorizationGroup).resources("selfsubjectaccessreviews", "selfsubjectrulesreviews").build(),
			rule("create").groups(authenticationGroup).resources("selfsubjectreviews").build(),
		),

		// The user-facing roles are unions of the aggregate-to-* roles
		// below (and of any role a user labels the same way): admin ⊇
		// edit ⊇ view.
		aggregated("admin", aggregateToAdmin, nil),
		aggregated("edit", aggregateToEdit, map[string]string{aggregateToAdmin: "true"}),
		aggregated("view", aggregateToView, map[string]string{aggregateToEdit: "true"}),

		aggregateTo("system:aggregate-to-admin", aggregateToAdmin,
			// Delegated access checks and granting roles within the
			// namespace are what admin has beyond edit.
			rule("create").groups(authorizationGroup).resources("localsubjectaccessreviews").build(),
			rule(readWrite...).groups(rbacGroup).resources("roles", "rolebindings").build(),
		),
		aggregateTo("system:aggregate-to-edit", aggregateToEdit,
			// Reading these may escalate (secrets, exec), so view lacks them.
			rule(read...).groups(legacyGroup).resources("pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy").build(),
			rule("impersonate").groups(legacyGroup).resources("serviceaccounts").build(),
			rule(write...).groups(legacyGroup).resources("pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward").build(),
			rule("create").groups(legacyGroup).resources("pods/eviction").build(),
			rule(write...).groups(legacyGroup).resources("replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
				"services", "services/proxy", "persistentvolumeclaims", "configmaps", "secrets").build(),
			rule("create").groups(legacyGroup).resources("serviceaccounts/token").build(),
			rule(write...).groups(legacyGroup, eventsGroup).resources("events").build(),
			rule(write...).groups(appsGroup).resources(
				"statefulsets", "statefulsets/scale",
				"daemonsets",
				"deployments", "deployments/scale", "deployments/rollback",
				"replicasets", "replicasets/scale").build(),
			rule(write...).groups(autoscalingGroup).resources("horizontalpodautoscalers").build(),
			rule(write...).groups(batchGroup).resources("jobs", "cronjobs").build(),
			rule(write...).groups(extensionsGroup).resources("daemonsets",
				"deployments", "deployments/scale", "deployments/rollback", "ingresses",
				"replicasets", "replicasets/scale", "replicationcontrollers/scale",
				"networkpolicies").build(),
			rule(write...).groups(policyGroup).resources("poddisruptionbudgets").build(),
			rule(write...).groups(networkingGroup).resources("ingresses", "networkpolicies").build(),
			rule(readWrite...).groups(coordinationGroup).resources("leases").build(),
			rule(write...).groups(resourceGroup).resources("resourceclaims", "resourceclaimtemplates").build(),
		),
		aggregateTo("system:aggregate-to-view", aggregateToView,
			// Nothing here escalates: no secrets, no exec.
			rule(read...).groups(legacyGroup).resources("pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
				"services", "services/status", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "configmaps").build(),
			rule(read...).groups(legacyGroup).resources("limitranges", "resourcequotas", "bindings",
				"pods/status", "resourcequotas/status", "namespaces/status", "replicationcontrollers/status", "pods/log").build(),
			// The scheduler's explanation of a pod the user may read.
			rule("get").groups(legacyGroup).resources("pods/explanation").build(),
			// Reading namespaces at namespace scope reads *this* namespace,
			// which tells a user where it has access.
			rule(read...).groups(legacyGroup).resources("namespaces").build(),
			rule(read...).groups(legacyGroup, eventsGroup).resources("events").build(),
			rule(read...).groups(discoveryGroup).resources("endpointslices").build(),
			rule(read...).groups(appsGroup).resources(
				"controllerrevisions",
				"statefulsets", "statefulsets/status", "statefulsets/scale",
				"daemonsets", "daemonsets/status",
				"deployments", "deployments/status", "deployments/scale",
				"replicasets", "replicasets/status", "replicasets/scale").build(),
			rule(read...).groups(autoscalingGroup).resources("horizontalpodautoscalers", "horizontalpodautoscalers/status").build(),
			rule(read...).groups(batchGroup).resources("jobs", "cronjobs", "cronjobs/status", "jobs/status").build(),
			rule(read...).groups(extensionsGroup).resources("daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
				"ingresses", "ingresses/status", "replicasets", "replicasets/scale", "replicasets/status", "replicationcontrollers/scale",
				"networkpolicies").build(),
			rule(read...).groups(policyGroup).resources("poddisruptionbudgets", "poddisruptionbudgets/status").build(),
			rule(read...).groups(networkingGroup).resources("ingresses", "ingresses/status", "networkpolicies").build(),
			rule(read...).groups(resourceGroup).resources("resourceclaims", "resourceclaims/status", "resourceclaimtemplates").build(),
		),

		clusterRole("system:heapster",
			rule(read...).groups(legacyGroup).resources("events", "pods", "nodes", "namespaces").build(),
			rule(read...).groups(extensionsGroup).resources("deployments").build(),
		),
		clusterRole("system:node", nodeRules()...),
		clusterRole("system:node-problem-detector",
			rule("get").groups(legacyGroup).resources("nodes").build(),
			rule("patch").groups(legacyGroup).resources("nodes/status").build(),
			eventsRule(),
		),
		clusterRole("system:kubelet-api-admin",
			// Reading nodes finds the kubelet to talk to.
			rule(read...).groups(legacyGroup).resources("nodes").build(),
			rule("proxy").groups(legacyGroup).resources("nodes").build(),
			rule("*").groups(legacyGroup).resources("nodes/proxy", "nodes/metrics", "nodes/stats", "nodes/log").build(),
			rule("*").groups(legacyGroup).resources("nodes/pods", "nodes/healthz", "nodes/configz").build(),
		),
		clusterRole("system:node-bootstrapper",
			rule("create", "get", "list", "watch").groups(certificatesGroup).resources("certificatesigningrequests").build(),
		),
		clusterRole("system:auth-delegator",
			rule("create").groups(authenticationGroup).resources("tokenreviews").build(),
			rule("create").groups(authorizationGroup).resources("subjectaccessreviews").build(),
		),
		clusterRole("system:kube-aggregator",
			rule(read...).groups(legacyGroup).resources("services", "endpoints").build(),
		),
		// Enough for the controller manager to build its shared informers
		// and the service accounts and tokens the controllers run as.
		clusterRole("system:kube-controller-manager",
			eventsRule(),
			rule("create").groups(coordinationGroup).resources("leases").build(),
			rule("get", "update").groups(coordinationGroup).resources("leases").names("kube-controller-manager").build(),
			rule("create").groups(legacyGroup).resources("secrets", "serviceaccounts").build(),
			rule("delete").groups(legacyGroup).resources("secrets").build(),
			rule("get").groups(legacyGroup).resources("namespaces", "secrets", "serviceaccounts", "configmaps").build(),
			rule("update").groups(legacyGroup).resources("secrets", "serviceaccounts").build(),
			rule("create").groups(authenticationGroup).resources("tokenreviews").build(),
			rule("create").groups(authorizationGroup).resources("subjectaccessreviews").build(),
			rule("list", "watch").groups("*").resources("*").build(),
			rule("create").groups(legacyGroup).resources("serviceaccounts/token").build(),
		),
		clusterRole("system:kube-dns",
			rule("list", "watch").groups(legacyGroup).resources("endpoints", "services").build(),
		),
		clusterRole("system:kube-scheduler", kubeSchedulerRules()...),
		clusterRole("system:volume-scheduler",
			rule("get", "list", "watch", "update", "patch").groups(legacyGroup).resources("persistentvolumes").build(),
			rule(read...).groups(storageGroup).resources("storageclasses").build(),
			rule("get", "list", "watch", "update", "patch").groups(legacyGroup).resources("persistentvolumeclaims").build(),
		),
		clusterRole("system:node-proxier",
			rule("list", "watch").groups(legacyGroup).resources("services", "endpoints").build(),
			rule(read...).groups(legacyGroup).resources("nodes").build(),
			eventsRule(),
			rule("list", "watch").groups(networkingGroup).resources("servicecidrs").build(),
			rule("list", "watch").groups(discoveryGroup).resources("endpointslices").build(),
		),
		clusterRole("system:persistent-volume-provisioner",
			rule("get", "list", "watch", "create", "delete").groups(legacyGroup).resources("persistentvolumes").build(),
			// update lets the provisioner annotate the claim it serves.
			rule("get", "list", "watch", "update").groups(legacyGroup).resources("persistentvolumeclaims").build(),
			rule(read...).groups(storageGroup).resources("storageclasses").build(),
			// Provisioners watch events to learn why a claim is pending.
			rule("watch").groups(legacyGroup).resources("events").build(),
			eventsRule(),
		),
		clusterRole("system:certificates.k8s.io:certificatesigningrequests:nodeclient",
			rule("create").groups(certificatesGroup).resources("certificatesigningrequests/nodeclient").build(),
		),
		clusterRole("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
			rule("create").groups(certificatesGroup).resources("certificatesigningrequests/selfnodeclient").build(),
		),
		signerApprover("kube-apiserver-client-approver", "kubernetes.io/kube-apiserver-client"),
		signerApprover("kube-apiserver-client-kubelet-approver", "kubernetes.io/kube-apiserver-client-kubelet"),
		signerApprover("kubelet-serving-approver", "kubernetes.io/kubelet-serving"),
		signerApprover("legacy-unknown-approver", "kubernetes.io/legacy-unknown"),
		clusterRole("system:service-account-issuer-discovery",
			rule("get").urls(
				"/.well-known/openid-configuration", "/.well-known/openid-configuration/",
				"/openid/v1/jwks", "/openid/v1/jwks/",
			).build(),
		),
		// ClusterTrustBundle is GA in v1.37 (certificates.k8s.io/v1), so
		// its gated role is part of the default policy.
		clusterRole("system:cluster-trust-bundle-discovery",
			rule(read...).groups(certificatesGroup).resources("clustertrustbundles").build(),
		),
	}
}

// signerApprover may approve requests for one signer.
func signerApprover(name, signer string) rbacv1.ClusterRole {
	return clusterRole("system:certificates.k8s.io:"+name,
		rule("approve").groups(certificatesGroup).resources("signers").names(signer).build(),
	)
}

// nodeRules are what a kubelet needs; the Node authorizer and the
// NodeRestriction admission plugin narrow them to the node's own objects.
func nodeRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		// Checking API access; these creates change nothing.
		rule("create").groups(authenticationGroup).resources("tokenreviews").build(),
		rule("create").groups(authorizationGroup).resources("subjectaccessreviews", "localsubjectaccessreviews").build(),
		// Service environment variables.
		rule(read...).groups(legacyGroup).resources("services").build(),
		// Registration, and the node's own status.
		rule("create", "get", "list", "watch").groups(legacyGroup).resources("nodes").build(),
		rule("update", "patch").groups(legacyGroup).resources("nodes/status").build(),
		rule("update", "patch").groups(legacyGroup).resources("nodes").build(),
		rule("create", "update", "patch").groups(legacyGroup, eventsGroup).resources("events").build(),
		rule(read...).groups(legacyGroup).resources("pods").build(),
		// Mirror pods of static pods.
		rule("create", "delete").groups(legacyGroup).resources("pods").build(),
		rule("update", "patch").groups(legacyGroup).resources("pods/status").build(),
		// Node-pressure eviction respects disruption budgets.
		rule("create").groups(legacyGroup).resources("pods/eviction").build(),
		// Secret and config map volumes and environment.
		rule(read...).groups(legacyGroup).resources("secrets", "configmaps").build(),
		rule("get").groups(legacyGroup).resources("persistentvolumeclaims", "persistentvolumes").build(),
		rule("get").groups(legacyGroup).resources("endpoints").build(),
		// Client and serving certificate rotation.
		rule("create", "get", "list", "watch").groups(certificatesGroup).resources("certificatesigningrequests").build(),
		// The node's heartbeat lease.
		rule("get", "create", "update", "patch", "delete").groups(coordinationGroup).resources("leases").build(),
		rule("get").groups(storageGroup).resources("volumeattachments").build(),
		// Projected service account tokens.
		rule("create").groups(legacyGroup).resources("serviceaccounts/token").build(),
		// Volume expansion on the node.
		rule("get", "update", "patch").groups(legacyGroup).resources("persistentvolumeclaims/status").build(),
		rule(read...).groups(storageGroup).resources("csidrivers").build(),
		rule("get", "create", "update", "patch", "delete").groups(storageGroup).resources("csinodes").build(),
		rule(read...).groups(nodeGroup).resources("runtimeclasses").build(),
		// Dynamic resource allocation.
		rule("get").groups(resourceGroup).resources("resourceclaims").build(),
		rule("deletecollection").groups(resourceGroup).resources("resourceslices").build(),
		// clusterTrustBundle projected volumes (GA in v1.37).
		rule(read...).groups(certificatesGroup).resources("clustertrustbundles").build(),
		// Service account tokens for image credential providers.
		rule("get").groups(legacyGroup).resources("serviceaccounts").build(),
		// podCertificate projected volumes (GA in v1.37).
		rule("get", "list", "watch", "create").groups(certificatesGroup).resources("podcertificaterequests").build(),
	}
}

func kubeSchedulerRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		eventsRule(),
		// Leader election.
		rule("create").groups(coordinationGroup).resources("leases").build(),
		rule("get", "update", "list", "watch").groups(coordinationGroup).resources("leases").names("kube-scheduler").build(),
		rule(readWrite...).groups(coordinationGroup).resources("leasecandidates").build(),
		rule(read...).groups(legacyGroup).resources("nodes").build(),
		// Preemption deletes pods.
		rule("get", "list", "watch", "delete").groups(legacyGroup).resources("pods").build(),
		rule("create").groups(legacyGroup).resources("pods/binding", "bindings").build(),
		rule("patch", "update").groups(legacyGroup).resources("pods/status").build(),
		// The scheduler.orca.io/explanation annotation a pod asks for.
		rule("patch").groups(legacyGroup).resources("pods").build(),
		// Spreading pods of one owner.
		rule(read...).groups(legacyGroup).resources("replicationcontrollers", "services").build(),
		rule(read...).groups(appsGroup, extensionsGroup).resources("replicasets").build(),
		rule(read...).groups(appsGroup).resources("statefulsets").build(),
		// Preemption honours disruption budgets.
		rule(read...).groups(policyGroup).resources("poddisruptionbudgets").build(),
		// Volume binding and topology.
		rule(read...).groups(legacyGroup).resources("persistentvolumeclaims", "persistentvolumes").build(),
		// Delegated authentication and authorization of its own endpoints.
		rule("create").groups(authenticationGroup).resources("tokenreviews").build(),
		rule("create").groups(authorizationGroup).resources("subjectaccessreviews").build(),
		// Volume limits.
		rule(read...).groups(storageGroup).resources("csinodes").build(),
		rule(read...).groups(storageGroup).resources("volumeattachments").build(),
		// Namespace selectors of pod affinity terms.
		rule(read...).groups(legacyGroup).resources("namespaces").build(),
		rule(read...).groups(storageGroup).resources("csidrivers").build(),
		rule(read...).groups(storageGroup).resources("csistoragecapacities").build(),
		// Dynamic resource allocation.
		rule(read...).groups(resourceGroup).resources("deviceclasses").build(),
		rule("get", "list", "watch", "update", "patch").groups(resourceGroup).resources("resourceclaims").build(),
		rule("get", "list", "watch", "update", "patch").groups(resourceGroup).resources("resourceclaims/status").build(),
		rule("update").groups(legacyGroup).resources("pods/finalizers").build(),
		rule(read...).groups(resourceGroup).resources("resourceslices").build(),
		// Extended resources backed by DRA: the scheduler creates the
		// claim itself.
		rule("create", "delete").groups(resourceGroup).resources("resourceclaims").build(),
		// DeviceTaintRules (GA in v1.37).
		rule(read...).groups(resourceGroup).resources("devicetaintrules").build(),
		// Writing a claim's allocation or reservations also needs this
		// (DRAResourceClaimGranularStatusAuthorization, beta and on since
		// v1.36).
		rule("update", "patch").groups(resourceGroup).resources("resourceclaims/binding").build(),
	}
}

// clusterRoleBindings are upstream's bindings of the roles above.
func clusterRoleBindings() []rbacv1.ClusterRoleBinding {
	return []rbacv1.ClusterRoleBinding{
		clusterRoleBinding("cluster-admin", "cluster-admin", groups(systemMasters)),
		clusterRoleBinding("system:monitoring", "system:monitoring", groups(monitoringGroup)),
		clusterRoleBinding("system:discovery", "system:discovery", groups(allAuthenticated)),
		clusterRoleBinding("system:basic-user", "system:basic-user", groups(allAuthenticated)),
		clusterRoleBinding("system:public-info-viewer", "system:public-info-viewer", groups(allAuthenticated, allUnauthenticated)),
		// Bound to no one: the Node authorizer grants nodes their rights;
		// the binding is kept so a cluster may add subjects to it.
		clusterRoleBinding("system:node", "system:node"),
		clusterRoleBinding("system:node-proxier", "system:node-proxier", users(kubeProxyUser)),
		clusterRoleBinding("system:kube-controller-manager", "system:kube-controller-manager", users(kubeControllerMgr)),
		clusterRoleBinding("system:kube-dns", "system:kube-dns", []rbacv1.Subject{serviceAccount(kubeSystemNamespace, kubeDNSServiceAccount)}),
		clusterRoleBinding("system:kube-scheduler", "system:kube-scheduler", users(kubeSchedulerUser)),
		clusterRoleBinding("system:volume-scheduler", "system:volume-scheduler", users(kubeSchedulerUser)),
		clusterRoleBinding("system:service-account-issuer-discovery", "system:service-account-issuer-discovery", groups(allServiceAccounts)),
		clusterRoleBinding("system:cluster-trust-bundle-discovery", "system:cluster-trust-bundle-discovery", groups(allServiceAccounts)),
	}
}
