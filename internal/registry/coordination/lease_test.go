package coordination

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"
)

func TestValidateLease(t *testing.T) {
	type want struct {
		typ    field.ErrorType
		field  string
		detail string
	}
	tests := []struct {
		name string
		spec coordinationv1.LeaseSpec
		want []want
	}{{
		name: "empty",
	}, {
		name: "typical holder",
		spec: coordinationv1.LeaseSpec{HolderIdentity: utilptr.To("node-1"), LeaseDurationSeconds: utilptr.To[int32](40), LeaseTransitions: utilptr.To[int32](0)},
	}, {
		name: "zero duration",
		spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: utilptr.To[int32](0)},
		want: []want{{field.ErrorTypeInvalid, "spec.leaseDurationSeconds", "must be greater than 0"}},
	}, {
		name: "negative transitions",
		spec: coordinationv1.LeaseSpec{LeaseTransitions: utilptr.To[int32](-1)},
		want: []want{{field.ErrorTypeInvalid, "spec.leaseTransitions", "must be greater than or equal to 0"}},
	}, {
		name: "known strategy with preferred holder",
		spec: coordinationv1.LeaseSpec{Strategy: utilptr.To(coordinationv1.OldestEmulationVersion), PreferredHolder: utilptr.To("node-2")},
	}, {
		name: "vendor strategy",
		spec: coordinationv1.LeaseSpec{Strategy: utilptr.To[coordinationv1.CoordinatedLeaseStrategy]("example.com/round-robin")},
	}, {
		name: "unknown strategy",
		spec: coordinationv1.LeaseSpec{Strategy: utilptr.To[coordinationv1.CoordinatedLeaseStrategy]("Newest")},
		want: []want{{field.ErrorTypeNotSupported, "spec.strategy.strategy", ""}},
	}, {
		name: "malformed vendor strategy",
		spec: coordinationv1.LeaseSpec{Strategy: utilptr.To[coordinationv1.CoordinatedLeaseStrategy]("a/b/c")},
		want: []want{{field.ErrorTypeInvalid, "spec.strategy.strategy", ""}},
	}, {
		name: "preferred holder without strategy",
		spec: coordinationv1.LeaseSpec{PreferredHolder: utilptr.To("node-2")},
		want: []want{{field.ErrorTypeForbidden, "spec.preferredHolder", "may only be specified if `strategy` is defined"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := validateLease(&coordinationv1.Lease{Spec: tc.spec})
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i, w := range tc.want {
				if got[i].Type != w.typ || got[i].Field != w.field || (w.detail != "" && got[i].Detail != w.detail) {
					t.Errorf("error %d: got %v, want %v", i, got[i], w)
				}
			}
		})
	}
}
