package statefulset

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestParentAndOrdinal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		parent  string
		ordinal int
	}{
		{"web-0", "web", 0},
		{"web-12", "web", 12},
		{"my-web-3", "my-web", 3},
		{"web-0-1", "web-0", 1},
		{"web", "", -1},
		{"web-", "", -1},
		{"web-abc", "", -1},
		{"web-99999999999", "web", -1},
	} {
		p, o := ParentAndOrdinal(tc.name)
		if p != tc.parent || o != tc.ordinal {
			t.Errorf("ParentAndOrdinal(%q) = %q, %d; want %q, %d", tc.name, p, o, tc.parent, tc.ordinal)
		}
	}
}

func TestNewPodIdentityAndStorage(t *testing.T) {
	set := testSet(3)
	set.Spec.VolumeClaimTemplates = []v1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "www"}}}
	set.Spec.Template.Spec.Volumes = []v1.Volume{
		{Name: "www", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "cache", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	}
	p := newPod(set, 2)
	if p.Name != "web-2" || p.Spec.Hostname != "web-2" || p.Spec.Subdomain != "nginx" || p.GenerateName != "" {
		t.Fatalf("identity: name %q hostname %q subdomain %q generateName %q", p.Name, p.Spec.Hostname, p.Spec.Subdomain, p.GenerateName)
	}
	if p.Labels[PodNameLabel] != "web-2" || p.Labels[PodIndexLabel] != "2" || p.Labels["app"] != "web" {
		t.Fatalf("labels: %v", p.Labels)
	}
	if ref := metav1.GetControllerOf(p); ref == nil || ref.Kind != "StatefulSet" || ref.Name != "web" {
		t.Fatalf("controller ref: %v", ref)
	}
	if len(p.Spec.Volumes) != 2 || p.Spec.Volumes[0].PersistentVolumeClaim == nil ||
		p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "www-web-2" || p.Spec.Volumes[1].Name != "cache" {
		t.Fatalf("volumes: %+v", p.Spec.Volumes)
	}
	if !identityMatches(set, p) || !storageMatches(set, p) {
		t.Fatal("a new pod does not match its own identity and storage")
	}
	p.Labels[PodIndexLabel] = "1"
	if identityMatches(set, p) {
		t.Fatal("a wrong pod-index label matches")
	}
	claims := claimsFor(set, 2)
	if len(claims) != 1 || claims[0].Name != "www-web-2" || claims[0].Labels["app"] != "web" || claims[0].Namespace != "ns" {
		t.Fatalf("claims: %+v", claims)
	}
}

func TestNewVersionedPod(t *testing.T) {
	cur, upd := testSet(3), testSet(3)
	cur.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](2)
	for _, tc := range []struct {
		ordinal int
		want    string
	}{{0, "web-a"}, {1, "web-a"}, {2, "web-b"}} {
		if got := podRevision(newVersionedPod(cur, upd, "web-a", "web-b", tc.ordinal)); got != tc.want {
			t.Errorf("ordinal %d with partition 2: revision %q, want %q", tc.ordinal, got, tc.want)
		}
	}
	cur.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	if got := podRevision(newVersionedPod(cur, upd, "web-a", "web-b", 0)); got != "web-b" {
		t.Errorf("OnDelete: a recreated pod gets %q, want the update revision", got)
	}
}
