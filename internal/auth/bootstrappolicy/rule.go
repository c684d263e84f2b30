package bootstrappolicy

import (
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Upstream's names for the label and annotation every default object
// carries: the label lets an administrator find them, the annotation tells
// Reconcile it may add back what was removed.
const (
	BootstrappingLabel      = "kubernetes.io/bootstrapping"
	BootstrappingLabelValue = "rbac-defaults"
	AutoUpdateAnnotation    = rbacv1.AutoUpdateAnnotationKey
)

// The verb sets upstream's policy is written with.
var (
	read      = []string{"get", "list", "watch"}
	readWrite = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	write     = []string{"create", "update", "patch", "delete", "deletecollection"}
)

// API groups, named once so a typo cannot hide in a rule.
const (
	legacyGroup         = ""
	admissionGroup      = "admissionregistration.k8s.io"
	apiExtensionsGroup  = "apiextensions.k8s.io"
	appsGroup           = "apps"
	authenticationGroup = "authentication.k8s.io"
	authorizationGroup  = "authorization.k8s.io"
	autoscalingGroup    = "autoscaling"
	batchGroup          = "batch"
	certificatesGroup   = "certificates.k8s.io"
	coordinationGroup   = "coordination.k8s.io"
	discoveryGroup      = "discovery.k8s.io"
	eventsGroup         = "events.k8s.io"
	extensionsGroup     = "extensions"
	networkingGroup     = "networking.k8s.io"
	nodeGroup           = "node.k8s.io"
	policyGroup         = "policy"
	rbacGroup           = rbacv1.GroupName
	resourceGroup       = "resource.k8s.io"
	storageGroup        = "storage.k8s.io"
	migrationGroup      = "storagemigration.k8s.io"
	gatewayGroup        = "gateway.networking.k8s.io"
)

// ruleBuilder writes a PolicyRule the way upstream's policy reads:
// rule("get").groups("").resources("pods").build().
type ruleBuilder struct{ r rbacv1.PolicyRule }

func rule(verbs ...string) ruleBuilder {
	return ruleBuilder{rbacv1.PolicyRule{Verbs: slices.Clone(verbs)}}
}

func (b ruleBuilder) groups(g ...string) ruleBuilder {
	b.r.APIGroups = append(slices.Clone(b.r.APIGroups), g...)
	return b
}

func (b ruleBuilder) resources(r ...string) ruleBuilder {
	b.r.Resources = append(slices.Clone(b.r.Resources), r...)
	return b
}

func (b ruleBuilder) names(n ...string) ruleBuilder {
	b.r.ResourceNames = append(slices.Clone(b.r.ResourceNames), n...)
	return b
}

func (b ruleBuilder) urls(u ...string) ruleBuilder {
	b.r.NonResourceURLs = append(slices.Clone(b.r.NonResourceURLs), u...)
	return b
}

// build sorts every list, as upstream's builder does, so the stored rules
// and the golden files do not depend on how a rule was written. A
// malformed rule is a bug in this package's data, hence the panic.
func (b ruleBuilder) build() rbacv1.PolicyRule {
	r := b.r
	switch {
	case len(r.Verbs) == 0:
		panic(fmt.Sprintf("bootstrappolicy: rule without verbs: %+v", r))
	case len(r.NonResourceURLs) > 0:
		if len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0 {
			panic(fmt.Sprintf("bootstrappolicy: rule mixes URLs and resources: %+v", r))
		}
	case len(r.Resources) == 0 || len(r.APIGroups) == 0:
		panic(fmt.Sprintf("bootstrappolicy: resource rule without groups or resources: %+v", r))
	}
	for _, l := range [][]string{r.Verbs, r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs} {
		slices.Sort(l)
	}
	return r
}

// eventsRule lets a component record events through either events API.
func eventsRule() rbacv1.PolicyRule {
	return rule("create", "update", "patch").groups(legacyGroup, eventsGroup).resources("events").build()
}

// defaultMeta is the metadata of every default object.
func defaultMeta(name, namespace string, labels map[string]string) metav1.ObjectMeta {
	l := map[string]string{BootstrappingLabel: BootstrappingLabelValue}
	for k, v := range labels {
		l[k] = v
	}
	return metav1.ObjectMeta{
		Name: name, Namespace: namespace, Labels: l,
		Annotations: map[string]string{AutoUpdateAnnotation: "true"},
	}
}

func clusterRole(name string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{ObjectMeta: defaultMeta(name, "", nil), Rules: rules}
}

func namespacedRole(namespace, name string, rules ...rbacv1.PolicyRule) rbacv1.Role {
	return rbacv1.Role{ObjectMeta: defaultMeta(name, namespace, nil), Rules: rules}
}

// Subjects, as upstream writes them: users and groups name the RBAC API
// group, service accounts name their namespace instead.
func users(names ...string) []rbacv1.Subject  { return subjects(rbacv1.UserKind, names) }
func groups(names ...string) []rbacv1.Subject { return subjects(rbacv1.GroupKind, names) }

func subjects(kind string, names []string) []rbacv1.Subject {
	out := make([]rbacv1.Subject, 0, len(names))
	for _, n := range names {
		out = append(out, rbacv1.Subject{Kind: kind, APIGroup: rbacGroup, Name: n})
	}
	return out
}

func serviceAccount(namespace, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}
}

func clusterRoleBinding(name, role string, subjects ...[]rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{
		ObjectMeta: defaultMeta(name, "", nil),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacGroup, Kind: "ClusterRole", Name: role},
		Subjects:   slices.Concat(subjects...),
	}
}

func roleBinding(namespace, name, role string, subjects ...[]rbacv1.Subject) rbacv1.RoleBinding {
	return rbacv1.RoleBinding{
		ObjectMeta: defaultMeta(name, namespace, nil),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacGroup, Kind: "Role", Name: role},
		Subjects:   slices.Concat(subjects...),
	}
}
