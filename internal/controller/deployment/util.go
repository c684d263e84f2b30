package deployment

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	intstrutil "k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/dump"
)

// Annotations and condition reasons, spelled as upstream's so that
// kubectl (rollout history, undo, status) and users' tooling read them.
const (
	RevisionAnnotation        = "deployment.kubernetes.io/revision"
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	MaxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"

	ReplicaSetUpdatedReason    = "ReplicaSetUpdated"
	FailedRSCreateReason       = "ReplicaSetCreateError"
	NewReplicaSetReason        = "NewReplicaSetCreated"
	FoundNewRSReason           = "FoundNewReplicaSet"
	NewRSAvailableReason       = "NewReplicaSetAvailable"
	TimedOutReason             = "ProgressDeadlineExceeded"
	PausedDeployReason         = "DeploymentPaused"
	ResumedDeployReason        = "DeploymentResumed"
	MinimumReplicasAvailable   = "MinimumReplicasAvailable"
	MinimumReplicasUnavailable = "MinimumReplicasUnavailable"

	// maxRevHistoryLengthInChars bounds the revision-history annotation.
	maxRevHistoryLengthInChars = 2000
)

// annotationsToSkip are the Deployment's annotations not copied to its
// ReplicaSets: the controller's own, and kubectl apply's record.
var annotationsToSkip = map[string]bool{
	corev1.LastAppliedConfigAnnotation: true,
	RevisionAnnotation:                 true,
	RevisionHistoryAnnotation:          true,
	DesiredReplicasAnnotation:          true,
	MaxReplicasAnnotation:              true,
	appsv1.DeprecatedRollbackTo:        true,
}

// ComputeHash is upstream's pod-template-hash: FNV-32a over the dumped
// template, plus the collision count, rendered with SafeEncodeString. The
// same function means the same ReplicaSet names as on a Kubernetes cluster.
func ComputeHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(*template))
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		h.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// EqualIgnoreHash compares two templates ignoring the pod-template-hash
// label, which the Deployment's own template never carries.
func EqualIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return apiequality.Semantic.DeepEqual(a, b)
}

