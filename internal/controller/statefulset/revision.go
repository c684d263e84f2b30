package statefulset

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// RevisionHashLabel is the label upstream's history package puts on every
// ControllerRevision (not to be confused with the pods' revision label).
const RevisionHashLabel = "controller.kubernetes.io/hash"

// templatePatch is what a ControllerRevision stores, as upstream: a
// strategic merge patch that replaces spec.template, so that applying it
// to the set (the controller, or `kubectl rollout undo`) restores the
// template of that revision.
func templatePatch(set *appsv1.StatefulSet) ([]byte, error) {
	raw, err := json.Marshal(set.Spec.Template)
	if err != nil {
		return nil, fmt.Errorf("encode template: %w", err)
	}
	var tmpl map[string]any
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		return nil, fmt.Errorf("decode template: %w", err)
	}
	tmpl["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": tmpl}})
}

// HashRevision is upstream's HashControllerRevision: FNV-32 of the data,
// and of the collision count when there is one, safely encoded.
func HashRevision(data []byte, collisionCount *int32) string {
	h := fnv.New32()
	h.Write(data)
	if collisionCount != nil {
		h.Write([]byte(strconv.FormatInt(int64(*collisionCount), 10)))
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// RevisionName is PARENT-HASH, the parent cut as upstream so that the
// name stays a valid object name.
func RevisionName(parent, hash string) string {
	if len(parent) > 223 {
		parent = parent[:223]
	}
	return parent + "-" + hash
}

// newRevision builds (without creating) the ControllerRevision for set's
// current template.
func newRevision(set *appsv1.StatefulSet, revision int64, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	patch, err := templatePatch(set)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	for k, v := range set.Spec.Template.Labels {
		labels[k] = v
	}
	hash := HashRevision(patch, collisionCount)
	labels[RevisionHashLabel] = hash
	cr := &appsv1.ControllerRevision{
		Data:     runtime.RawExtension{Raw: patch},
		Revision: revision,
	}
	cr.Name = RevisionName(set.Name, hash)
	cr.Namespace = set.Namespace
	cr.Labels = labels
	cr.OwnerReferences = append(cr.OwnerReferences, controllerutil.OwnerRef(set, controllerKind))
	if len(set.Annotations) > 0 {
		cr.Annotations = map[string]string{}
		for k, v := range set.Annotations {
			cr.Annotations[k] = v
		}
	}
	return cr, nil
}

// applyRevision is set with the template recorded in revision.
func applyRevision(set *appsv1.StatefulSet, revision *appsv1.ControllerRevision) (*appsv1.StatefulSet, error) {
	cur, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("encode statefulset: %w", err)
	}
	patched, err := strategicpatch.StrategicMergePatch(cur, revision.Data.Raw, &appsv1.StatefulSet{})
	if err != nil {
		return nil, fmt.Errorf("apply revision %s: %w", revision.Name, err)
	}
	out := &appsv1.StatefulSet{}
	if err := json.Unmarshal(patched, out); err != nil {
		return nil, fmt.Errorf("decode revision %s: %w", revision.Name, err)
	}
	return out, nil
}

// sortRevisions orders revisions oldest first: by revision number, then
// creation, then name, as upstream.
func sortRevisions(rs []*appsv1.ControllerRevision) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
}

// nextRevision is one more than the highest revision number.
func nextRevision(rs []*appsv1.ControllerRevision) int64 {
	var max int64
	for _, r := range rs {
		if r.Revision > max {
			max = r.Revision
		}
	}
	return max + 1
}

// equalData compares two revisions' templates as JSON values, so that a
// reformatting of the stored bytes is not mistaken for a new template.
func equalData(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return apiequality.Semantic.DeepEqual(x, y)
}

// revisionChoice says how to arrive at the update revision.
type revisionChoice struct {
	// Existing is the revision to use as it is (the latest one), or to
	// renumber to the new revision's number when Renumber is set (a
	// rollback to an older template).
	Existing *appsv1.ControllerRevision
	Renumber bool
	// Create is set when no revision holds the template.
	Create bool
}

// chooseUpdateRevision compares the candidate revision with the history
// (sorted oldest first) as upstream's getStatefulSetRevisions does.
func chooseUpdateRevision(history []*appsv1.ControllerRevision, candidate *appsv1.ControllerRevision) revisionChoice {
	var equal []*appsv1.ControllerRevision
	for _, r := range history {
		if equalData(r.Data.Raw, candidate.Data.Raw) {
			equal = append(equal, r)
		}
	}
	if len(equal) == 0 {
		return revisionChoice{Create: true}
	}
	last := equal[len(equal)-1]
	if history[len(history)-1] == last {
		return revisionChoice{Existing: last}
	}
	return revisionChoice{Existing: last, Renumber: true}
}

// revisionsToDelete are the oldest revisions beyond limit that no pod,
// nor the current or update revision, uses. history is sorted oldest first.
func revisionsToDelete(history []*appsv1.ControllerRevision, live map[string]bool, limit int) []*appsv1.ControllerRevision {
	var dead []*appsv1.ControllerRevision
	for _, r := range history {
		if !live[r.Name] {
			dead = append(dead, r)
		}
	}
	if len(dead) <= limit {
		return nil
	}
	return dead[:len(dead)-limit]
}
