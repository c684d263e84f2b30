package integration

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// bindRole binds a ClusterRole (or a Role, kind "Role") to subjects in ns.
func bindRole(t *testing.T, ns, name, kind, role string, subjects ...rbacv1.Subject) {
	t.Helper()
	_, err := client.RbacV1().RoleBindings(ns).Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role},
		Subjects:   subjects,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func user(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

// TestRBACMatrix drives the real kubectl as users, groups and service
// accounts bound to view, edit, admin and custom roles, and compares what
// it may do with a table, as upstream's authorizer decides.
func TestRBACMatrix(t *testing.T) {
	ctx := context.Background()
	ns := admissionNamespace(t, "rbac")
	other := admissionNamespace(t, "rbac-other")
	bindRole(t, ns, "viewer", "ClusterRole", "view", user("vera"))
	bindRole(t, ns, "editor", "ClusterRole", "edit", user("ed"))
	bindRole(t, ns, "admins", "ClusterRole", "admin", group("team-admins"))
	bindRole(t, ns, "robot", "ClusterRole", "edit", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "robot", Namespace: ns})
	// A custom role: one ConfigMap by name, pods' logs, and nothing else.
	if _, err := client.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "narrow"},
		Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"get", "update"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"settings"}},
			{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/log"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindRole(t, ns, "narrow", "Role", "narrow", user("nina"))
	// A cluster-wide grant of a non-resource URL.
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "rbac-test-metrics"},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.RbacV1().ClusterRoles().Delete(ctx, "rbac-test-metrics", metav1.DeleteOptions{}) })
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "rbac-test-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "rbac-test-metrics"},
		Subjects:   []rbacv1.Subject{user("nina")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoleBindings().Delete(ctx, "rbac-test-metrics", metav1.DeleteOptions{})
	})

	sa := "system:serviceaccount:" + ns + ":robot"
	for _, tc := range []struct {
		as   []string // --as and --as-group flags
		args string   // kubectl auth can-i arguments
		want bool
	}{
		{[]string{"--as=vera"}, "list pods -n " + ns, true},
		{[]string{"--as=vera"}, "get configmaps/x -n " + ns, true},
		{[]string{"--as=vera"}, "list secrets -n " + ns, false},
		{[]string{"--as=vera"}, "delete pods -n " + ns, false},
		{[]string{"--as=vera"}, "list pods -n " + other, false},
		{[]string{"--as=vera"}, "list pods --all-namespaces", false},
		{[]string{"--as=vera"}, "get pods --subresource=log -n " + ns, true},
		{[]string{"--as=ed"}, "create deployments.apps -n " + ns, true},
		{[]string{"--as=ed"}, "list secrets -n " + ns, true},
		{[]string{"--as=ed"}, "create rolebindings -n " + ns, false},
		{[]string{"--as=ed"}, "create pods --subresource=exec -n " + ns, true},
		{[]string{"--as=someone", "--as-group=team-admins"}, "create rolebindings -n " + ns, true},
		{[]string{"--as=someone", "--as-group=team-admins"}, "delete namespace " + ns, false},
		{[]string{"--as=someone"}, "create rolebindings -n " + ns, false},
		{[]string{"--as=" + sa}, "create configmaps -n " + ns, true},
		{[]string{"--as=" + sa}, "create configmaps -n " + other, false},
		{[]string{"--as=nina"}, "get configmaps/settings -n " + ns, true},
		{[]string{"--as=nina"}, "update configmaps/settings -n " + ns, true},
		{[]string{"--as=nina"}, "get configmaps/other -n " + ns, false},
		{[]string{"--as=nina"}, "list configmaps -n " + ns, false},
		{[]string{"--as=nina"}, "get pods --subresource=log -n " + ns, true},
		{[]string{"--as=nina"}, "get pods -n " + ns, false},
		{[]string{"--as=nina"}, "get /metrics", true},
		{[]string{"--as=nina"}, "get /metrics/slis", false},
		{[]string{"--as=vera"}, "get /metrics", false},
		// Everyone authenticated may discover the API and read its health.
		{[]string{"--as=vera"}, "get /apis", true},
		{[]string{"--as=vera"}, "get /healthz", true},
	} {
		args := append(append([]string{"auth", "can-i"}, tc.as...), strings.Fields(tc.args)...)
		res := runKubectl(t, "", args...)
		got := strings.TrimSpace(res.Stdout) == "yes"
		if got != tc.want || (res.Code == 0) != tc.want {
			t.Errorf("kubectl %s: %q (exit %d, %s), want allowed=%v", strings.Join(args, " "), res.Stdout, res.Code, strings.TrimSpace(res.Stderr), tc.want)
		}
	}

	// The same decisions on real requests, with upstream's 403 text.
	res := runKubectl(t, "", "--as=vera", "-n", ns, "delete", "configmap", "nothing")
	want := `Error from server (Forbidden): configmaps "nothing" is forbidden: User "vera" cannot delete resource "configmaps" in API group "" in the namespace "` + ns + `"`
	if res.Code == 0 || strings.TrimSpace(res.Stderr) != want {
		t.Errorf("vera deleting a configmap: exit %d, stderr %q\nwant %q", res.Code, res.Stderr, want)
	}
	res = runKubectl(t, "", "--as=vera", "get", "pods", "-A")
	want = `Error from server (Forbidden): pods is forbidden: User "vera" cannot list resource "pods" in API group "" at the cluster scope`
	if res.Code == 0 || strings.TrimSpace(res.Stderr) != want {
		t.Errorf("vera listing every pod: exit %d, stderr %q\nwant %q", res.Code, res.Stderr, want)
	}
	mustKubectl(t, "", "--as=ed", "-n", ns, "create", "configmap", "settings", "--from-literal=a=1")
	mustKubectl(t, "", "--as=nina", "-n", ns, "get", "configmap", "settings")
	mustKubectl(t, "", "--as=vera", "-n", ns, "get", "configmaps")

	// Escalation: an admin of the namespace may bind what it holds, not
	// cluster-admin.
	mustKubectl(t, "", "--as=someone", "--as-group=team-admins", "-n", ns, "create", "rolebinding", "vera-edit", "--clusterrole=edit", "--user=vera")
	res = runKubectl(t, "", "--as=someone", "--as-group=team-admins", "-n", ns, "create", "rolebinding", "vera-root", "--clusterrole=cluster-admin", "--user=vera")
	if res.Code == 0 || !strings.Contains(res.Stderr, `rolebindings.rbac.authorization.k8s.io "vera-root" is forbidden: user "someone" (groups=["team-admins" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:`) {
		t.Errorf("binding cluster-admin as a namespace admin: exit %d, %s", res.Code, res.Stderr)
	}
	res = runKubectl(t, "", "--as=someone", "--as-group=team-admins", "-n", ns, "create", "role", "secrets-everywhere", "--verb=get", "--resource=nodes")
	if res.Code == 0 || !strings.Contains(res.Stderr, "is attempting to grant RBAC permissions not currently held") {
		t.Errorf("a role beyond the namespace admin: exit %d, %s", res.Code, res.Stderr)
	}
	if can := runKubectl(t, "", "auth", "can-i", "--as=vera", "create", "deployments.apps", "-n", ns); strings.TrimSpace(can.Stdout) != "yes" {
		t.Errorf("vera after the edit binding: %q", can.Stdout)
	}

}