// FindNewReplicaSet is the oldest ReplicaSet whose template is the
// Deployment's (several can exist after a hash collision was resolved).
func FindNewReplicaSet(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	sorted := append([]*appsv1.ReplicaSet(nil), rsList...)
	sort.SliceStable(sorted, func(i, j int) bool { return olderRS(sorted[i], sorted[j]) })
	for _, rs := range sorted {
		if EqualIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// FindOldReplicaSets is every ReplicaSet but the new one.
func FindOldReplicaSets(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	newRS := FindNewReplicaSet(d, rsList)
	var old []*appsv1.ReplicaSet
	for _, rs := range rsList {
		if newRS != nil && rs.UID == newRS.UID {
			continue
		}
		old = append(old, rs)
	}
	return old
}

func olderRS(a, b *appsv1.ReplicaSet) bool {
	if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.Name < b.Name
	}
	return a.CreationTimestamp.Before(&b.CreationTimestamp)
}

// Revision is an object's revision annotation; 0 when absent or invalid.
func Revision(obj metav1.Object) int64 {
	v, err := strconv.ParseInt(obj.GetAnnotations()[RevisionAnnotation], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// MaxRevision is the highest revision among rss.
func MaxRevision(rss []*appsv1.ReplicaSet) int64 {
	var m int64
	for _, rs := range rss {
		if rs != nil {
			m = max(m, Revision(rs))
		}
	}
	return m
}

// SetNewReplicaSetAnnotations copies the Deployment's annotations to the
// new ReplicaSet and raises its revision to newRevision, keeping the
// revisions it had before (a rollback reuses a ReplicaSet) in
// revision-history. exists is false for a ReplicaSet about to be created,
// which also gets the replicas annotations. It reports a change.
func SetNewReplicaSetAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet, newRevision string, exists bool, historyLimitChars int) bool {
	changed := copyDeploymentAnnotations(d, rs)
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	oldRevision, had := rs.Annotations[RevisionAnnotation]
	oldInt, err := strconv.ParseInt(oldRevision, 10, 64)
	if err != nil {
		if oldRevision != "" {
			return false
		}
		oldInt = 0
	}
	newInt, err := strconv.ParseInt(newRevision, 10, 64)
	if err != nil {
		return false
	}
	if oldInt < newInt {
		rs.Annotations[RevisionAnnotation] = newRevision
		changed = true
	}
	if had && oldInt < newInt {
		history := rs.Annotations[RevisionHistoryAnnotation]
		olds := strings.Split(history, ",")
		if len(olds[0]) == 0 {
			rs.Annotations[RevisionHistoryAnnotation] = oldRevision
		} else {
			total := len(history) + len(oldRevision) + 1
			start := 0
			for total > historyLimitChars && start < len(olds) {
				total -= len(olds[start]) + 1
				start++
			}
			if total <= historyLimitChars {
				rs.Annotations[RevisionHistoryAnnotation] = strings.Join(append(olds[start:], oldRevision), ",")
			}
		}
	}
	if !exists && SetReplicasAnnotations(rs, *d.Spec.Replicas, *d.Spec.Replicas+MaxSurge(d)) {
		changed = true
	}
	return changed
}

func copyDeploymentAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	changed := false
	for k, v := range d.Annotations {
		if annotationsToSkip[k] {
			continue
		}
		if cur, ok := rs.Annotations[k]; ok && cur == v {
			continue
		}
		if rs.Annotations == nil {
			rs.Annotations = map[string]string{}
		}
		rs.Annotations[k] = v
		changed = true
	}
	return changed
}

// SetReplicasAnnotations records the Deployment's size (and size plus
// surge) at the last scaling on rs, which proportional scaling reads back.
func SetReplicasAnnotations(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	if !ReplicasAnnotationsNeedUpdate(rs, desired, maxReplicas) {
		return false
	}
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	rs.Annotations[DesiredReplicasAnnotation] = strconv.Itoa(int(desired))
	rs.Annotations[MaxReplicasAnnotation] = strconv.Itoa(int(maxReplicas))
	return true
}

// ReplicasAnnotationsNeedUpdate reports whether rs's replicas annotations
// differ from these values.
func ReplicasAnnotationsNeedUpdate(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	return rs.Annotations[DesiredReplicasAnnotation] != strconv.Itoa(int(desired)) ||
		rs.Annotations[MaxReplicasAnnotation] != strconv.Itoa(int(maxReplicas))
}

// IsRollingUpdate reports the RollingUpdate strategy.
func IsRollingUpdate(d *appsv1.Deployment) bool {
	return d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType
}

// ResolveFenceposts turns maxSurge and maxUnavailable into numbers of
// pods: surge rounds up, unavailable down. Should both come to zero (a
// small percentage of few replicas), unavailable becomes 1 so that the
// rollout can proceed even where surging is impossible.
func ResolveFenceposts(maxSurge, maxUnavailable *intstrutil.IntOrString, desired int32) (int32, int32, error) {
	surge, err := intstrutil.GetScaledValueFromIntOrPercent(intstrutil.ValueOrDefault(maxSurge, intstrutil.FromInt32(0)), int(desired), true)
	if err != nil {
		return 0, 0, fmt.Errorf("maxSurge: %w", err)
	}
	unavailable, err := intstrutil.GetScaledValueFromIntOrPercent(intstrutil.ValueOrDefault(maxUnavailable, intstrutil.FromInt32(0)), int(desired), false)
	if err != nil {
		return 0, 0, fmt.Errorf("maxUnavailable: %w", err)
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return int32(surge), int32(unavailable), nil
}

// MaxUnavailable is how many pods a rolling update may take away, never
// more than the Deployment's replicas.
func MaxUnavailable(d *appsv1.Deployment) int32 {
	if !IsRollingUpdate(d) || d.Spec.Strategy.RollingUpdate == nil || *d.Spec.Replicas == 0 {
		return 0
	}
	_, u, _ := ResolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, *d.Spec.Replicas)
	return min(u, *d.Spec.Replicas)
}

// MaxSurge is how many pods above replicas a rolling update may create.
func MaxSurge(d *appsv1.Deployment) int32 {
	if !IsRollingUpdate(d) || d.Spec.Strategy.RollingUpdate == nil {
		return 0
	}
	s, _, _ := ResolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, *d.Spec.Replicas)
	return s
}

