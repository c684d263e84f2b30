package audit

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"sigs.k8s.io/yaml"
)

// Attributes are what a policy rule can match: upstream's authorizer
// attributes, as far as the audit policy reads them.
type Attributes struct {
	// User is the authenticated caller; nil when authentication failed.
	User *authnv1.UserInfo
	// Verb is the Kubernetes verb (get, list, watch, create...) of a
	// resource request, or the lower-case HTTP method of any other.
	Verb string
	// ResourceRequest tells a request for an API object from a request
	// for a plain path (/healthz, /version, /api...).
	ResourceRequest bool
	APIGroup        string
	APIVersion      string
	Resource        string
	Subresource     string
	Namespace       string
	Name            string
	// Path is the request's URL path.
	Path string
}

// RequestConfig is what a policy decides for one request.
type RequestConfig struct {
	Level             auditv1.Level
	OmitStages        []auditv1.Stage
	OmitManagedFields bool
}

// Policy is a parsed audit.k8s.io/v1 Policy. Its zero value audits
// nothing.
type Policy struct {
	rules             []auditv1.PolicyRule
	omitStages        []auditv1.Stage
	omitManagedFields bool
}

// LoadPolicyFile reads and parses the policy file of --audit-policy-file.
// Warnings name problems that lenient decoding got past (unknown fields),
// as upstream accepts them with a warning.
func LoadPolicyFile(path string) (*Policy, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("audit policy: %w", err)
	}
	p, warnings, err := ParsePolicy(data)
	if err != nil {
		return nil, nil, fmt.Errorf("audit policy %s: %w", path, err)
	}
	return p, warnings, nil
}

// ParsePolicy parses a Policy in YAML or JSON. As upstream, the document
// must be audit.k8s.io/v1 Policy with at least one rule, and it is
// validated before use.
func ParsePolicy(data []byte) (*Policy, []string, error) {
	var in auditv1.Policy
	var warnings []string
	if err := yaml.UnmarshalStrict(data, &in); err != nil {
		in = auditv1.Policy{}
		if lerr := yaml.Unmarshal(data, &in); lerr != nil {
			return nil, nil, fmt.Errorf("failed decoding: %w", lerr)
		}
		warnings = append(warnings, fmt.Sprintf("audit policy contains errors, falling back to lenient decoding: %v", err))
	}
	if in.APIVersion != auditv1.SchemeGroupVersion.String() || in.Kind != "Policy" {
		return nil, nil, fmt.Errorf("unknown group version field %s, Kind=%s in policy: want %s, Kind=Policy", in.APIVersion, in.Kind, auditv1.SchemeGroupVersion)
	}
	if err := validatePolicy(&in); err != nil {
		return nil, nil, err
	}
	if len(in.Rules) == 0 {
		return nil, nil, errors.New("loaded illegal policy with 0 rules")
	}
	return NewPolicy(in), warnings, nil
}

// NewPolicy prepares a decoded policy for evaluation. The policy's
// omitStages apply to every rule, so they are merged in once here.
func NewPolicy(in auditv1.Policy) *Policy {
	p := &Policy{omitStages: in.OmitStages, omitManagedFields: in.OmitManagedFields}
	for _, r := range in.Rules {
		r.OmitStages = unionStages(in.OmitStages, r.OmitStages)
		p.rules = append(p.rules, r)
	}
	return p
}

