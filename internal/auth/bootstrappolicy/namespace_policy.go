package bootstrappolicy

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// namespaceRoles are upstream's Roles in kube-system and kube-public.
func namespaceRoles() []rbacv1.Role {
	// Leader election: any Lease in kube-system, so that a component's
	// lock may have its own name (Orca's controller manager locks
	// orca-controller-manager).
	leaderLocking := func(name string) rbacv1.Role {
		return namespacedRole(kubeSystemNamespace, name,
			rule("watch", "get", "list", "create", "update").groups(coordinationGroup).resources("leases").build(),
			rule("watch", "get", "list", "create", "update").groups(coordinationGroup).resources("leasecandidates").build(),
		)
	}
	return []rbacv1.Role{
		// Components that delegate authentication read the client CA
		// published there.
		namespacedRole(kubeSystemNamespace, "extension-apiserver-authentication-reader",
			rule(read...).groups(legacyGroup).resources("configmaps").names("extension-apiserver-authentication").build(),
		),
		leaderLocking("system::leader-locking-kube-controller-manager"),
		leaderLocking("system::leader-locking-kube-scheduler"),
		namespacedRole(kubeSystemNamespace, ControllerRolePrefix+"bootstrap-signer",
			rule(read...).groups(legacyGroup).resources("secrets").build(),
		),
		namespacedRole(kubeSystemNamespace, ControllerRolePrefix+"cloud-provider",
			rule("create", "get", "list", "watch").groups(legacyGroup).resources("configmaps").build(),
		),
		namespacedRole(kubeSystemNamespace, ControllerRolePrefix+"token-cleaner",
			rule("delete", "get", "list", "watch").groups(legacyGroup).resources("secrets").build(),
			eventsRule(),
		),
		// The bootstrap signer signs the cluster-info ConfigMap that
		// joining nodes read.
		namespacedRole(kubePublicNamespace, ControllerRolePrefix+"bootstrap-signer",
			rule(read...).groups(legacyGroup).resources("configmaps").build(),
			rule("update").groups(legacyGroup).resources("configmaps").names("cluster-info").build(),
			eventsRule(),
		),
	}
}

// namespaceRoleBindings are upstream's RoleBindings of the roles above.
func namespaceRoleBindings() []rbacv1.RoleBinding {
	sa := func(name string) []rbacv1.Subject { return []rbacv1.Subject{serviceAccount(kubeSystemNamespace, name)} }
	return []rbacv1.RoleBinding{
		roleBinding(kubeSystemNamespace, "system::extension-apiserver-authentication-reader", "extension-apiserver-authentication-reader",
			users(kubeControllerMgr, kubeSchedulerUser)),
		roleBinding(kubeSystemNamespace, "system::leader-locking-kube-controller-manager", "system::leader-locking-kube-controller-manager",
			users(kubeControllerMgr), sa("kube-controller-manager"), sa("leader-election-controller")),
		roleBinding(kubeSystemNamespace, "system::leader-locking-kube-scheduler", "system::leader-locking-kube-scheduler",
			users(kubeSchedulerUser), sa("kube-scheduler")),
		roleBinding(kubeSystemNamespace, ControllerRolePrefix+"bootstrap-signer", ControllerRolePrefix+"bootstrap-signer", sa("bootstrap-signer")),
		roleBinding(kubeSystemNamespace, ControllerRolePrefix+"cloud-provider", ControllerRolePrefix+"cloud-provider", sa("cloud-provider")),
		roleBinding(kubeSystemNamespace, ControllerRolePrefix+"token-cleaner", ControllerRolePrefix+"token-cleaner", sa("token-cleaner")),
		roleBinding(kubePublicNamespace, ControllerRolePrefix+"bootstrap-signer", ControllerRolePrefix+"bootstrap-signer", sa("bootstrap-signer")),
	}
}
