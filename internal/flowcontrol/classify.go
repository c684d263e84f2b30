package flowcontrol

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// Request is what classification reads of a request: who asks (after
// impersonation) and for what.
type Request struct {
	User   string
	Groups []string
	// ResourceRequest tells a request for an API object from one for a
	// plain path (discovery, health, metrics).
	ResourceRequest bool
	// Verb is the Kubernetes verb of a resource request, the lower-case
	// HTTP method of any other.
	Verb                                       string
	APIGroup, Resource, Subresource, Namespace string
	// Path is the URL path of a request that is not for a resource.
	Path string
}

// classify returns the first schema, in matching order, that matches r.
// The list always ends with catch-all, which matches every request of
// an authenticated or unauthenticated user; a request of neither (no
// user at all) still falls to it, as upstream's fallback does.
func classify(schemas []*flowcontrolv1.FlowSchema, r *Request) *flowcontrolv1.FlowSchema {
	var catchAll *flowcontrolv1.FlowSchema
	for _, fs := range schemas {
		if matchesSchema(fs, r) {
			return fs
		}
		if fs.Name == flowcontrolv1.FlowSchemaNameCatchAll {
			catchAll = fs
		}
	}
	return catchAll
}

func matchesSchema(fs *flowcontrolv1.FlowSchema, r *Request) bool {
	for i := range fs.Spec.Rules {
		rule := &fs.Spec.Rules[i]
		if !slices.ContainsFunc(rule.Subjects, func(s flowcontrolv1.Subject) bool { return matchesSubject(s, r) }) {
			continue
		}
		if r.ResourceRequest {
			if slices.ContainsFunc(rule.ResourceRules, func(rr flowcontrolv1.ResourcePolicyRule) bool { return matchesResourceRule(rr, r) }) {
				return true
			}
		} else if slices.ContainsFunc(rule.NonResourceRules, func(nr flowcontrolv1.NonResourcePolicyRule) bool { return matchesNonResourceRule(nr, r) }) {
			return true
		}
	}
	return false
}

const serviceAccountPrefix = "system:serviceaccount:"

func matchesSubject(s flowcontrolv1.Subject, r *Request) bool {
	switch s.Kind {
	case flowcontrolv1.SubjectKindUser:
		return s.User != nil && (s.User.Name == flowcontrolv1.NameAll || s.User.Name == r.User)
	case flowcontrolv1.SubjectKindGroup:
		return s.Group != nil && (s.Group.Name == flowcontrolv1.NameAll || slices.Contains(r.Groups, s.Group.Name))
	case flowcontrolv1.SubjectKindServiceAccount:
		if s.ServiceAccount == nil {
			return false
		}
		rest, ok := strings.CutPrefix(r.User, serviceAccountPrefix+s.ServiceAccount.Namespace+":")
		if !ok {
			return false
		}
		return s.ServiceAccount.Name == flowcontrolv1.NameAll || rest == s.ServiceAccount.Name
	}
	return false
}

func matchesResourceRule(rule flowcontrolv1.ResourcePolicyRule, r *Request) bool {
	resource := r.Resource
	if r.Subresource != "" {
		resource += "/" + r.Subresource
	}
	if !member(r.Verb, rule.Verbs, flowcontrolv1.VerbAll) ||
		!member(resource, rule.Resources, flowcontrolv1.ResourceAll) ||
		!member(r.APIGroup, rule.APIGroups, flowcontrolv1.APIGroupAll) {
		return false
	}
	if r.Namespace == "" {
		return rule.ClusterScope
	}
	return member(r.Namespace, rule.Namespaces, flowcontrolv1.NamespaceEvery)
}

// matchesNonResourceRule matches the path itself or any path below it,
// as upstream does: "/readyz" also covers "/readyz/etcd", and "/apis/*"
// covers "/apis/apps" but not "/apis".
func matchesNonResourceRule(rule flowcontrolv1.NonResourcePolicyRule, r *Request) bool {
	if !member(r.Verb, rule.Verbs, flowcontrolv1.VerbAll) {
		return false
	}
	for _, u := range rule.NonResourceURLs {
		if u == flowcontrolv1.NonResourceAll || u == r.Path {
			return true
		}
		prefix := strings.TrimSuffix(u, "*")
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if strings.HasPrefix(r.Path, prefix) {
			return true
		}
	}
	return false
}

// member reports whether x is in list, or list is the wildcard alone
// (validation keeps the wildcard alone in its list).
func member(x string, list []string, wildcard string) bool {
	if len(list) == 1 && list[0] == wildcard {
		return true
	}
	return slices.Contains(list, x)
}

// distinguisher names a request's flow within its schema.
func distinguisher(fs *flowcontrolv1.FlowSchema, r *Request) string {
	if fs.Spec.DistinguisherMethod == nil {
		return ""
	}
	switch fs.Spec.DistinguisherMethod.Type {
	case flowcontrolv1.FlowDistinguisherMethodByUserType:
		return r.User
	case flowcontrolv1.FlowDistinguisherMethodByNamespaceType:
		return r.Namespace
	}
	return ""
}

// flowHash is upstream's hash of a flow, so that a flow is dealt the same
// queues as upstream would deal it.
func flowHash(schema, distinguisher string) uint64 {
	h := sha256.New()
	h.Write([]byte(schema))
	h.Write([]byte{0})
	h.Write([]byte(distinguisher))
	return binary.LittleEndian.Uint64(h.Sum(nil)[:8])
}
