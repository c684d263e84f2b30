package audit

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

const testPolicy = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
omitManagedFields: true
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/version"]
- level: None
  users: ["system:kube-proxy"]
  verbs: ["watch"]
  resources: [{group: "", resources: ["endpoints", "services"]}]
- level: Metadata
  resources:
  - group: ""
    resources: ["secrets", "configmaps", "serviceaccounts/token"]
  - group: authentication.k8s.io
    resources: ["tokenreviews"]
- level: Request
  userGroups: ["system:nodes"]
  verbs: ["update", "patch"]
  resources: [{group: "", resources: ["nodes/status", "pods/status"]}]
  omitStages: ["ResponseStarted"]
- level: RequestResponse
  resources: [{group: "", resources: ["pods/log"]}]
  omitManagedFields: false
- level: Request
  resources: [{group: "apps", resources: ["deployments/*"]}]
- level: Request
  resources: [{group: "*", resources: ["*/scale"]}]
- level: RequestResponse
  namespaces: ["kube-system"]
  resources: [{group: "coordination.k8s.io", resources: ["leases"], resourceNames: ["orca-controller-manager"]}]
- level: None
  namespaces: [""]
  resources: [{group: ""}]
- level: Request
  verbs: ["get", "list", "watch"]
  resources: [{group: ""}, {group: "apps"}]
- level: Metadata
  nonResourceURLs: ["/apis/*"]
- level: RequestResponse
  resources: [{group: ""}, {group: "apps"}]
