package flowcontrol

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry/registrytest"
)

type wantErr = registrytest.WantErr

func schema(name string, mutate func(*flowcontrolv1.FlowSchema)) *flowcontrolv1.FlowSchema {
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "global-default"},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: groups("team"),
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, Namespaces: []string{"default"},
				}},
			}},
		},
	}
	if mutate != nil {
		mutate(fs)
	}
	defaultFlowSchema(fs)
	return fs
}

func TestDefaultFlowSchema(t *testing.T) {
	if got := schema("s", nil).Spec.MatchingPrecedence; got != 1000 {
		t.Errorf("matchingPrecedence = %d, want 1000", got)
	}
}

func TestValidateFlowSchema(t *testing.T) {
	rule := func(fs *flowcontrolv1.FlowSchema) *flowcontrolv1.PolicyRulesWithSubjects { return &fs.Spec.Rules[0] }
	for _, tc := range []struct {
		name   string
		fs     *flowcontrolv1.FlowSchema
		want   []wantErr
		mutate func(*flowcontrolv1.FlowSchema)
	}{
		{name: "valid"},
		{name: "precedence 1 is exempt's", mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 1 },
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.matchingPrecedence", Detail: "only the schema named 'exempt' may have matchingPrecedence 1"}}},
		{name: "precedence bounds", mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 10001 },
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.matchingPrecedence", Detail: "must not be greater than 10000"}}},
		{name: "negative precedence", mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = -1 },
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.matchingPrecedence", Detail: "must be a positive value"}}},
		{name: "distinguisher", mutate: func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: "ByGroup"}
		}, want: []wantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.distinguisherMethod.type"}}},
		{name: "level required", mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.PriorityLevelConfiguration.Name = "" },
			want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.priorityLevelConfiguration.name", Detail: "must reference a priority level"}}},
		{name: "subjects and rules required", mutate: func(fs *flowcontrolv1.FlowSchema) {
			rule(fs).Subjects, rule(fs).ResourceRules = nil, nil
		}, want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.rules[0].subjects", Detail: "subjects must contain at least one value"},
			{Type: field.ErrorTypeRequired, Field: "spec.rules[0]", Detail: "at least one of resourceRules and nonResourceRules has to be non-empty"},
		}},
		{name: "subject kinds", mutate: func(fs *flowcontrolv1.FlowSchema) {
			rule(fs).Subjects = []flowcontrolv1.Subject{
				{Kind: flowcontrolv1.SubjectKindUser, Group: &flowcontrolv1.GroupSubject{Name: "g"}},
				{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: "Bad_Name"}},
				{Kind: "Robot"},
			}
		}, want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.rules[0].subjects[0].user", Detail: "user is required when subject kind is 'User'"},
			{Type: field.ErrorTypeForbidden, Field: "spec.rules[0].subjects[0].group", Detail: "group is forbidden when subject kind is not 'Group'"},
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].subjects[1].serviceAccount.name"},
			{Type: field.ErrorTypeRequired, Field: "spec.rules[0].subjects[1].serviceAccount.namespace", Detail: "must specify namespace for service account"},
			{Type: field.ErrorTypeNotSupported, Field: "spec.rules[0].subjects[2].kind"},
		}},
		{name: "any service account of a namespace", mutate: func(fs *flowcontrolv1.FlowSchema) {
			rule(fs).Subjects = []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: "*", Namespace: "apps"}}}
		}},
		{name: "resource rule", mutate: func(fs *flowcontrolv1.FlowSchema) {
			rule(fs).ResourceRules = []flowcontrolv1.ResourcePolicyRule{{
				Verbs: []string{"*", "get"}, APIGroups: []string{"*", "apps"}, Resources: []string{"*", "pods"}, Namespaces: []string{"Not_A_Label"},
			}, {Verbs: []string{"fly"}, APIGroups: []string{""}, Resources: []string{"pods"}}}
		}, want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].resourceRules[0].verbs", Detail: "if '*' is present, must not specify other verbs"},
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].resourceRules[0].apiGroups", Detail: "if '*' is present, must not specify other api groups"},
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].resourceRules[0].resources", Detail: "if '*' is present, must not specify other resources"},
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].resourceRules[0].namespaces[0]"},
			{Type: field.ErrorTypeNotSupported, Field: "spec.rules[0].resourceRules[1].verbs"},
			{Type: field.ErrorTypeRequired, Field: "spec.rules[0].resourceRules[1].namespaces", Detail: "resource rules that are not cluster scoped must supply at least one namespace"},
		}},
		{name: "non-resource rule", mutate: func(fs *flowcontrolv1.FlowSchema) {
			rule(fs).NonResourceRules = []flowcontrolv1.NonResourcePolicyRule{{
				Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/apis/*", "metrics", "/a b", "/a//b", "/a*", "/"},
			}}
		}, want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].nonResourceRules[0].nonResourceURLs[2]", Detail: "must start with slash"},
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].nonResourceRules[0].nonResourceURLs[3]", Detail: "must not contain white-space"},
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].nonResourceRules[0].nonResourceURLs[4]", Detail: "must not contain double slash"},
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].nonResourceRules[0].nonResourceURLs[5]", Detail: "wildcard can only do suffix matching"},
		}},
		{name: "mandatory spec is fixed", fs: func() *flowcontrolv1.FlowSchema {
			fs := MandatoryFlowSchemas()[1].DeepCopy()
			fs.Spec.MatchingPrecedence = 9999
			return fs
		}(), want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec", Detail: "spec of 'catch-all' must equal the fixed value"}}},
		{name: "duplicate condition", mutate: func(fs *flowcontrolv1.FlowSchema) {
			fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "Dangling"}, {Type: "Dangling"}, {}}
		}, want: []wantErr{
			{Type: field.ErrorTypeDuplicate, Field: "status.conditions[1].type"},
			{Type: field.ErrorTypeRequired, Field: "status.conditions[2].type", Detail: "must not be empty"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := tc.fs
			if fs == nil {
				fs = schema("team-lists", tc.mutate)
			}
			registrytest.CheckErrs(t, validateFlowSchema(fs), tc.want)
		})
	}
}

func level(name string, mutate func(*flowcontrolv1.PriorityLevelConfiguration)) *flowcontrolv1.PriorityLevelConfiguration {
	pl := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{}},
			},
		},
	}
	if mutate != nil {
		mutate(pl)
	}
	DefaultPriorityLevelConfiguration(pl)
	return pl
}

func TestDefaultPriorityLevelConfiguration(t *testing.T) {
	l := level("batch", nil).Spec.Limited
	if *l.NominalConcurrencyShares != 30 || *l.LendablePercent != 0 || l.BorrowingLimitPercent != nil {
		t.Errorf("limited defaults: %+v", l)
	}
	if q := l.LimitResponse.Queuing; q.Queues != 64 || q.HandSize != 8 || q.QueueLengthLimit != 50 {
		t.Errorf("queuing defaults: %+v", q)
	}
	// An explicit zero stays zero in v1.
	zero := level("zero", func(pl *flowcontrolv1.PriorityLevelConfiguration) {
		pl.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](0)
	})
	if *zero.Spec.Limited.NominalConcurrencyShares != 0 {
		t.Error("an explicit zero of nominalConcurrencyShares was defaulted")
	}
	e := &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Exempt", Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{}}}
	DefaultPriorityLevelConfiguration(e)
	if *e.Spec.Exempt.NominalConcurrencyShares != 0 || *e.Spec.Exempt.LendablePercent != 0 {
		t.Errorf("exempt defaults: %+v", e.Spec.Exempt)
	}
}

func TestValidatePriorityLevelConfiguration(t *testing.T) {
	limited := func(pl *flowcontrolv1.PriorityLevelConfiguration) *flowcontrolv1.LimitedPriorityLevelConfiguration {
		return pl.Spec.Limited
	}
	for _, tc := range []struct {
		name string
		pl   *flowcontrolv1.PriorityLevelConfiguration
		want []wantErr
	}{
		{name: "valid", pl: level("batch", nil)},
		{name: "rejecting", pl: level("batch", func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			limited(pl).LimitResponse = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}
		})},
		{name: "zero shares", pl: level("batch", func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			limited(pl).NominalConcurrencyShares = ptr.To[int32](0)
		})},
		{name: "exempt only by name", pl: level("exempt-ish", func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			pl.Spec.Type = flowcontrolv1.PriorityLevelEnablementExempt
		}), want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.type", Detail: "type must be 'Exempt' if and only if name is 'exempt'"},
			{Type: field.ErrorTypeForbidden, Field: "spec.limited", Detail: "must be nil if the type is not Limited"},
		}},
		{name: "bad numbers", pl: level("batch", func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			l := limited(pl)
			l.NominalConcurrencyShares = ptr.To[int32](-1)
			l.LendablePercent = ptr.To[int32](101)
			l.BorrowingLimitPercent = ptr.To[int32](-1)
			l.LimitResponse.Queuing = &flowcontrolv1.QueuingConfiguration{Queues: 4, HandSize: 5, QueueLengthLimit: -1}
		}), want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.limited.nominalConcurrencyShares", Detail: "must be a non-negative integer"},
			{Type: field.ErrorTypeInvalid, Field: "spec.limited.limitResponse.queuing.queueLengthLimit", Detail: "must be positive"},
			{Type: field.ErrorTypeInvalid, Field: "spec.limited.limitResponse.queuing.handSize", Detail: "should not be greater than queues (4)"},
			{Type: field.ErrorTypeInvalid, Field: "spec.limited.lendablePercent", Detail: "must be between 0 and 100, inclusive"},
			{Type: field.ErrorTypeInvalid, Field: "spec.limited.borrowingLimitPercent", Detail: "if specified, must be a non-negative integer"},
		}},
		{name: "entropy", pl: level("batch", func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			limited(pl).LimitResponse.Queuing = &flowcontrolv1.QueuingConfiguration{Queues: 1 << 20, HandSize: 4}
		}), want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.limited.limitResponse.queuing.handSize", Detail: "required entropy bits of deckSize 1048576 and handSize 4 should not be greater than 60"}}},
		{name: "too many queues", pl: level("batch", func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			limited(pl).LimitResponse.Queuing = &flowcontrolv1.QueuingConfiguration{Queues: 10_000_001, HandSize: 1}
		}), want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.limited.limitResponse.queuing.queues", Detail: "must not be greater than 10000000"}}},
		{name: "union of limit response", pl: level("batch", func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			limited(pl).LimitResponse.Type = flowcontrolv1.LimitResponseTypeReject
		}), want: []wantErr{{Type: field.ErrorTypeForbidden, Field: "spec.limited.limitResponse.queuing", Detail: "must be nil if limited.limitResponse.type is not Limited"}}},
		{name: "limited needs limited", pl: level("batch", func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			pl.Spec.Limited = nil
			pl.Spec.Exempt = &flowcontrolv1.ExemptPriorityLevelConfiguration{}
		}), want: []wantErr{
			{Type: field.ErrorTypeForbidden, Field: "spec.exempt", Detail: "must be nil if the type is Limited"},
			{Type: field.ErrorTypeRequired, Field: "spec.limited", Detail: "must not be empty when type is Limited"},
		}},
		{name: "exempt's shares may change", pl: func() *flowcontrolv1.PriorityLevelConfiguration {
			pl := MandatoryPriorityLevelConfigurations()[1].DeepCopy()
			pl.Spec.Exempt.NominalConcurrencyShares = ptr.To[int32](10)
			pl.Spec.Exempt.LendablePercent = ptr.To[int32](50)
			return pl
		}()},
		{name: "exempt's type may not", pl: func() *flowcontrolv1.PriorityLevelConfiguration {
			pl := MandatoryPriorityLevelConfigurations()[1].DeepCopy()
			pl.Spec.Exempt = nil
			return pl
		}(), want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec", Detail: "spec of 'exempt' except the 'spec.exempt' field must equal the fixed value"}}},
		{name: "catch-all is fixed", pl: func() *flowcontrolv1.PriorityLevelConfiguration {
			pl := MandatoryPriorityLevelConfigurations()[0].DeepCopy()
			pl.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](50)
			return pl
		}(), want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec", Detail: "spec of 'catch-all' must equal the fixed value"}}},
		{name: "unknown type", pl: level("batch", func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Type = "Lazy" }),
			want: []wantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.type"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			registrytest.CheckErrs(t, validatePriorityLevelConfiguration(tc.pl), tc.want)
		})
	}
}