// NewRSNewReplicas is the size the new ReplicaSet may grow to now: under
// RollingUpdate as far as the surge allows and never beyond replicas;
// under Recreate straight to replicas (old ones are gone by then).
func NewRSNewReplicas(d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (int32, error) {
	switch d.Spec.Strategy.Type {
	case appsv1.RollingUpdateDeploymentStrategyType:
		var surge intstrutil.IntOrString
		if d.Spec.Strategy.RollingUpdate != nil && d.Spec.Strategy.RollingUpdate.MaxSurge != nil {
			surge = *d.Spec.Strategy.RollingUpdate.MaxSurge
		}
		maxSurge, err := intstrutil.GetScaledValueFromIntOrPercent(&surge, int(*d.Spec.Replicas), true)
		if err != nil {
			return 0, err
		}
		current := surgeCount(allRSs)
		maxTotal := *d.Spec.Replicas + int32(maxSurge)
		if current >= maxTotal {
			return *newRS.Spec.Replicas, nil
		}
		up := min(maxTotal-current, *d.Spec.Replicas-*newRS.Spec.Replicas)
		return *newRS.Spec.Replicas + up, nil
	case appsv1.RecreateDeploymentStrategyType:
		return *d.Spec.Replicas, nil
	default:
		return 0, fmt.Errorf("deployment type %v isn't supported", d.Spec.Strategy.Type)
	}
}

// MaxScaledDown is how many old pods reconcileOldReplicaSets may remove:
// all pods minus the minimum available, minus the new pods that are not
// available yet (they may never become so, and must not be relied on).
func MaxScaledDown(d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) int32 {
	minAvailable := *d.Spec.Replicas - MaxUnavailable(d)
	newUnavailable := *newRS.Spec.Replicas - newRS.Status.AvailableReplicas
	return ReplicaCount(allRSs) - minAvailable - newUnavailable
}

// ScaleDown is one planned change of a ReplicaSet's size.
type ScaleDown struct {
	RS       *appsv1.ReplicaSet
	Replicas int32
}

// PlanUnhealthyCleanup scales old ReplicaSets (oldest first) down by their
// unavailable replicas, at most maxCleanup in all: removing pods that are
// not available costs no availability, and they could otherwise block
// the rollout.
func PlanUnhealthyCleanup(oldRSs []*appsv1.ReplicaSet, maxCleanup int32) []ScaleDown {
	sorted := append([]*appsv1.ReplicaSet(nil), oldRSs...)
	sort.SliceStable(sorted, func(i, j int) bool { return olderRS(sorted[i], sorted[j]) })
	var plan []ScaleDown
	var total int32
	for _, rs := range sorted {
		if total >= maxCleanup {
			break
		}
		spec := *rs.Spec.Replicas
		avail := availableOf(rs)
		if spec == 0 || spec == avail {
			continue
		}
		n := min(maxCleanup-total, spec-avail)
		plan = append(plan, ScaleDown{RS: rs, Replicas: spec - n})
		total += n
	}
	return plan
}

// PlanOldScaleDown scales old ReplicaSets (oldest first) down by as many
// pods as are available beyond the minimum the Deployment must keep.
func PlanOldScaleDown(d *appsv1.Deployment, allRSs, oldRSs []*appsv1.ReplicaSet) []ScaleDown {
	minAvailable := *d.Spec.Replicas - MaxUnavailable(d)
	available := AvailableCount(allRSs)
	if available <= minAvailable {
		return nil
	}
	want := available - minAvailable
	sorted := append([]*appsv1.ReplicaSet(nil), oldRSs...)
	sort.SliceStable(sorted, func(i, j int) bool { return olderRS(sorted[i], sorted[j]) })
	var plan []ScaleDown
	var total int32
	for _, rs := range sorted {
		if total >= want {
			break
		}
		if *rs.Spec.Replicas == 0 {
			continue
		}
		n := min(*rs.Spec.Replicas, want-total)
		plan = append(plan, ScaleDown{RS: rs, Replicas: *rs.Spec.Replicas - n})
		total += n
	}
	return plan
}

// availableOf is a ReplicaSet's available replicas as far as the rollout
// may count on them. A ReplicaSet's status lags its spec: just after a
// scale-down it still reports the pods it is about to delete, so a
// ReplicaSet never counts for more than its spec.
func availableOf(rs *appsv1.ReplicaSet) int32 {
	return min(rs.Status.AvailableReplicas, *rs.Spec.Replicas)
}

// surgeCount is how many pods the ReplicaSets may have right now: a
// ReplicaSet just scaled down still has the pods it is about to delete,
// and counting them keeps a rollout within maxSurge at every moment
// rather than eventually.
func surgeCount(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil && rs.Spec.Replicas != nil {
			n += max(*rs.Spec.Replicas, rs.Status.Replicas)
		}
	}
	return n
}