`

func res(verb, group, resource, sub, ns, name string) Attributes {
	return Attributes{
		User: &authnv1.UserInfo{Username: "alice", Groups: []string{"devs", "system:authenticated"}},
		Verb: verb, ResourceRequest: true, APIGroup: group, APIVersion: "v1",
		Resource: resource, Subresource: sub, Namespace: ns, Name: name,
	}
}

func nonRes(verb, path string) Attributes {
	return Attributes{User: &authnv1.UserInfo{Username: "alice"}, Verb: verb, Path: path}
}

func as(a Attributes, user string, groups ...string) Attributes {
	a.User = &authnv1.UserInfo{Username: user, Groups: groups}
	return a
}

func TestEvaluate(t *testing.T) {
	p, warnings, err := ParsePolicy([]byte(testPolicy))
	if err != nil || len(warnings) > 0 {
		t.Fatalf("parse: %v %v", err, warnings)
	}
	const (
		none = auditv1.LevelNone
		meta = auditv1.LevelMetadata
		req  = auditv1.LevelRequest
		rr   = auditv1.LevelRequestResponse
	)
	for _, tc := range []struct {
		name  string
		attrs Attributes
		level auditv1.Level
	}{
		{"health prefix", nonRes("get", "/healthz/etcd"), none},
		{"exact non-resource URL", nonRes("get", "/version"), none},
		{"a prefix rule needs what precedes its *", nonRes("get", "/apis"), none},
		{"non-resource prefix rule", nonRes("get", "/apis/apps/v1"), meta},
		{"non-resource URL rule never matches a resource", res("get", "", "healthz", "", "default", ""), req},
		{"user and verb", as(res("watch", "", "endpoints", "", "default", ""), "system:kube-proxy"), none},
		{"user, other verb", as(res("list", "", "endpoints", "", "default", ""), "system:kube-proxy"), req},
		{"other user", res("watch", "", "endpoints", "", "default", ""), req},
		{"secrets at metadata, even on reads", res("get", "", "secrets", "", "default", "s"), meta},
		{"configmaps at metadata", res("create", "", "configmaps", "", "default", ""), meta},
		{"token subresource", res("create", "", "serviceaccounts", "token", "default", "sa"), meta},
		{"tokenreviews in their group", res("create", "authentication.k8s.io", "tokenreviews", "", "", ""), meta},
		{"tokenreviews named in another group do not match", res("create", "other.io", "tokenreviews", "", "", ""), none},
		{"group membership", as(res("patch", "", "pods", "status", "default", "p"), "system:node:n1", "system:nodes"), req},
		{"group rule, user not in group", res("patch", "", "pods", "status", "default", "p"), rr},
		{"subresource named with its resource", res("get", "", "pods", "log", "default", "p"), rr},
		{"resource/* covers subresources", res("update", "apps", "deployments", "status", "default", "d"), req},
		{"resource/* covers the resource itself", res("update", "apps", "deployments", "", "default", "d"), req},
		{"*/sub in any group", res("update", "apps", "statefulsets", "scale", "default", "s"), req},
		{"*/sub does not cover the resource", res("update", "apps", "statefulsets", "", "default", "s"), rr},
		{"resource name matches", res("update", "coordination.k8s.io", "leases", "", "kube-system", "orca-controller-manager"), rr},
		{"other resource name", res("update", "coordination.k8s.io", "leases", "", "kube-system", "orca-scheduler"), none},
		{"other namespace", res("update", "coordination.k8s.io", "leases", "", "default", "orca-controller-manager"), none},
		{"empty namespace names cluster scope", res("get", "", "nodes", "", "", "n1"), none},
		{"namespaced read", res("get", "", "pods", "", "default", "p"), req},
		{"namespaced write", res("create", "", "pods", "", "default", ""), rr},
		{"group not listed", res("create", "batch", "jobs", "", "default", ""), none},
		{"unauthenticated request matches no user rule", Attributes{Verb: "watch", ResourceRequest: true, Resource: "endpoints", Namespace: "default"}, req},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.Evaluate(tc.attrs).Level; got != tc.level {
				t.Errorf("level = %s, want %s", got, tc.level)
			}
		})
	}
}

func TestEvaluateStagesAndManagedFields(t *testing.T) {
	p, _, err := ParsePolicy([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	// The policy's stages are added to a rule's own.
	c := p.Evaluate(as(res("patch", "", "nodes", "status", "", "n1"), "system:node:n1", "system:nodes"))
	if !slices.Contains(c.OmitStages, auditv1.StageRequestReceived) || !slices.Contains(c.OmitStages, auditv1.StageResponseStarted) || len(c.OmitStages) != 2 {
		t.Errorf("omitStages = %v", c.OmitStages)
	}
	if !c.OmitManagedFields {
		t.Error("the policy's omitManagedFields does not apply to a rule without its own")
	}
	if c := p.Evaluate(res("get", "", "pods", "log", "default", "p")); c.OmitManagedFields {
		t.Error("a rule's omitManagedFields: false does not override the policy's")
	}
	// No rule matched: None, with the policy's stages.
	if c := p.Evaluate(res("create", "batch", "jobs", "", "default", "")); c.Level != auditv1.LevelNone || len(c.OmitStages) != 1 {
		t.Errorf("default = %+v", c)
	}
	var zero Policy
	if c := zero.Evaluate(res("create", "", "pods", "", "default", "")); c.Level != auditv1.LevelNone {
		t.Errorf("empty policy audits: %+v", c)
	}
}

func TestFirstMatchingRuleWins(t *testing.T) {
	p, _, err := ParsePolicy([]byte(`
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  resources: [{group: "", resources: ["secrets"]}]
- level: RequestResponse
`))
	if err != nil {
		t.Fatal(err)
	}
	if l := p.Evaluate(res("create", "", "secrets", "", "default", "")).Level; l != auditv1.LevelMetadata {
		t.Errorf("secrets: %s", l)
	}
	if l := p.Evaluate(nonRes("get", "/metrics")).Level; l != auditv1.LevelRequestResponse {
		t.Errorf("catch-all: %s", l)
	}
}

func TestParsePolicyErrors(t *testing.T) {
	for _, tc := range []struct {
		name, policy, err string
	}{
		{"wrong version", "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]", "unknown group version"},
		{"wrong kind", "apiVersion: audit.k8s.io/v1\nkind: Event\nrules: [{level: None}]", "unknown group version"},
		{"no rules", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []", "0 rules"},
		{"no level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{verbs: [get]}]", "rules[0].level: Required value"},
		{"bad level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Everything}]", `rules[0].level: Unsupported value: "Everything"`},
		{"bad stage", "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Done]\nrules: [{level: None}]", `omitStages[0]: Invalid value: "Done"`},
		{"bad rule stage", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, omitStages: [Done]}]", `rules[0].omitStages[0]`},
		{"relative URL", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [healthz]}]", "must begin with a '/'"},
		{"inner wildcard", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [/a*/b]}]", "must be the final character"},
		{"URLs and resources", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [/x], namespaces: [a]}]", "both regular resources and non-resource URLs"},
		{"names without resources", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{resourceNames: [x]}]}]", "requires at least one resource"},
		{"bad group", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{group: apps/v1}]}]", `resources.group: Invalid value: "apps/v1"`},
		{"not YAML", "apiVersion: [", "failed decoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParsePolicy([]byte(tc.policy))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("err = %v, want it to contain %q", err, tc.err)
			}
		})
	}
}

func TestParsePolicyUnknownFieldIsAWarning(t *testing.T) {
	p, warnings, err := ParsePolicy([]byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata, verb: [get]}]"))
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "lenient") {
		t.Errorf("warnings = %v", warnings)
	}
	// The misspelt field is ignored, so the rule matches everything.
	if l := p.Evaluate(res("create", "", "pods", "", "default", "")).Level; l != auditv1.LevelMetadata {
		t.Errorf("level = %s", l)
	}
}

// The policy the documentation ships must parse and must keep secrets,
// config maps and tokens at Metadata at most.
func TestShippedPolicy(t *testing.T) {
	p, warnings, err := LoadPolicyFile("../../docs/audit-policy.yaml")
	if err != nil || len(warnings) > 0 {
		t.Fatalf("docs/audit-policy.yaml: %v %v", err, warnings)
	}
	users := []*authnv1.UserInfo{
		{Username: "system:admin", Groups: []string{"system:masters", "system:authenticated"}},
		{Username: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}},
		{Username: "system:kube-controller-manager", Groups: []string{"system:authenticated"}},
		{Username: "system:serviceaccount:kube-system:namespace-controller", Groups: []string{"system:serviceaccounts", "system:authenticated"}},
	}
	sensitive := []Attributes{
		res("", "", "secrets", "", "default", "s"),
		res("", "", "configmaps", "", "kube-system", "c"),
		res("", "", "serviceaccounts", "token", "default", "sa"),
		res("", "authentication.k8s.io", "tokenreviews", "", "", ""),
	}
	for _, u := range users {
		for _, a := range sensitive {
			for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"} {
				a.User, a.Verb = u, verb
				if l := p.Evaluate(a).Level; atLeast(l, auditv1.LevelRequest) {
					t.Errorf("%s %s %s/%s by %s: level %s", verb, a.APIGroup, a.Resource, a.Subresource, u.Username, l)
				}
			}
		}
	}
	// Ordinary writes are recorded with their bodies.
	if l := p.Evaluate(res("create", "apps", "deployments", "", "default", "")).Level; l != auditv1.LevelRequestResponse {
		t.Errorf("deployment create: %s", l)
	}
	if l := p.Evaluate(nonRes("get", "/readyz")).Level; l != auditv1.LevelNone {
		t.Errorf("/readyz: %s", l)
	}
}

func TestLoadPolicyFileMissing(t *testing.T) {
	if _, _, err := LoadPolicyFile(t.TempDir() + "/nothing.yaml"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v", err)
	}
}
