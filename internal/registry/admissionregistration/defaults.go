package admissionregistration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilptr "k8s.io/utils/ptr"
)

// The defaults below are upstream's (pkg/apis/admissionregistration/v1
// defaults.go), applied where its generated defaulters apply them.

// defaultClientConfig gives a service reference upstream's port.
func defaultClientConfig(cc *admissionregistrationv1.WebhookClientConfig) {
	if cc.Service != nil && cc.Service.Port == nil {
		cc.Service.Port = utilptr.To[int32](443)
	}
}

func defaultRules(rules []admissionregistrationv1.RuleWithOperations) {
	for i := range rules {
		defaultRule(&rules[i].Rule)
	}
}

func defaultRule(rule *admissionregistrationv1.Rule) {
	if rule.Scope == nil {
		rule.Scope = utilptr.To(admissionregistrationv1.AllScopes)
	}
}

func defaultMatchResources(mr *admissionregistrationv1.MatchResources) {
	if mr == nil {
		return
	}
	if mr.MatchPolicy == nil {
		mr.MatchPolicy = utilptr.To(admissionregistrationv1.Equivalent)
	}
	if mr.NamespaceSelector == nil {
		mr.NamespaceSelector = &metav1.LabelSelector{}
	}
	if mr.ObjectSelector == nil {
		mr.ObjectSelector = &metav1.LabelSelector{}
	}
	for i := range mr.ResourceRules {
		defaultRule(&mr.ResourceRules[i].Rule)
	}
	for i := range mr.ExcludeResourceRules {
		defaultRule(&mr.ExcludeResourceRules[i].Rule)
	}
}

func defaultPolicyFailurePolicy(fp **admissionregistrationv1.FailurePolicyType) {
	if *fp == nil {
		*fp = utilptr.To(admissionregistrationv1.Fail)
	}
}