// ReplicaCount sums the ReplicaSets' spec.replicas.
func ReplicaCount(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil && rs.Spec.Replicas != nil {
			n += *rs.Spec.Replicas
		}
	}
	return n
}

// ActualReplicaCount sums the ReplicaSets' status.replicas.
func ActualReplicaCount(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rs.Status.Replicas
		}
	}
	return n
}

// ReadyCount sums the ReplicaSets' status.readyReplicas.
func ReadyCount(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rs.Status.ReadyReplicas
		}
	}
	return n
}

// AvailableCount sums what the rollout may count on as available.
func AvailableCount(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += availableOf(rs)
		}
	}
	return n
}

// reportedAvailable sums status.availableReplicas, as the Deployment's
// status reports them.
func reportedAvailable(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rs.Status.AvailableReplicas
		}
	}
	return n
}

// terminatingCount sums status.terminatingReplicas; nil when some
// ReplicaSet does not report it.
func terminatingCount(rss []*appsv1.ReplicaSet) *int32 {
	var n int32
	for _, rs := range rss {
		switch {
		case rs == nil:
		case rs.Status.TerminatingReplicas == nil:
			return nil
		default:
			n += *rs.Status.TerminatingReplicas
		}
	}
	return &n
}

// FilterActive keeps the ReplicaSets with a non-zero size.
func FilterActive(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rss {
		if rs != nil && *rs.Spec.Replicas > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// FindActiveOrLatest is the only active ReplicaSet, or the latest one when
// none is active; nil when several are active (a rollout is under way).
func FindActiveOrLatest(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(oldRSs) == 0 {
		return nil
	}
	olds := append([]*appsv1.ReplicaSet(nil), oldRSs...)
	sort.SliceStable(olds, func(i, j int) bool { return largerNewer(olds[i], olds[j]) })
	active := FilterActive(append(olds, newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return olds[0]
	case 1:
		return active[0]
	default:
		return nil
	}
}

// IsSaturated reports whether the new ReplicaSet has all the Deployment's
// replicas, all available.
func IsSaturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, err := strconv.Atoi(rs.Annotations[DesiredReplicasAnnotation])
	if err != nil {
		return false
	}
	return *rs.Spec.Replicas == *d.Spec.Replicas && int32(desired) == *d.Spec.Replicas &&
		rs.Status.AvailableReplicas == *d.Spec.Replicas
}

// largerNewer orders bigger ReplicaSets first, newer first among equals.
func largerNewer(a, b *appsv1.ReplicaSet) bool {
	if *a.Spec.Replicas != *b.Spec.Replicas {
		return *a.Spec.Replicas > *b.Spec.Replicas
	}
	return olderRS(b, a)
}

// largerOlder orders bigger ReplicaSets first, older first among equals.
func largerOlder(a, b *appsv1.ReplicaSet) bool {
	if *a.Spec.Replicas != *b.Spec.Replicas {
		return *a.Spec.Replicas > *b.Spec.Replicas
	}
	return olderRS(a, b)
}

// ProportionalSizes spreads a change of the Deployment's size over its
// active ReplicaSets in proportion to their sizes, as upstream does when
// a Deployment is scaled mid-rollout: each ReplicaSet keeps its share of
// replicas+maxSurge as recorded in its max-replicas annotation, and what
// rounding leaves over goes to the largest (newest when scaling up,
// oldest when scaling down). It returns the new size of every active
// ReplicaSet, in the order they should be written.
func ProportionalSizes(d *appsv1.Deployment, active []*appsv1.ReplicaSet) []ScaleDown {
	rss := append([]*appsv1.ReplicaSet(nil), active...)
	allowed := int32(0)
	if *d.Spec.Replicas > 0 {
		allowed = *d.Spec.Replicas + MaxSurge(d)
	}
	toAdd := allowed - ReplicaCount(rss)
	switch {
	case toAdd > 0:
		sort.SliceStable(rss, func(i, j int) bool { return largerNewer(rss[i], rss[j]) })
	case toAdd < 0:
		sort.SliceStable(rss, func(i, j int) bool { return largerOlder(rss[i], rss[j]) })
	}
	sizes := make([]int32, len(rss))
	var added int32
	for i, rs := range rss {
		sizes[i] = *rs.Spec.Replicas
		if toAdd != 0 {
			p := GetProportion(rs, d, toAdd, added)
			sizes[i] += p
			added += p
		}
	}
	out := make([]ScaleDown, len(rss))
	for i, rs := range rss {
		if i == 0 && toAdd != 0 {
			sizes[i] = max(sizes[i]+toAdd-added, 0)
		}
		out[i] = ScaleDown{RS: rs, Replicas: sizes[i]}
	}
	return out
}

// GetProportion is how many replicas rs gains (or loses, negative) of the
// toAdd the Deployment's resize calls for, given added already handed out.
func GetProportion(rs *appsv1.ReplicaSet, d *appsv1.Deployment, toAdd, added int32) int32 {
	if rs == nil || *rs.Spec.Replicas == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	fraction := replicaSetFraction(rs, d)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(fraction, allowed)
	}
	return max(fraction, allowed)
}

func replicaSetFraction(rs *appsv1.ReplicaSet, d *appsv1.Deployment) int32 {
	if *d.Spec.Replicas == 0 {
		return -*rs.Spec.Replicas
	}
	maxNow := *d.Spec.Replicas + MaxSurge(d)
	before, err := strconv.Atoi(rs.Annotations[MaxReplicasAnnotation])
	if err != nil || before <= 0 {
		// Annotation missing or tampered with: the current size is the
		// best guess, and the callers' bounds keep the result in limits.
		before = int(d.Status.Replicas)
		if before == 0 {
			before = int(*d.Spec.Replicas)
		}
	}
	size := float64(*rs.Spec.Replicas) * float64(maxNow) / float64(before)
	return int32(math.Round(size)) - *rs.Spec.Replicas
}

// ReplicaSetsByRevision orders oldest revision first, for cleanup.
func sortByRevision(rss []*appsv1.ReplicaSet) {
	sort.SliceStable(rss, func(i, j int) bool {
		ri, rj := Revision(rss[i]), Revision(rss[j])
		if ri == rj {
			return olderRS(rss[i], rss[j])
		}
		return ri < rj
	})
}

// CleanupCandidates are the old ReplicaSets to delete beyond
// revisionHistoryLimit: oldest revisions first, and only those with no
// pods, no replicas wanted and a status that has caught up with the spec.
func CleanupCandidates(d *appsv1.Deployment, oldRSs []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	if !HasRevisionHistoryLimit(d) {
		return nil
	}
	var alive []*appsv1.ReplicaSet
	for _, rs := range oldRSs {
		if rs != nil && rs.DeletionTimestamp == nil {
			alive = append(alive, rs)
		}
	}
	diff := int32(len(alive)) - *d.Spec.RevisionHistoryLimit
	if diff <= 0 {
		return nil
	}
	sortByRevision(alive)
	var out []*appsv1.ReplicaSet
	for _, rs := range alive[:diff] {
		if rs.Status.Replicas != 0 || *rs.Spec.Replicas != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		out = append(out, rs)
	}
	return out
}

// HasRevisionHistoryLimit reports a limit other than "unlimited".
func HasRevisionHistoryLimit(d *appsv1.Deployment) bool {
	return d.Spec.RevisionHistoryLimit != nil && *d.Spec.RevisionHistoryLimit != math.MaxInt32
}

// HasProgressDeadline reports a deadline other than "none".
func HasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

// NewCondition is a condition that changes now.
func NewCondition(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason, msg string, now time.Time) appsv1.DeploymentCondition {
	ts := metav1.NewTime(now)
	return appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: msg, LastUpdateTime: ts, LastTransitionTime: ts}
}

