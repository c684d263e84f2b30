package flowcontrol

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The bootstrap configuration is upstream's
// (k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap), object for object;
// a test compares the two. Defaulting changes none of these objects, so
// the ensurer can compare them with what is stored as they are.

// MandatoryPriorityLevelConfigurations are the levels every server must
// have: exempt, for the administrators and the server itself, and
// catch-all, for whatever no other FlowSchema matches.
func MandatoryPriorityLevelConfigurations() []*flowcontrolv1.PriorityLevelConfiguration {
	return []*flowcontrolv1.PriorityLevelConfiguration{
		limitedLevel(flowcontrolv1.PriorityLevelConfigurationNameCatchAll, 5, 0, nil),
		newLevel(flowcontrolv1.PriorityLevelConfigurationNameExempt, flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementExempt,
			Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](0),
				LendablePercent:          ptr.To[int32](0),
			},
		}),
	}
}

// MandatoryFlowSchemas route system:masters to the exempt level and
// everyone else, failing all other schemas, to catch-all.
func MandatoryFlowSchemas() []*flowcontrolv1.FlowSchema {
	return []*flowcontrolv1.FlowSchema{
		newFlowSchema(flowcontrolv1.FlowSchemaNameExempt, flowcontrolv1.PriorityLevelConfigurationNameExempt, 1, "",
			rulesForAll(groups("system:masters"))),
		newFlowSchema(flowcontrolv1.FlowSchemaNameCatchAll, flowcontrolv1.PriorityLevelConfigurationNameCatchAll, 10000, flowcontrolv1.FlowDistinguisherMethodByUserType,
			rulesForAll(groups("system:unauthenticated", "system:authenticated"))),
	}
}

// SuggestedPriorityLevelConfigurations are upstream's further levels,
// which operators may change or delete.
func SuggestedPriorityLevelConfigurations() []*flowcontrolv1.PriorityLevelConfiguration {
	return []*flowcontrolv1.PriorityLevelConfiguration{
		// Components that keep the cluster and its pods running.
		limitedLevel("system", 30, 33, &flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 6, QueueLengthLimit: 50}),
		// Node health, apart from system so that nodes report even when
		// pod start-up loads the server.
		limitedLevel("node-high", 40, 25, &flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 6, QueueLengthLimit: 50}),
		limitedLevel("leader-election", 10, 0, &flowcontrolv1.QueuingConfiguration{Queues: 16, HandSize: 4, QueueLengthLimit: 50}),
		limitedLevel("workload-high", 40, 50, &flowcontrolv1.QueuingConfiguration{Queues: 128, HandSize: 6, QueueLengthLimit: 50}),
		limitedLevel("workload-low", 100, 90, &flowcontrolv1.QueuingConfiguration{Queues: 128, HandSize: 6, QueueLengthLimit: 50}),
		limitedLevel("global-default", 20, 50, &flowcontrolv1.QueuingConfiguration{Queues: 128, HandSize: 6, QueueLengthLimit: 50}),
	}
}

