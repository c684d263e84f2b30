package statefulset

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestRevisionRoundTrip(t *testing.T) {
	old := testSet(3)
	r, err := newRevision(old, 1, ptr.To[int32](0))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Name, "web-") || r.Labels[RevisionHashLabel] != strings.TrimPrefix(r.Name, "web-") || r.Labels["app"] != "web" {
		t.Fatalf("revision metadata: name %q labels %v", r.Name, r.Labels)
	}
	if r2, _ := newRevision(old, 7, ptr.To[int32](0)); r2.Name != r.Name {
		t.Fatalf("the same template hashes differently: %q, %q", r.Name, r2.Name)
	}
	if r3, _ := newRevision(old, 1, ptr.To[int32](1)); r3.Name == r.Name {
		t.Fatal("a collision count does not change the name")
	}

	changed := old.DeepCopy()
	changed.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	changed.Spec.Replicas = ptr.To[int32](5)
	rc, _ := newRevision(changed, 2, ptr.To[int32](0))
	if rc.Name == r.Name {
		t.Fatal("a new image keeps the revision name")
	}
	restored, err := applyRevision(changed, r)
	if err != nil {
		t.Fatal(err)
	}
	if img := restored.Spec.Template.Spec.Containers[0].Image; img != "nginx:1" {
		t.Fatalf("applying the old revision gives image %q", img)
	}
	if *restored.Spec.Replicas != 5 {
		t.Fatalf("applying a revision changed replicas to %d", *restored.Spec.Replicas)
	}
}

func TestRevisionName(t *testing.T) {
	long := strings.Repeat("a", 300)
	if got := RevisionName(long, "abc"); len(got) != 223+4 {
		t.Fatalf("long parent: %d characters", len(got))
	}
	if got := RevisionName("web", "abc"); got != "web-abc" {
		t.Fatalf("RevisionName = %q", got)
	}
}

func rev(name string, n int64, data string) *appsv1.ControllerRevision {
	r := &appsv1.ControllerRevision{Revision: n, Data: runtime.RawExtension{Raw: []byte(data)}}
	r.Name = name
	return r
}

func TestChooseUpdateRevision(t *testing.T) {
	a, b := `{"spec":{"template":{"a":1}}}`, `{"spec":{"template":{"b":1}}}`
	cand := rev("web-new", 3, a)
	for _, tc := range []struct {
		name    string
		history []*appsv1.ControllerRevision
		want    revisionChoice
	}{
		{"no history", nil, revisionChoice{Create: true}},
		{"new template", []*appsv1.ControllerRevision{rev("web-b", 1, b)}, revisionChoice{Create: true}},
		{"unchanged", []*appsv1.ControllerRevision{rev("web-b", 1, b), rev("web-a", 2, a)}, revisionChoice{Existing: &appsv1.ControllerRevision{}}},
		{"reformatted bytes are the same template", []*appsv1.ControllerRevision{rev("web-a", 2, `{"spec": {"template": {"a": 1}}}`)}, revisionChoice{Existing: &appsv1.ControllerRevision{}}},
		{"rollback", []*appsv1.ControllerRevision{rev("web-a", 1, a), rev("web-b", 2, b)}, revisionChoice{Existing: &appsv1.ControllerRevision{}, Renumber: true}},
	} {
		got := chooseUpdateRevision(tc.history, cand)
		if got.Create != tc.want.Create || got.Renumber != tc.want.Renumber || (got.Existing == nil) != (tc.want.Existing == nil) {
			t.Errorf("%s: got %+v", tc.name, got)
			continue
		}
		if got.Existing != nil && !strings.HasPrefix(got.Existing.Name, "web-a") {
			t.Errorf("%s: chose %s", tc.name, got.Existing.Name)
		}
	}
}

func TestRevisionsToDelete(t *testing.T) {
	h := []*appsv1.ControllerRevision{rev("r1", 1, ""), rev("r2", 2, ""), rev("r3", 3, ""), rev("r4", 4, ""), rev("r5", 5, "")}
	names := func(rs []*appsv1.ControllerRevision) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.Name)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		live  []string
		limit int
		want  string
	}{
		{[]string{"r5"}, 10, ""},
		{[]string{"r5"}, 2, "r1,r2"},
		{[]string{"r5", "r1"}, 2, "r2"},
		{[]string{"r4", "r5"}, 0, "r1,r2,r3"},
	} {
		live := map[string]bool{}
		for _, l := range tc.live {
			live[l] = true
		}
		if got := names(revisionsToDelete(h, live, tc.limit)); got != tc.want {
			t.Errorf("live %v limit %d: delete %q, want %q", tc.live, tc.limit, got, tc.want)
		}
	}
}