// GetCondition returns the condition of type t, or nil.
func GetCondition(st appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// SetCondition sets c unless a condition with the same status and reason
// is there; the transition time moves only when the status changes.
func SetCondition(st *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := GetCondition(*st, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	RemoveCondition(st, c.Type)
	st.Conditions = append(st.Conditions, c)
}

// RemoveCondition drops the condition of type t.
func RemoveCondition(st *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	var out []appsv1.DeploymentCondition
	for _, c := range st.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	st.Conditions = out
}

// DeploymentComplete: every replica updated and available, and the
// latest spec observed.
func DeploymentComplete(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	return st.UpdatedReplicas == *d.Spec.Replicas && st.Replicas == *d.Spec.Replicas &&
		st.AvailableReplicas == *d.Spec.Replicas && st.ObservedGeneration >= d.Generation
}

// DeploymentProgressing reports progress between the stored status and
// the new one: more updated, ready or available replicas, or fewer old.
func DeploymentProgressing(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	old := d.Status
	return st.UpdatedReplicas > old.UpdatedReplicas ||
		st.Replicas-st.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		st.ReadyReplicas > old.ReadyReplicas ||
		st.AvailableReplicas > old.AvailableReplicas
}

// DeploymentTimedOut reports that the Progressing condition has not been
// updated within progressDeadlineSeconds.
func DeploymentTimedOut(d *appsv1.Deployment, st *appsv1.DeploymentStatus, now time.Time) bool {
	if !HasProgressDeadline(d) {
		return false
	}
	c := GetCondition(*st, appsv1.DeploymentProgressing)
	if c == nil || c.Reason == NewRSAvailableReason {
		return false
	}
	if c.Reason == TimedOutReason {
		return true
	}
	return c.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Before(now)
}

// CalculateStatus is the Deployment's status from its ReplicaSets, with
// the Available condition; other conditions are carried over.
func CalculateStatus(allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment, now time.Time) appsv1.DeploymentStatus {
	available := reportedAvailable(allRSs)
	unavailable := max(ReplicaCount(allRSs)-available, 0)
	st := appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            ActualReplicaCount(allRSs),
		UpdatedReplicas:     ActualReplicaCount([]*appsv1.ReplicaSet{newRS}),
		ReadyReplicas:       ReadyCount(allRSs),
		AvailableReplicas:   available,
		UnavailableReplicas: unavailable,
		TerminatingReplicas: terminatingCount(allRSs),
		CollisionCount:      d.Status.CollisionCount,
	}
	st.Conditions = append(st.Conditions, d.Status.Conditions...)
	if available >= *d.Spec.Replicas-MaxUnavailable(d) {
		SetCondition(&st, NewCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, MinimumReplicasAvailable, "Deployment has minimum availability.", now))
	} else {
		SetCondition(&st, NewCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, MinimumReplicasUnavailable, "Deployment does not have minimum availability.", now))
	}
	return st
}

