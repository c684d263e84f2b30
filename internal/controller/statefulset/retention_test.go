package statefulset

import (
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSetClaimOwners(t *testing.T) {
	const retain, del = appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	for _, tc := range []struct {
		deleted, scaled appsv1.PersistentVolumeClaimRetentionPolicyType
		ordinal         int // the set has 2 replicas: ordinal 2 is scaled down
		start           []string
		want            string
	}{
		{retain, retain, 0, nil, ""},
		{retain, retain, 0, []string{"StatefulSet", "Pod"}, ""},
		{del, retain, 0, nil, "StatefulSet"},
		{del, retain, 2, nil, "StatefulSet"},
		{retain, del, 0, []string{"StatefulSet"}, ""},
		{retain, del, 2, nil, "Pod"},
		{del, del, 0, []string{"Pod"}, "StatefulSet"},
		{del, del, 2, []string{"StatefulSet"}, "Pod"},
	} {
		set := testSet(2)
		set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: tc.deleted, WhenScaled: tc.scaled}
		p := pod(set, tc.ordinal, "a", "ready")
		claim := &v1.PersistentVolumeClaim{}
		for _, k := range tc.start {
			ref := metav1.OwnerReference{Kind: k, Name: "web", UID: set.UID}
			if k == "Pod" {
				ref = metav1.OwnerReference{Kind: k, Name: p.Name, UID: p.UID}
			}
			claim.OwnerReferences = append(claim.OwnerReferences, ref)
		}
		setClaimOwners(claim, set, p)
		var kinds []string
		for _, r := range claim.OwnerReferences {
			kinds = append(kinds, r.Kind)
		}
		sort.Strings(kinds)
		if got := strings.Join(kinds, ","); got != tc.want {
			t.Errorf("whenDeleted %s whenScaled %s ordinal %d: owners %q, want %q", tc.deleted, tc.scaled, tc.ordinal, got, tc.want)
		}
		if setClaimOwners(claim, set, p) {
			t.Errorf("whenDeleted %s whenScaled %s ordinal %d: a second pass changes the claim again", tc.deleted, tc.scaled, tc.ordinal)
		}
	}
}
