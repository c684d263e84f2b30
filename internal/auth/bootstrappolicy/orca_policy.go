package bootstrappolicy

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// What Orca needs beyond upstream's policy. Everything here carries the
// same label and annotation as upstream's objects, so Reconcile treats it
// alike, and is named so that it cannot collide with a future upstream
// role (system:orca:*, or a controller upstream does not have).

// DNSUser is the identity of Orca's in-process cluster DNS server, which
// answers from informers as CoreDNS's kubernetes plugin does and writes the
// kube-dns Service and its endpoints itself.
const DNSUser = "system:orca:dns"

// ServiceLBController is the service account the service-lb controller's
// role is bound to; upstream has no such controller (a cloud provider's
// service controller does its work).
const ServiceLBController = "service-lb-controller"

// KubeletAPIClient is the user the API server is to the kubelets (the
// subject of its kubelet client certificate), as kubeadm names it. Unlike
// kubeadm's, the certificate carries no admin group: its one right is
// system:kubelet-api-admin, since whoever holds it could present it to the
// API server as well.
const KubeletAPIClient = "kube-apiserver-kubelet-client"

// KubeletAPIAdminBinding binds system:kubelet-api-admin to
// KubeletAPIClient, as clusters built by hand bind it to their API
// server's user.
const KubeletAPIAdminBinding = "system:orca:kubelet-api-admin"

// NodeBootstrapGroup is the extra group of the bootstrap tokens machines
// join with (kubeadm's system:bootstrappers:kubeadm:default-node-token).
const NodeBootstrapGroup = "system:bootstrappers:orca:default-node-token"

// ClusterInfoRole lets anyone read kube-public/cluster-info, the CA and
// address a joining machine starts from (kubeadm's
// kubeadm:bootstrap-signer-clusterinfo).
const ClusterInfoRole = "system:orca:bootstrap-signer-clusterinfo"

// KubeProxyClientRole lets a node ask for the service proxy's client
// certificate, which the csrapproving controller then approves.
const KubeProxyClientRole = "system:orca:certificatesigningrequests:kubeproxyclient"

// CertificateApprover lets the certificate controller approve requests
// of the generic client signer and of the kubelet serving signer; of
// those it approves only the service proxy's client certificates and a
// node's serving certificate for its own addresses.
const CertificateApprover = "system:orca:certificate-approver"

// SelfNodeServerRole lets a node ask for a serving certificate for its
// own name and addresses.
const SelfNodeServerRole = "system:orca:certificatesigningrequests:selfnodeserver"

// ServerBootstrapGroup is the extra group of the bootstrap tokens servers
// join with: besides what a node token may do, they read the cluster's
// shared keys (ServerBootstrapPath), as k3s's server token does.
const ServerBootstrapGroup = "system:bootstrappers:orca:servers"

// ServerBootstrapPath serves a joining server the cluster's CAs, signing
// and encryption keys and the etcd members to join.
const ServerBootstrapPath = "/v1-orca/server-bootstrap"

// ServerBootstrapRole lets a server token read ServerBootstrapPath.
const ServerBootstrapRole = "system:orca:server-bootstrap"

// NetworkPolicyRole lets the node's network identity (system:kube-proxy,
// as the agent enforces network policies beside its service proxy) read
// what the rules are built from: every pod's address, labels and named
// ports, the namespaces' labels and the policies.
const NetworkPolicyRole = "system:orca:network-policy"

// IngressUser is the identity of the built-in ingress controller each
// agent runs. It reads what routing needs from the whole cluster:
// Ingresses and their classes, Services, EndpointSlices, and Secrets for
// TLS. RBAC cannot narrow Secrets to a type, so, as the service account
// of an ingress controller installed upstream (ingress-nginx, Traefik),
// it may read every Secret; an agent started with --disable-ingress
// holds no such certificate.
const IngressUser = "system:orca:ingress"

// IngressClientRole lets a node ask for the ingress controller's client
// certificate, which the csrapproving controller then approves.
const IngressClientRole = "system:orca:certificatesigningrequests:ingressclient"