// RolloutConditions updates the Progressing condition of st (computed by
// CalculateStatus) as upstream's syncRolloutStatus does: complete,
// progressing (its update time moves with every sign of progress), or
// timed out; and carries a ReplicaSet's ReplicaFailure condition over.
func RolloutConditions(d *appsv1.Deployment, st *appsv1.DeploymentStatus, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, now time.Time) {
	if !HasProgressDeadline(d) {
		RemoveCondition(st, appsv1.DeploymentProgressing)
	}
	cur := GetCondition(d.Status, appsv1.DeploymentProgressing)
	complete := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == NewRSAvailableReason
	if HasProgressDeadline(d) && !complete {
		switch {
		case DeploymentComplete(d, st):
			msg := fmt.Sprintf("Deployment %q has successfully progressed.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has successfully progressed.", newRS.Name)
			}
			SetCondition(st, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, NewRSAvailableReason, msg, now))
		case DeploymentProgressing(d, st):
			msg := fmt.Sprintf("Deployment %q is progressing.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q is progressing.", newRS.Name)
			}
			c := NewCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReplicaSetUpdatedReason, msg, now)
			// Unlike other conditions, Progressing is rewritten with the
			// same reason: its update time is what the deadline runs from.
			if cur != nil {
				if cur.Status == corev1.ConditionTrue {
					c.LastTransitionTime = cur.LastTransitionTime
				}
				RemoveCondition(st, appsv1.DeploymentProgressing)
			}
			SetCondition(st, c)
		case DeploymentTimedOut(d, st, now):
			msg := fmt.Sprintf("Deployment %q has timed out progressing.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has timed out progressing.", newRS.Name)
			}
			SetCondition(st, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, TimedOutReason, msg, now))
		}
	}
	if f := replicaFailure(allRSs, newRS); f != nil {
		SetCondition(st, *f)
	} else {
		RemoveCondition(st, appsv1.DeploymentReplicaFailure)
	}
}

