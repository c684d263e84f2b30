package flowcontrol

import (
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	registry "github.com/orca-project/orca/internal/registry/flowcontrol"
)

// bootstrapPlan is the configuration every new cluster starts with.
func bootstrapPlan(serverCL int) plan {
	return makePlan(
		append(registry.MandatoryPriorityLevelConfigurations(), registry.SuggestedPriorityLevelConfigurations()...),
		append(registry.MandatoryFlowSchemas(), registry.SuggestedFlowSchemas()...),
		serverCL, time.Unix(0, 0))
}

func TestClassifyUnderTheBootstrapConfiguration(t *testing.T) {
	schemas := bootstrapPlan(600).schemas
	user := func(name string, groups ...string) Request {
		return Request{User: name, Groups: append(groups, "system:authenticated")}
	}
	res := func(r Request, verb, group, resource, ns string) Request {
		r.ResourceRequest, r.Verb, r.APIGroup, r.Resource, r.Namespace = true, verb, group, resource, ns
		return r
	}
	path := func(r Request, verb, p string) Request {
		r.Verb, r.Path = verb, p
		return r
	}
	admin := user("system:admin", "system:masters")
	node := user("system:node:n1", "system:nodes")
	kcm := user("system:kube-controller-manager")
	sched := user("system:kube-scheduler")
	ksa := user("system:serviceaccount:kube-system:deployment-controller", "system:serviceaccounts", "system:serviceaccounts:kube-system")
	sa := user("system:serviceaccount:apps:builder", "system:serviceaccounts", "system:serviceaccounts:apps")
	alice := user("alice")
	anon := Request{User: "system:anonymous", Groups: []string{"system:unauthenticated"}}
	for _, tc := range []struct {
		name string
		r    Request
		want string
	}{
		{"administrator", res(admin, "delete", "", "pods", "default"), "exempt"},
		{"administrator's metrics", path(admin, "get", "/metrics"), "exempt"},
		{"anonymous probe", path(anon, "get", "/readyz"), "probes"},
		{"a probe's checks are probes too", path(anon, "get", "/readyz/etcd"), "probes"},
		{"posting to a probe path", path(alice, "post", "/healthz"), "global-default"},
		{"node status", res(node, "patch", "", "nodes/status", ""), "system-node-high"},
		{"node lease", res(node, "update", "coordination.k8s.io", "leases", "kube-node-lease"), "system-node-high"},
		{"node's pods", res(node, "list", "", "pods", ""), "system-nodes"},
		{"node's discovery", path(node, "get", "/apis"), "system-nodes"},
		{"controller manager's lease", res(kcm, "update", "coordination.k8s.io", "leases", "kube-system"), "system-leader-election"},
		{"controller manager watching leases", res(kcm, "watch", "coordination.k8s.io", "leases", "kube-system"), "kube-controller-manager"},
		{"scheduler binding", res(sched, "create", "", "pods/binding", "default"), "kube-scheduler"},
		{"controller's lease", res(ksa, "get", "coordination.k8s.io", "leases", "kube-system"), "system-leader-election"},
		{"controller", res(ksa, "update", "apps", "replicasets", "default"), "kube-system-service-accounts"},
		{"workload service account", res(sa, "list", "", "configmaps", "apps"), "service-accounts"},
		{"user", res(alice, "list", "", "configmaps", "default"), "global-default"},
		{"anonymous", res(anon, "get", "", "namespaces", ""), "global-default"},
		{"nobody at all", res(Request{User: "x"}, "get", "", "pods", "default"), "catch-all"},
	} {
		if got := classify(schemas, &tc.r).Name; got != tc.want {
			t.Errorf("%s: classified as %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestRules(t *testing.T) {
	subject := func(s flowcontrolv1.Subject) *flowcontrolv1.FlowSchema {
		return &flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects:         []flowcontrolv1.Subject{s},
			ResourceRules:    []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{"", "apps"}, Resources: []string{"pods", "deployments/scale"}, Namespaces: []string{"a"}}},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"/apis/*", "/version"}}},
		}}}}
	}
	sa := func(ns, name string) flowcontrolv1.Subject {
		return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: ns, Name: name}}
	}
	everyone := flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: "*"}}
	get := func(user, group, resource, sub, ns string) *Request {
		return &Request{User: user, ResourceRequest: true, Verb: "get", APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns}
	}
	for _, tc := range []struct {
		name string
		fs   *flowcontrolv1.FlowSchema
		r    *Request
		want bool
	}{
		{"any user", subject(flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "*"}}), get("u", "", "pods", "", "a"), true},
		{"named user", subject(flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "v"}}), get("u", "", "pods", "", "a"), false},
		{"any group", subject(everyone), get("u", "", "pods", "", "a"), true},
		{"service account by name", subject(sa("a", "b")), get("system:serviceaccount:a:b", "", "pods", "", "a"), true},
		{"other service account", subject(sa("a", "b")), get("system:serviceaccount:a:bc", "", "pods", "", "a"), false},
		{"any service account of a namespace", subject(sa("a", "*")), get("system:serviceaccount:a:x", "", "pods", "", "a"), true},
		{"namespace prefix is not the namespace", subject(sa("a", "*")), get("system:serviceaccount:ab:x", "", "pods", "", "a"), false},
		{"subresource", subject(everyone), get("u", "apps", "deployments", "scale", "a"), true},
		{"subresource not listed", subject(everyone), get("u", "", "pods", "log", "a"), false},
		{"group not listed", subject(everyone), get("u", "batch", "pods", "", "a"), false},
		{"other namespace", subject(everyone), get("u", "", "pods", "", "b"), false},
		{"cluster scope not asked", subject(everyone), get("u", "", "pods", "", ""), false},
		{"verb not listed", subject(everyone), &Request{ResourceRequest: true, Verb: "delete", Resource: "pods", Namespace: "a"}, false},
		{"path below a prefix", subject(everyone), &Request{Verb: "get", Path: "/apis/apps/v1"}, true},
		{"the prefix itself", subject(everyone), &Request{Verb: "get", Path: "/apis"}, false},
		{"exact path", subject(everyone), &Request{Verb: "post", Path: "/version"}, true},
		{"path not listed", subject(everyone), &Request{Verb: "get", Path: "/versions"}, false},
	} {
		if got := matchesSchema(tc.fs, tc.r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDistinguisher(t *testing.T) {
	r := &Request{User: "alice", Namespace: "team"}
	for _, tc := range []struct {
		method *flowcontrolv1.FlowDistinguisherMethod
		want   string
	}{
		{nil, ""},
		{&flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}, "alice"},
		{&flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByNamespaceType}, "team"},
	} {
		fs := &flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{DistinguisherMethod: tc.method}}
		if got := distinguisher(fs, r); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.method, got, tc.want)
		}
	}
	if flowHash("global-default", "alice") == flowHash("global-default", "bob") || flowHash("a", "bc") == flowHash("ab", "c") {
		t.Error("distinct flows hash alike")
	}
}