// IngressPublisherController is the service account of the controller
// that publishes the ingress: the orca-ingress LoadBalancer Service, its
// endpoints on the nodes that serve, and the Ingresses' status.
const IngressPublisherController = "ingress-publisher-controller"

// LocalPathProvisionerController is the service account of the
// built-in local-path provisioner, which makes and deletes the
// PersistentVolumes of local-path claims (upstream's external
// provisioners run under a role of this shape).
const LocalPathProvisionerController = "local-path-provisioner"

// AggregatedMetricsReader is metrics-server's role over the resource
// metrics API, aggregated into view, edit and admin.
const AggregatedMetricsReader = "system:aggregated-metrics-reader"

func orcaClusterRoles() []rbacv1.ClusterRole {
	return []rbacv1.ClusterRole{
		{
			ObjectMeta: defaultMeta(AggregatedMetricsReader, "", map[string]string{aggregateToView: "true", aggregateToEdit: "true", aggregateToAdmin: "true"}),
			Rules:      []rbacv1.PolicyRule{rule("get", "list", "watch").groups("metrics.k8s.io").resources("pods", "nodes").build()},
		},
		clusterRole(ServerBootstrapRole,
			rule("get").urls(ServerBootstrapPath).build(),
		),
		clusterRole(CertificateApprover,
			rule("approve").groups(certificatesGroup).resources("signers").names("kubernetes.io/kube-apiserver-client", "kubernetes.io/kubelet-serving").build(),
		),
		clusterRole(SelfNodeServerRole,
			rule("create").groups(certificatesGroup).resources("certificatesigningrequests/selfnodeserver").build(),
		),
		clusterRole(KubeProxyClientRole,
			rule("create").groups(certificatesGroup).resources("certificatesigningrequests/kubeproxyclient").build(),
		),
		clusterRole(NetworkPolicyRole,
			rule("list", "watch").groups(legacyGroup).resources("pods", "namespaces").build(),
			rule("list", "watch").groups(networkingGroup).resources("networkpolicies").build(),
		),
		clusterRole(IngressClientRole,
			rule("create").groups(certificatesGroup).resources("certificatesigningrequests/ingressclient").build(),
		),
		clusterRole(IngressUser,
			rule("list", "watch").groups(networkingGroup).resources("ingresses", "ingressclasses").build(),
			rule("list", "watch").groups(gatewayGroup).resources("gatewayclasses", "gateways", "httproutes", "referencegrants").build(),
			rule("list", "watch").groups(legacyGroup).resources("services", "secrets", "namespaces").build(),
			rule("list", "watch").groups(discoveryGroup).resources("endpointslices").build(),
			eventsRule(),
		),
		// CoreDNS's system:coredns role: the reads behind every answer.
		clusterRole(DNSUser,
			rule("list", "watch").groups(legacyGroup).resources("endpoints", "services", "pods", "namespaces").build(),
			rule("list", "watch").groups(discoveryGroup).resources("endpointslices").build(),
		),
		// servicelb: upstream's service-controller rights, which it
		// stands in for.
		controllerRole(ServiceLBController,
			rule(read...).groups(legacyGroup).resources("services").build(),
			rule("patch", "update").groups(legacyGroup).resources("services/status").build(),
			rule("list", "watch").groups(legacyGroup).resources("nodes").build(),
			eventsRule(),
		),
		controllerRole(LocalPathProvisionerController,
			rule("get", "list", "watch", "create", "update", "delete").groups(legacyGroup).resources("persistentvolumes").build(),
			rule("list", "watch").groups(legacyGroup).resources("persistentvolumeclaims", "nodes").build(),
			rule("list", "watch").groups(storageGroup).resources("storageclasses").build(),
			eventsRule(),
		),
		controllerRole(IngressPublisherController,
			rule("get", "list", "watch", "create", "update", "delete").groups(legacyGroup).resources("services").build(),
			rule("list", "watch").groups(legacyGroup).resources("nodes", "secrets").build(),
			rule("get", "list", "watch", "create", "update", "delete").groups(discoveryGroup).resources("endpointslices").build(),
			rule("list", "watch").groups(networkingGroup).resources("ingresses", "ingressclasses").build(),
			rule("update").groups(networkingGroup).resources("ingresses/status").build(),
			rule("list", "watch").groups(gatewayGroup).resources("gatewayclasses", "gateways", "httproutes", "referencegrants").build(),
			rule("update").groups(gatewayGroup).resources("gatewayclasses/status", "gateways/status", "httproutes/status").build(),
			rule("list", "watch").groups(legacyGroup).resources("namespaces").build(),
			eventsRule(),
		),
	}
}

func orcaClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	out := []rbacv1.ClusterRoleBinding{
		clusterRoleBinding(DNSUser, DNSUser, users(DNSUser)),
		clusterRoleBinding(KubeletAPIAdminBinding, "system:kubelet-api-admin", users(KubeletAPIClient)),
		// Joining machines, as kubeadm binds them: a node token may ask
		// for a node client certificate, which the csrapproving
		// controller approves, and a node may renew its own.
		clusterRoleBinding("system:orca:node-bootstrapper", "system:node-bootstrapper", groups(NodeBootstrapGroup, ServerBootstrapGroup)),
		clusterRoleBinding("system:orca:node-autoapprove-bootstrap", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", groups(NodeBootstrapGroup, ServerBootstrapGroup)),
		clusterRoleBinding("system:orca:node-kube-proxy-client", KubeProxyClientRole, groups(NodeBootstrapGroup, ServerBootstrapGroup, "system:nodes")),
		clusterRoleBinding("system:orca:node-ingress-client", IngressClientRole, groups(NodeBootstrapGroup, ServerBootstrapGroup, "system:nodes")),
		clusterRoleBinding(IngressUser, IngressUser, users(IngressUser)),
		clusterRoleBinding(NetworkPolicyRole, NetworkPolicyRole, users("system:kube-proxy")),
		clusterRoleBinding(ServerBootstrapRole, ServerBootstrapRole, groups(ServerBootstrapGroup)),
		clusterRoleBinding(CertificateApprover, CertificateApprover, []rbacv1.Subject{serviceAccount(kubeSystemNamespace, "certificate-controller")}),
		clusterRoleBinding("system:orca:node-serving-certificates", SelfNodeServerRole, groups("system:nodes")),
		clusterRoleBinding("system:orca:node-autoapprove-certificate-rotation", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", groups("system:nodes")),
	}
	for _, r := range orcaClusterRoles() {
		if len(r.Name) > len(ControllerRolePrefix) && r.Name[:len(ControllerRolePrefix)] == ControllerRolePrefix {
			out = append(out, bindControllerRoles([]rbacv1.ClusterRole{r})...)
		}
	}
	return out
}

// The DNS server keeps the kube-dns Service, Endpoints and EndpointSlice in
// kube-system pointing at itself. RBAC cannot limit create to one name, so
// the Role is confined to kube-system and get/update to kube-dns.
func orcaNamespaceRoles() []rbacv1.Role {
	return []rbacv1.Role{
		namespacedRole(kubeSystemNamespace, DNSUser,
			rule("create").groups(legacyGroup).resources("services", "endpoints").build(),
			rule("get", "update").groups(legacyGroup).resources("services", "endpoints").names("kube-dns").build(),
			rule("create").groups(discoveryGroup).resources("endpointslices").build(),
			rule("get", "update").groups(discoveryGroup).resources("endpointslices").names("kube-dns").build(),
		),
		namespacedRole(kubePublicNamespace, ClusterInfoRole,
			rule("get").groups(legacyGroup).resources("configmaps").names("cluster-info").build(),
		),
	}
}

func orcaNamespaceRoleBindings() []rbacv1.RoleBinding {
	return []rbacv1.RoleBinding{
		roleBinding(kubeSystemNamespace, DNSUser, DNSUser, users(DNSUser)),
		roleBinding(kubePublicNamespace, ClusterInfoRole, ClusterInfoRole, users("system:anonymous")),
	}
}
