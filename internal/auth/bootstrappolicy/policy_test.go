package bootstrappolicy

import (
	"bytes"
	"cmp"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGolden keeps the policy in files laid out as upstream's
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata, one file per
// upstream file, so a diff against upstream's shows every difference; the
// Orca-only objects are in orca-*.yaml.
//
// The files were compared with upstream's testdata (the newest copies
// available: cluster-roles.yaml as of v1.36, controller-roles.yaml,
// namespace-*.yaml and controller-role-bindings.yaml of the v1.37 cycle).
// Differences kept knowingly:
//
//   - Upstream writes its defaults for the default feature gates, and keeps
//     gated rules in *-featuregates.yaml. ClusterTrustBundle,
//     PodCertificateRequest, DeviceTaintRule and StorageVersionMigration
//     are GA in v1.37 (their types are in certificates.k8s.io/v1,
//     resource.k8s.io/v1 and storagemigration.k8s.io/v1), so their gated
//     rules are here as defaults: system:cluster-trust-bundle-discovery and
//     its binding to system:serviceaccounts; system:node reading
//     clustertrustbundles and creating and reading podcertificaterequests;
//     system:kube-scheduler reading devicetaintrules;
//     device-taint-eviction-controller reading devicetaintrules and
//     writing their status; and the controller roles
//     kube-apiserver-serving-clustertrustbundle-publisher,
//     podcertificaterequestcleaner and storage-version-migrator-controller.
//   - Roles behind gates that are still alpha or beta-off in v1.37
//     (storage-version-garbage-collector, podgroup-protection-controller,
//     resourcepoolstatusrequest-controller, the Workload and PodGroup rules
//     of job-controller, resource-claim-controller and
//     system:kube-scheduler, node-controller's lease reads, /flagz) are left
//     out, as upstream's default files leave them out.
//   - Upstream's testdata still spells creationTimestamp: null on older
//     copies; these files, written with v1.37's apimachinery, do not.
func TestGolden(t *testing.T) {
	files := map[string][]any{
		"cluster-roles.yaml":                listOf(clusterRoles()),
		"cluster-role-bindings.yaml":        listOf(clusterRoleBindings()),
		"controller-roles.yaml":             listOf(controllerRoles()),
		"controller-role-bindings.yaml":     listOf(controllerRoleBindings()),
		"namespace-roles.yaml":              listOf(namespaceRoles()),
		"namespace-role-bindings.yaml":      listOf(namespaceRoleBindings()),
		"orca-cluster-roles.yaml":           listOf(orcaClusterRoles()),
		"orca-cluster-role-bindings.yaml":   listOf(orcaClusterRoleBindings()),
		"orca-namespace-roles.yaml":         listOf(orcaNamespaceRoles()),
		"orca-namespace-role-bindings.yaml": listOf(orcaNamespaceRoleBindings()),
	}
	for name, items := range files {
		t.Run(name, func(t *testing.T) {
			got, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": items})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the policy; review the change and run go test -update:\n%s", path, lineDiff(string(want), string(got)))
			}
		})
	}
}

// listOf gives each object its kind, as a list read from the API has,
// sorted by namespace and name as upstream's testdata is.
func listOf[T named](in []T) []any {
	type entry struct {
		ns, name string
		obj      any
	}
	var entries []entry
	for _, v := range in {
		switch o := any(v).(type) {
		case rbacv1.ClusterRole:
			o.APIVersion, o.Kind = rbacv1.SchemeGroupVersion.String(), "ClusterRole"
			entries = append(entries, entry{"", o.Name, o})
		case rbacv1.ClusterRoleBinding:
			o.APIVersion, o.Kind = rbacv1.SchemeGroupVersion.String(), "ClusterRoleBinding"
			entries = append(entries, entry{"", o.Name, o})
		case rbacv1.Role:
			o.APIVersion, o.Kind = rbacv1.SchemeGroupVersion.String(), "Role"
			entries = append(entries, entry{o.Namespace, o.Name, o})
		case rbacv1.RoleBinding:
			o.APIVersion, o.Kind = rbacv1.SchemeGroupVersion.String(), "RoleBinding"
			entries = append(entries, entry{o.Namespace, o.Name, o})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name)) })
	out := make([]any, len(entries))
	for i, e := range entries {
		out[i] = e.obj
	}
	return out
}

