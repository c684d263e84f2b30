package bootstrappolicy

import (
	"context"
	"io"
	"log/slog"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-helpers/auth/rbac/validation"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// writes are the mutating calls the fake client saw.
func writes(c *fake.Clientset) []string {
	var out []string
	for _, a := range c.Actions() {
		switch a.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
	}
	return out
}

func TestReconcileCreatesAllThenNothing(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	if err := Reconcile(ctx, client, quiet()); err != nil {
		t.Fatal(err)
	}
	crs, _ := client.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	crbs, _ := client.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if len(crs.Items) != len(ClusterRoles()) || len(crbs.Items) != len(ClusterRoleBindings()) {
		t.Errorf("created %d cluster roles and %d bindings, want %d and %d",
			len(crs.Items), len(crbs.Items), len(ClusterRoles()), len(ClusterRoleBindings()))
	}
	for ns, roles := range NamespaceRoles() {
		got, _ := client.RbacV1().Roles(ns).List(ctx, metav1.ListOptions{})
		if len(got.Items) != len(roles) {
			t.Errorf("%s: %d roles, want %d", ns, len(got.Items), len(roles))
		}
	}
	for ns, bindings := range NamespaceRoleBindings() {
		got, _ := client.RbacV1().RoleBindings(ns).List(ctx, metav1.ListOptions{})
		if len(got.Items) != len(bindings) {
			t.Errorf("%s: %d role bindings, want %d", ns, len(got.Items), len(bindings))
		}
	}
	// The namespaces the Roles live in were missing, so they were made.
	for _, ns := range []string{"kube-system", "kube-public"} {
		if _, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Errorf("namespace %s: %v", ns, err)
		}
	}

	client.ClearActions()
	if err := Reconcile(ctx, client, quiet()); err != nil {
		t.Fatal(err)
	}
	if w := writes(client); len(w) != 0 {
		t.Errorf("second run wrote %v", w)
	}
}

func TestReconcileLeavesProtectedRoleAlone(t *testing.T) {
	ctx := context.Background()
	protected := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "system:basic-user", Annotations: map[string]string{AutoUpdateAnnotation: "false"}},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/mine"}}},
	}
	client := fake.NewClientset(protected)
	if err := Reconcile(ctx, client, quiet()); err != nil {
		t.Fatal(err)
	}
	got, err := client.RbacV1().ClusterRoles().Get(ctx, "system:basic-user", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rules) != 1 || got.Rules[0].NonResourceURLs[0] != "/mine" || got.Labels[BootstrappingLabel] != "" {
		t.Errorf("protected role changed: %+v", got)
	}
}

func TestReconcileRestoresEditedRoleAndBinding(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	if err := Reconcile(ctx, client, quiet()); err != nil {
		t.Fatal(err)
	}
	// A user strips the node proxier's role to one rule and adds one of
	// its own, takes a subject off cluster-admin's binding and adds one,
	// and empties a namespaced role.
	extra := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}
	role, _ := client.RbacV1().ClusterRoles().Get(ctx, "system:node-proxier", metav1.GetOptions{})
	role.Rules = []rbacv1.PolicyRule{role.Rules[0], extra}
	if _, err := client.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding, _ := client.RbacV1().ClusterRoleBindings().Get(ctx, "cluster-admin", metav1.GetOptions{})
	binding.Subjects = []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}
	if _, err := client.RbacV1().ClusterRoleBindings().Update(ctx, binding, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	nsRole, _ := client.RbacV1().Roles("kube-system").Get(ctx, "system::leader-locking-kube-scheduler", metav1.GetOptions{})
	nsRole.Rules = nil
	if _, err := client.RbacV1().Roles("kube-system").Update(ctx, nsRole, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := Reconcile(ctx, client, quiet()); err != nil {
		t.Fatal(err)
	}
	role, _ = client.RbacV1().ClusterRoles().Get(ctx, "system:node-proxier", metav1.GetOptions{})
	want := find(t, ClusterRoles(), "system:node-proxier").Rules
	if ok, missing := validation.Covers(role.Rules, want); !ok {
		t.Errorf("node-proxier still lacks %v", missing)
	}
	if ok, _ := validation.Covers(role.Rules, []rbacv1.PolicyRule{extra}); !ok {
		t.Errorf("the rule the user added was removed: %v", role.Rules)
	}
	binding, _ = client.RbacV1().ClusterRoleBindings().Get(ctx, "cluster-admin", metav1.GetOptions{})
	names := map[string]bool{}
	for _, s := range binding.Subjects {
		names[s.Name] = true
	}
	if !names["system:masters"] || !names["alice"] {
		t.Errorf("cluster-admin subjects %v, want system:masters back and alice kept", binding.Subjects)
	}
	nsRole, _ = client.RbacV1().Roles("kube-system").Get(ctx, "system::leader-locking-kube-scheduler", metav1.GetOptions{})
	// Missing rules come back as upstream adds them: split one verb and
	// one resource a rule.
	if ok, missing := validation.Covers(nsRole.Rules, NamespaceRoles()["kube-system"][findRole(t, "system::leader-locking-kube-scheduler")].Rules); !ok {
		t.Errorf("leader-locking role still lacks %v", missing)
	}
}

// A binding whose roleRef was changed (which the API forbids in an update,
// so it can only have been recreated) is recreated with the default's.
func TestReconcileRecreatesBindingWithOtherRole(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(&rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "system:basic-user", UID: "old"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   groups("system:authenticated"),
	})
	if err := Reconcile(ctx, client, quiet()); err != nil {
		t.Fatal(err)
	}
	got, err := client.RbacV1().ClusterRoleBindings().Get(ctx, "system:basic-user", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.RoleRef.Name != "system:basic-user" {
		t.Errorf("roleRef %+v, want system:basic-user", got.RoleRef)
	}
}

func findRole(t *testing.T, name string) int {
	t.Helper()
	for i, r := range NamespaceRoles()["kube-system"] {
		if r.Name == name {
			return i
		}
	}
	t.Fatalf("no default role kube-system/%s", name)
	return 0
}

func find(t *testing.T, roles []rbacv1.ClusterRole, name string) rbacv1.ClusterRole {
	t.Helper()
	for _, r := range roles {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no default role %s", name)
	return rbacv1.ClusterRole{}
}