// replicaFailure is the first ReplicaFailure condition of the new
// ReplicaSet, else of an old one, as a Deployment condition.
func replicaFailure(allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) *appsv1.DeploymentCondition {
	conv := func(rs *appsv1.ReplicaSet) *appsv1.DeploymentCondition {
		if rs == nil {
			return nil
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				return &appsv1.DeploymentCondition{
					Type: appsv1.DeploymentReplicaFailure, Status: c.Status, Reason: c.Reason, Message: c.Message,
					LastUpdateTime: c.LastTransitionTime, LastTransitionTime: c.LastTransitionTime,
				}
			}
		}
		return nil
	}
	if c := conv(newRS); c != nil {
		return c
	}
	for _, rs := range allRSs {
		if newRS != nil && rs != nil && rs.UID == newRS.UID {
			continue
		}
		if c := conv(rs); c != nil {
			return c
		}
	}
	return nil
}

// StuckRequeueAfter is when to look at a Deployment again to notice that
// its deadline has passed: never (negative) when there is no deadline or
// the rollout is complete or already timed out.
func StuckRequeueAfter(d *appsv1.Deployment, st *appsv1.DeploymentStatus, now time.Time) time.Duration {
	cur := GetCondition(d.Status, appsv1.DeploymentProgressing)
	if !HasProgressDeadline(d) || cur == nil {
		return -1
	}
	if DeploymentComplete(d, st) || cur.Reason == TimedOutReason {
		return -1
	}
	return cur.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(now)
}

// oldPodsRunning reports whether the old ReplicaSets still have pods that
// have not finished: Recreate starts the new pods only after that.
func oldPodsRunning(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet, podsByRS map[string][]*corev1.Pod) bool {
	if ActualReplicaCount(oldRSs) > 0 {
		return true
	}
	for uid, pods := range podsByRS {
		if newRS != nil && string(newRS.UID) == uid {
			continue
		}
		for _, p := range pods {
			if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
				return true
			}
		}
	}
	return false
}