// lineDiff lists the lines only one side has: enough to find a change in
// files that are sorted and mostly equal.
func lineDiff(want, got string) string {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	w, g := count(want), count(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if g[l] < w[l] {
			b.WriteString("- " + l + "\n")
			w[l]--
		}
	}
	w = count(want)
	for _, l := range strings.Split(got, "\n") {
		if w[l] < g[l] {
			b.WriteString("+ " + l + "\n")
			g[l]--
		}
	}
	return b.String()
}

func TestEveryObjectIsMarkedAndNamedOnce(t *testing.T) {
	check := func(kind, ns, name string, labels, annotations map[string]string, seen map[string]bool) {
		t.Helper()
		key := kind + " " + objectName(ns, name)
		if seen[key] {
			t.Errorf("%s defined twice", key)
		}
		seen[key] = true
		if labels[BootstrappingLabel] != BootstrappingLabelValue {
			t.Errorf("%s lacks label %s", key, BootstrappingLabel)
		}
		if annotations[AutoUpdateAnnotation] != "true" {
			t.Errorf("%s lacks annotation %s", key, AutoUpdateAnnotation)
		}
	}
	seen := map[string]bool{}
	for _, r := range ClusterRoles() {
		check("clusterrole", "", r.Name, r.Labels, r.Annotations, seen)
	}
	for _, b := range ClusterRoleBindings() {
		check("clusterrolebinding", "", b.Name, b.Labels, b.Annotations, seen)
	}
	for ns, roles := range NamespaceRoles() {
		for _, r := range roles {
			if r.Namespace != ns {
				t.Errorf("role %s/%s listed under %s", r.Namespace, r.Name, ns)
			}
			check("role", r.Namespace, r.Name, r.Labels, r.Annotations, seen)
		}
	}
	for ns, bindings := range NamespaceRoleBindings() {
		for _, b := range bindings {
			if b.Namespace != ns {
				t.Errorf("rolebinding %s/%s listed under %s", b.Namespace, b.Name, ns)
			}
			check("rolebinding", b.Namespace, b.Name, b.Labels, b.Annotations, seen)
		}
	}
}

// A binding to a role the policy does not define would grant nothing, and
// a controller role nobody holds is dead weight.
func TestBindingsAndRolesMatch(t *testing.T) {
	clusterRoles := map[string]bool{}
	for _, r := range ClusterRoles() {
		clusterRoles[r.Name] = true
	}
	bound := map[string]bool{}
	for _, b := range ClusterRoleBindings() {
		if b.RoleRef.Kind != "ClusterRole" || !clusterRoles[b.RoleRef.Name] {
			t.Errorf("clusterrolebinding %s refers to unknown %s %s", b.Name, b.RoleRef.Kind, b.RoleRef.Name)
		}
		bound[b.RoleRef.Name] = true
	}
	for name := range clusterRoles {
		if strings.HasPrefix(name, ControllerRolePrefix) && !bound[name] {
			t.Errorf("controller role %s has no binding", name)
		}
	}
	roles := NamespaceRoles()
	for ns, bindings := range NamespaceRoleBindings() {
		for _, b := range bindings {
			found := false
			for _, r := range roles[ns] {
				found = found || (b.RoleRef.Kind == "Role" && r.Name == b.RoleRef.Name)
			}
			if !found {
				t.Errorf("rolebinding %s/%s refers to unknown %s %s", ns, b.Name, b.RoleRef.Kind, b.RoleRef.Name)
			}
		}
	}
}

// admin ⊇ edit ⊇ view holds through the labels alone.
func TestAggregationChain(t *testing.T) {
	byName := map[string]rbacv1.ClusterRole{}
	for _, r := range ClusterRoles() {
		byName[r.Name] = r
	}
	for _, c := range []struct{ role, selects, labelledInto string }{
		{"admin", aggregateToAdmin, ""},
		{"edit", aggregateToEdit, aggregateToAdmin},
		{"view", aggregateToView, aggregateToEdit},
	} {
		r := byName[c.role]
		if r.AggregationRule == nil || len(r.AggregationRule.ClusterRoleSelectors) != 1 ||
			r.AggregationRule.ClusterRoleSelectors[0].MatchLabels[c.selects] != "true" || len(r.Rules) != 0 {
			t.Errorf("%s: aggregation rule %+v, %d rules", c.role, r.AggregationRule, len(r.Rules))
		}
		if c.labelledInto != "" && r.Labels[c.labelledInto] != "true" {
			t.Errorf("%s lacks label %s", c.role, c.labelledInto)
		}
	}
}