// SuggestedFlowSchemas route upstream's component identities, nodes,
// service accounts and probes; Orca's components run as the same
// identities, so they are classified as upstream's are.
func SuggestedFlowSchemas() []*flowcontrolv1.FlowSchema {
	all := func(subjects []flowcontrolv1.Subject) flowcontrolv1.PolicyRulesWithSubjects {
		return rulesForAll(subjects)
	}
	kubeSystemSAs := []flowcontrolv1.Subject{{
		Kind:           flowcontrolv1.SubjectKindServiceAccount,
		ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: flowcontrolv1.NameAll, Namespace: metav1.NamespaceSystem},
	}}
	return []*flowcontrolv1.FlowSchema{
		newFlowSchema("system-nodes", "system", 500, flowcontrolv1.FlowDistinguisherMethodByUserType, all(groups("system:nodes"))),
		newFlowSchema("system-node-high", "node-high", 400, flowcontrolv1.FlowDistinguisherMethodByUserType, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: groups("system:nodes"),
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{
				resourceRule([]string{flowcontrolv1.VerbAll}, "", []string{"nodes", "nodes/status"}, true),
				resourceRule([]string{flowcontrolv1.VerbAll}, "coordination.k8s.io", []string{"leases"}, false),
			},
		}),
		newFlowSchema("probes", flowcontrolv1.PriorityLevelConfigurationNameExempt, 2, "", flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: groups("system:unauthenticated", "system:authenticated"),
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{
				Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/readyz", "/livez"},
			}},
		}),
		newFlowSchema("system-leader-election", "leader-election", 100, flowcontrolv1.FlowDistinguisherMethodByUserType, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: append(users("system:kube-controller-manager", "system:kube-scheduler"), kubeSystemSAs...),
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{
				resourceRule([]string{"get", "create", "update"}, "coordination.k8s.io", []string{"leases"}, false),
			},
		}),
		newFlowSchema("kube-controller-manager", "workload-high", 800, flowcontrolv1.FlowDistinguisherMethodByNamespaceType, all(users("system:kube-controller-manager"))),
		newFlowSchema("kube-scheduler", "workload-high", 800, flowcontrolv1.FlowDistinguisherMethodByNamespaceType, all(users("system:kube-scheduler"))),
		newFlowSchema("kube-system-service-accounts", "workload-high", 900, flowcontrolv1.FlowDistinguisherMethodByNamespaceType, all(kubeSystemSAs)),
		newFlowSchema("service-accounts", "workload-low", 9000, flowcontrolv1.FlowDistinguisherMethodByUserType, all(groups("system:serviceaccounts"))),
		newFlowSchema("global-default", "global-default", 9900, flowcontrolv1.FlowDistinguisherMethodByUserType, all(groups("system:unauthenticated", "system:authenticated"))),
	}
}

func newLevel(name string, spec flowcontrolv1.PriorityLevelConfigurationSpec) *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}},
		Spec:       spec,
	}
}

// limitedLevel is a Limited level that queues when queuing is set and
// rejects otherwise.
func limitedLevel(name string, shares, lendable int32, queuing *flowcontrolv1.QueuingConfiguration) *flowcontrolv1.PriorityLevelConfiguration {
	response := flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}
	if queuing != nil {
		response = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: queuing}
	}
	return newLevel(name, flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited,
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To(shares),
			LendablePercent:          ptr.To(lendable),
			LimitResponse:            response,
		},
	})
}

func newFlowSchema(name, level string, precedence int32, method flowcontrolv1.FlowDistinguisherMethodType, rules flowcontrolv1.PolicyRulesWithSubjects) *flowcontrolv1.FlowSchema {
	var dm *flowcontrolv1.FlowDistinguisherMethod
	if method != "" {
		dm = &flowcontrolv1.FlowDistinguisherMethod{Type: method}
	}
	return &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
			MatchingPrecedence:         precedence,
			DistinguisherMethod:        dm,
			Rules:                      []flowcontrolv1.PolicyRulesWithSubjects{rules},
		},
	}
}

// rulesForAll matches every request of the subjects, resource or not, in
// every namespace and at cluster scope.
func rulesForAll(subjects []flowcontrolv1.Subject) flowcontrolv1.PolicyRulesWithSubjects {
	return flowcontrolv1.PolicyRulesWithSubjects{
		Subjects: subjects,
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{
			resourceRule([]string{flowcontrolv1.VerbAll}, flowcontrolv1.APIGroupAll, []string{flowcontrolv1.ResourceAll}, true),
		},
		NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{
			Verbs: []string{flowcontrolv1.VerbAll}, NonResourceURLs: []string{flowcontrolv1.NonResourceAll},
		}},
	}
}

func resourceRule(verbs []string, group string, resources []string, clusterScope bool) flowcontrolv1.ResourcePolicyRule {
	return flowcontrolv1.ResourcePolicyRule{
		Verbs:        verbs,
		APIGroups:    []string{group},
		Resources:    resources,
		Namespaces:   []string{flowcontrolv1.NamespaceEvery},
		ClusterScope: clusterScope,
	}
}

func groups(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, len(names))
	for i, n := range names {
		out[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: n}}
	}
	return out
}

func users(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, len(names))
	for i, n := range names {
		out[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: n}}
	}
	return out
}