// TestImpersonationNeedsTheVerb: a service account without the
// impersonate verb is refused with upstream's message; once granted it on
// one user, its requests run as that user.
func TestImpersonationNeedsTheVerb(t *testing.T) {
	ctx := context.Background()
	ns := admissionNamespace(t, "imp")
	bindRole(t, ns, "ed", "ClusterRole", "edit", user("ed"))
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "poser"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "poser", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.Config{Host: inst.URL, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: restCfg.CAData}}
	cfg.Impersonate.UserName = "ed"
	asEd := kubernetes.NewForConfigOrDie(&cfg)
	_, err = asEd.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	want := `users "ed" is forbidden: User "system:serviceaccount:` + ns + `:poser" cannot impersonate resource "users" in API group "" at the cluster scope`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("impersonating without the verb: %v\nwant %s", err, want)
	}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "impersonate-ed-" + ns},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"ed"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.RbacV1().ClusterRoles().Delete(ctx, "impersonate-ed-"+ns, metav1.DeleteOptions{}) })
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "impersonate-ed-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "impersonate-ed-" + ns},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "poser", Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoleBindings().Delete(ctx, "impersonate-ed-"+ns, metav1.DeleteOptions{})
	})
	// Granted without a restart: ed's rights, not the poser's.
	eventually(t, 5*time.Second, func() error {
		_, err := asEd.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err
	})
	if _, err := asEd.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "ed" cannot list resource "pods"`) {
		t.Errorf("ed outside its namespace: %v", err)
	}
	// Only ed: posing as someone else is still refused.
	cfg.Impersonate.UserName = "vera"
	if _, err := kubernetes.NewForConfigOrDie(&cfg).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("impersonating vera: %v", err)
	}
}

// TestServiceAccountGainsViewWithoutRestart: a pod's service account with
// no bindings gets 403 listing pods; granting view makes the same token
// work at once.
func TestServiceAccountGainsViewWithoutRestart(t *testing.T) {
	ctx := context.Background()
	ns := admissionNamespace(t, "sa-view")
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, tr.Status.Token)
	_, err = c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	want := `pods is forbidden: User "system:serviceaccount:` + ns + `:default" cannot list resource "pods" in API group "" in the namespace "` + ns + `"`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("unbound service account: %v\nwant %s", err, want)
	}
	bindRole(t, ns, "default-view", "ClusterRole", "view", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: ns})
	eventually(t, 5*time.Second, func() error {
		_, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err
	})
	// view reads, it does not write.
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("view creating a configmap: %v", err)
	}
}

// TestAnonymousRequests: without credentials a request is
// system:anonymous, which may read health and version and nothing else;
// a credential that does not hold is 401, not anonymous.
func TestAnonymousRequests(t *testing.T) {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(path string, header ...string) (int, metav1.Status) {
		req, _ := http.NewRequest("GET", inst.URL+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var st metav1.Status
		_ = json.Unmarshal(b, &st)
		return resp.StatusCode, st
	}
	for _, p := range []string{"/healthz", "/livez", "/readyz", "/version"} {
		if code, _ := get(p); code != 200 {
			t.Errorf("anonymous GET %s: %d", p, code)
		}
	}
	code, st := get("/api/v1/namespaces")
	if code != 403 || st.Message != `namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope` {
		t.Errorf("anonymous list: %d %q", code, st.Message)
	}
	code, st = get("/apis")
	if code != 403 || st.Message != `forbidden: User "system:anonymous" cannot get path "/apis"` {
		t.Errorf("anonymous discovery: %d %q", code, st.Message)
	}
	if code, st = get("/api/v1/namespaces", "Authorization", "Bearer not-a-token"); code != 401 || st.Message != "Unauthorized" {
		t.Errorf("bad token: %d %q", code, st.Message)
	}
}