func unionStages(a, b []auditv1.Stage) []auditv1.Stage {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Evaluate returns the configuration of the first rule that matches, or
// level None (with the policy's omitted stages) when none does.
func (p *Policy) Evaluate(a Attributes) RequestConfig {
	for i := range p.rules {
		r := &p.rules[i]
		if ruleMatches(r, a) {
			omitMF := p.omitManagedFields
			if r.OmitManagedFields != nil {
				omitMF = *r.OmitManagedFields
			}
			return RequestConfig{Level: r.Level, OmitStages: r.OmitStages, OmitManagedFields: omitMF}
		}
	}
	return RequestConfig{Level: auditv1.LevelNone, OmitStages: p.omitStages, OmitManagedFields: p.omitManagedFields}
}

func ruleMatches(r *auditv1.PolicyRule, a Attributes) bool {
	if len(r.Users) > 0 && (a.User == nil || !slices.Contains(r.Users, a.User.Username)) {
		return false
	}
	if len(r.UserGroups) > 0 {
		if a.User == nil || !slices.ContainsFunc(a.User.Groups, func(g string) bool { return slices.Contains(r.UserGroups, g) }) {
			return false
		}
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, a.Verb) {
		return false
	}
	if len(r.Namespaces) > 0 || len(r.Resources) > 0 {
		return resourceMatches(r, a)
	}
	if len(r.NonResourceURLs) > 0 {
		return !a.ResourceRequest && slices.ContainsFunc(r.NonResourceURLs, func(spec string) bool { return pathMatches(a.Path, spec) })
	}
	return true
}

// pathMatches accepts "*", the exact path, or a prefix ending in "*".
func pathMatches(path, spec string) bool {
	if spec == "*" || spec == path {
		return true
	}
	return strings.HasSuffix(spec, "*") && strings.HasPrefix(path, strings.TrimRight(spec, "*"))
}

func resourceMatches(r *auditv1.PolicyRule, a Attributes) bool {
	if !a.ResourceRequest {
		return false
	}
	// Cluster-scoped resources have the empty namespace, which a rule can
	// name as "".
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, a.Namespace) {
		return false
	}
	if len(r.Resources) == 0 {
		return true
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined = a.Resource + "/" + a.Subresource
	}
	for _, gr := range r.Resources {
		if gr.Group != a.APIGroup && gr.Group != "*" {
			continue
		}
		if len(gr.Resources) == 0 {
			return true
		}
		if len(gr.ResourceNames) > 0 && !slices.Contains(gr.ResourceNames, a.Name) {
			continue
		}
		for _, res := range gr.Resources {
			switch {
			case res == combined || res == "*":
				return true
			case a.Subresource != "" && strings.HasPrefix(res, "*/") && a.Subresource == res[2:]:
				return true
			case strings.HasSuffix(res, "/*") && a.Resource == strings.TrimSuffix(res, "/*"):
				return true
			}
		}
	}
	return false
}

var (
	validLevels = []auditv1.Level{auditv1.LevelNone, auditv1.LevelMetadata, auditv1.LevelRequest, auditv1.LevelRequestResponse}
	validStages = []auditv1.Stage{auditv1.StageRequestReceived, auditv1.StageResponseStarted, auditv1.StageResponseComplete, auditv1.StagePanic}
)

// validatePolicy applies upstream's checks, with field paths in its
// messages.
func validatePolicy(p *auditv1.Policy) error {
	var errs []string
	errs = append(errs, validateStages(p.OmitStages, "omitStages")...)
	for i, r := range p.Rules {
		path := fmt.Sprintf("rules[%d]", i)
		switch {
		case r.Level == "":
			errs = append(errs, path+".level: Required value")
		case !slices.Contains(validLevels, r.Level):
			errs = append(errs, fmt.Sprintf("%s.level: Unsupported value: %q: supported values: \"None\", \"Metadata\", \"Request\", \"RequestResponse\"", path, r.Level))
		}
		for j, u := range r.NonResourceURLs {
			if u == "*" {
				continue
			}
			if !strings.HasPrefix(u, "/") {
				errs = append(errs, fmt.Sprintf("%s.nonResourceURLs[%d]: Invalid value: %q: non-resource URL rules must begin with a '/' character", path, j, u))
			}
			if u != "" && strings.ContainsRune(u[:len(u)-1], '*') {
				errs = append(errs, fmt.Sprintf("%s.nonResourceURLs[%d]: Invalid value: %q: non-resource URL wildcards '*' must be the final character of the rule", path, j, u))
			}
		}
		for _, gr := range r.Resources {
			if gr.Group != "" && gr.Group != "*" {
				if msgs := validation.IsDNS1123Subdomain(gr.Group); len(msgs) > 0 {
					errs = append(errs, fmt.Sprintf("%s.resources.group: Invalid value: %q: %s", path, gr.Group, strings.Join(msgs, ",")))
				}
			}
			if len(gr.ResourceNames) > 0 && len(gr.Resources) == 0 {
				errs = append(errs, fmt.Sprintf("%s.resources.resourceNames: Invalid value: %q: using resourceNames requires at least one resource", path, gr.ResourceNames))
			}
		}
		errs = append(errs, validateStages(r.OmitStages, path+".omitStages")...)
		if len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.Namespaces) > 0) {
			errs = append(errs, fmt.Sprintf("%s.nonResourceURLs: Invalid value: %q: rules cannot apply to both regular resources and non-resource URLs", path, r.NonResourceURLs))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, ", "))
	}
	return nil
}

func validateStages(stages []auditv1.Stage, path string) []string {
	var errs []string
	for i, s := range stages {
		if !slices.Contains(validStages, s) {
			errs = append(errs, fmt.Sprintf("%s[%d]: Invalid value: %q: allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic", path, i, s))
		}
	}
	return errs
}

// levelRank orders levels from None to RequestResponse.
func levelRank(l auditv1.Level) int {
	return slices.Index(validLevels, l)
}

// atLeast reports whether level l records what level min records.
func atLeast(l, min auditv1.Level) bool { return levelRank(l) >= levelRank(min) }
