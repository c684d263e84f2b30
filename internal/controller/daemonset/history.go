package daemonset

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/davecgh/go-spew/spew"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
)

// computeHash is upstream's controller.ComputeHash: an FNV-32a of the
// template as spew prints it, plus the collision count, so that the
// controller-revision-hash labels match what upstream would write.
func computeHash(template *v1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	printer := spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}
	printer.Fprintf(h, "%#v", *template)
	if collisionCount != nil {
		buf := make([]byte, 8)
		binary.LittleEndian.PutUint32(buf, uint32(*collisionCount))
		h.Write(buf)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// revisionPatch is what a ControllerRevision of a DaemonSet holds (and
// what `kubectl rollout undo` applies): a strategic merge patch replacing
// spec.template.
func revisionPatch(ds *appsv1.DaemonSet) ([]byte, error) {
	raw, err := json.Marshal(ds)
	if err != nil {
		return nil, fmt.Errorf("encode daemonset: %w", err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decode daemonset: %w", err)
	}
	spec, _ := obj["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	if template == nil {
		template = map[string]any{}
	}
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// newRevision is the ControllerRevision recording ds's current template.
func newRevision(ds *appsv1.DaemonSet, hash string, revision int64) (*appsv1.ControllerRevision, error) {
	patch, err := revisionPatch(ds)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	for k, v := range ds.Spec.Template.Labels {
		labels[k] = v
	}
	labels[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: ds.Name + "-" + hash, Namespace: ds.Namespace, Labels: labels, Annotations: ds.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, controllerKind)},
		},
		Data:     runtime.RawExtension{Raw: patch},
		Revision: revision,
	}, nil
}

// splitRevisions separates the revisions that record ds's current
// template from the older ones.
func splitRevisions(ds *appsv1.DaemonSet, revs []*appsv1.ControllerRevision) (current, old []*appsv1.ControllerRevision, err error) {
	patch, err := revisionPatch(ds)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range revs {
		if bytes.Equal(r.Data.Raw, patch) {
			current = append(current, r)
		} else {
			old = append(old, r)
		}
	}
	return current, old, nil
}

func maxRevision(revs []*appsv1.ControllerRevision) int64 {
	var m int64
	for _, r := range revs {
		m = max(m, r.Revision)
	}
	return m
}

// revisionsToPrune are the oldest old revisions beyond the history limit,
// skipping any that a live pod still runs.
func revisionsToPrune(old []*appsv1.ControllerRevision, limit int, liveHashes map[string]bool) []*appsv1.ControllerRevision {
	kill := len(old) - limit
	if kill <= 0 {
		return nil
	}
	sorted := append([]*appsv1.ControllerRevision(nil), old...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Revision < sorted[j].Revision })
	var out []*appsv1.ControllerRevision
	for _, r := range sorted {
		if kill <= 0 {
			break
		}
		if liveHashes[r.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]] {
			continue
		}
		out = append(out, r)
		kill--
	}
	return out
}

// constructHistory returns the revision for ds's current template,
// creating it (or raising its number above the old ones) as needed, and
// the old revisions.
func (c *Controller) constructHistory(ctx context.Context, ds *appsv1.DaemonSet, revs []*appsv1.ControllerRevision) (*appsv1.ControllerRevision, []*appsv1.ControllerRevision, error) {
	for i, r := range revs {
		if _, ok := r.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]; ok {
			continue
		}
		// Revisions written before the label existed are named by it.
		upd := r.DeepCopy()
		if upd.Labels == nil {
			upd.Labels = map[string]string{}
		}
		upd.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] = upd.Name
		out, err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Update(ctx, upd, metav1.UpdateOptions{})
		if err != nil {
			return nil, nil, fmt.Errorf("label revision %s: %w", r.Name, err)
		}
		revs[i] = out
	}
	current, old, err := splitRevisions(ds, revs)
	if err != nil {
		return nil, nil, err
	}
	next := maxRevision(old) + 1
	if len(current) == 0 {
		cur, err := c.snapshot(ctx, ds, next)
		return cur, old, err
	}
	sort.SliceStable(current, func(i, j int) bool { return current[i].Revision > current[j].Revision })
	cur := current[0]
	for _, dup := range current[1:] {
		// Equal templates recorded twice: keep the newest.
		err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Delete(ctx, dup.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &dup.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return nil, nil, fmt.Errorf("delete duplicate revision %s: %w", dup.Name, err)
		}
	}
	if cur.Revision < next {
		upd := cur.DeepCopy()
		upd.Revision = next
		out, err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Update(ctx, upd, metav1.UpdateOptions{})
		if err != nil {
			return nil, nil, fmt.Errorf("renumber revision %s: %w", cur.Name, err)
		}
		cur = out
	}
	return cur, old, nil
}

// snapshot creates the revision for ds's template. A name taken by a
// different template is a hash collision: the collision count is raised
// so the next attempt hashes differently, as upstream.
func (c *Controller) snapshot(ctx context.Context, ds *appsv1.DaemonSet, revision int64) (*appsv1.ControllerRevision, error) {
	hash := computeHash(&ds.Spec.Template, ds.Status.CollisionCount)
	rev, err := newRevision(ds, hash, revision)
	if err != nil {
		return nil, err
	}
	out, err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Create(ctx, rev, metav1.CreateOptions{})
	if err == nil {
		return out, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create revision %s: %w", rev.Name, err)
	}
	existing, getErr := c.client.AppsV1().ControllerRevisions(ds.Namespace).Get(ctx, rev.Name, metav1.GetOptions{})
	if getErr != nil {
		return nil, fmt.Errorf("get revision %s: %w", rev.Name, getErr)
	}
	if bytes.Equal(existing.Data.Raw, rev.Data.Raw) && metav1.IsControlledBy(existing, ds) {
		return existing, nil
	}
	cur, getErr := c.client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
	if getErr != nil {
		return nil, fmt.Errorf("get daemonset: %w", getErr)
	}
	if ptr.Deref(cur.Status.CollisionCount, 0) != ptr.Deref(ds.Status.CollisionCount, 0) {
		return nil, fmt.Errorf("stale collision count of daemonset %s; retrying", ds.Name)
	}
	cur.Status.CollisionCount = ptr.To(ptr.Deref(cur.Status.CollisionCount, 0) + 1)
	if _, err := c.client.AppsV1().DaemonSets(ds.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return nil, fmt.Errorf("raise collision count: %w", err)
	}
	return nil, fmt.Errorf("revision name %s collides; collision count raised", rev.Name)
}
