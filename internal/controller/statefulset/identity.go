package statefulset

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Labels a StatefulSet puts on its pods, as upstream.
const (
	PodNameLabel  = appsv1.StatefulSetPodNameLabel // statefulset.kubernetes.io/pod-name
	PodIndexLabel = appsv1.PodIndexLabel           // apps.kubernetes.io/pod-index
	RevisionLabel = appsv1.ControllerRevisionHashLabelKey
)

var controllerKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

// statefulPodRegex is upstream's: the parent's name, a dash and the
// ordinal, the longest parent name winning.
var statefulPodRegex = regexp.MustCompile("(.*)-([0-9]+)$")

// ParentAndOrdinal splits a pod name into its StatefulSet's name and
// ordinal; the ordinal is -1 when the name carries none.
func ParentAndOrdinal(name string) (string, int) {
	m := statefulPodRegex.FindStringSubmatch(name)
	if len(m) != 3 {
		return "", -1
	}
	i, err := strconv.ParseInt(m[2], 10, 32)
	if err != nil {
		return m[1], -1
	}
	return m[1], int(i)
}

func ordinalOf(p *v1.Pod) int {
	_, o := ParentAndOrdinal(p.Name)
	return o
}

// PodName is NAME-ORDINAL.
func PodName(set *appsv1.StatefulSet, ordinal int) string {
	return fmt.Sprintf("%s-%d", set.Name, ordinal)
}

// ClaimName is TEMPLATE-SET-ORDINAL, the PVC an ordinal keeps for life.
func ClaimName(set *appsv1.StatefulSet, template string, ordinal int) string {
	return fmt.Sprintf("%s-%s-%d", template, set.Name, ordinal)
}

func startOrdinal(set *appsv1.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

func replicaCount(set *appsv1.StatefulSet) int {
	if set.Spec.Replicas == nil {
		return 1
	}
	return int(*set.Spec.Replicas)
}

// inRange reports whether ordinal belongs to the set's current replicas.
func inRange(set *appsv1.StatefulSet, ordinal int) bool {
	s := startOrdinal(set)
	return ordinal >= s && ordinal < s+replicaCount(set)
}

// isMemberOf is a pod whose name makes it one of set's ordinals.
func isMemberOf(set *appsv1.StatefulSet, p *v1.Pod) bool {
	parent, o := ParentAndOrdinal(p.Name)
	return parent == set.Name && o >= 0
}

// newPod builds the pod for ordinal from set's template: a fixed name,
// hostname and subdomain for its DNS identity, the identity labels, and
// its claims in place of the template's volumes of the same names.
func newPod(set *appsv1.StatefulSet, ordinal int) *v1.Pod {
	ref := controllerutil.OwnerRef(set, controllerKind)
	pod := controllerutil.PodFromTemplate(&set.Spec.Template, set.Namespace, set.Name, &ref)
	pod.GenerateName = ""
	pod.Name = PodName(set, ordinal)
	pod.Spec.Hostname = pod.Name
	pod.Spec.Subdomain = set.Spec.ServiceName
	setIdentityLabels(set, pod, ordinal)
	setStorage(set, pod, ordinal)
	return pod
}

// newVersionedPod picks the revision a new pod gets: ordinals below the
// partition keep the current revision, the rest get the update revision.
// Upstream's operator precedence is kept: with a RollingUpdate strategy
// and no rollingUpdate struct, ordinals below currentReplicas stay current.
func newVersionedPod(currentSet, updateSet *appsv1.StatefulSet, currentRev, updateRev string, ordinal int) *v1.Pod {
	ru := currentSet.Spec.UpdateStrategy.RollingUpdate
	if currentSet.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
		(ru == nil && ordinal < int(currentSet.Status.CurrentReplicas)) ||
		(ru != nil && ordinal < int(partition(currentSet))) {
		p := newPod(currentSet, ordinal)
		p.Labels[RevisionLabel] = currentRev
		return p
	}
	p := newPod(updateSet, ordinal)
	p.Labels[RevisionLabel] = updateRev
	return p
}

func partition(set *appsv1.StatefulSet) int32 {
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		return *ru.Partition
	}
	return 0
}

func setIdentityLabels(set *appsv1.StatefulSet, pod *v1.Pod, ordinal int) {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[PodNameLabel] = PodName(set, ordinal)
	pod.Labels[PodIndexLabel] = strconv.Itoa(ordinal)
}

// identityMatches is a pod whose name, namespace and identity labels are
// those of its ordinal in set.
func identityMatches(set *appsv1.StatefulSet, p *v1.Pod) bool {
	parent, o := ParentAndOrdinal(p.Name)
	return o >= 0 && parent == set.Name && p.Namespace == set.Namespace &&
		p.Labels[PodNameLabel] == p.Name && p.Labels[PodIndexLabel] == strconv.Itoa(o)
}

// claimsFor are the PVCs ordinal needs, in template order, labelled with
// the set's selector as upstream does.
func claimsFor(set *appsv1.StatefulSet, ordinal int) []v1.PersistentVolumeClaim {
	out := make([]v1.PersistentVolumeClaim, 0, len(set.Spec.VolumeClaimTemplates))
	for _, t := range set.Spec.VolumeClaimTemplates {
		c := *t.DeepCopy()
		c.ObjectMeta = metav1.ObjectMeta{
			Name:        ClaimName(set, t.Name, ordinal),
			Namespace:   set.Namespace,
			Labels:      map[string]string{},
			Annotations: t.Annotations,
		}
		for k, v := range t.Labels {
			c.Labels[k] = v
		}
		if set.Spec.Selector != nil {
			for k, v := range set.Spec.Selector.MatchLabels {
				c.Labels[k] = v
			}
		}
		c.Status = v1.PersistentVolumeClaimStatus{}
		out = append(out, c)
	}
	return out
}

// setStorage points the pod's volumes named after claim templates at the
// ordinal's claims, adding those the template lacks.
func setStorage(set *appsv1.StatefulSet, pod *v1.Pod, ordinal int) {
	claims := map[string]string{}
	var names []string
	for _, t := range set.Spec.VolumeClaimTemplates {
		claims[t.Name] = ClaimName(set, t.Name, ordinal)
		names = append(names, t.Name)
	}
	if len(claims) == 0 {
		return
	}
	sort.Strings(names)
	vols := make([]v1.Volume, 0, len(pod.Spec.Volumes)+len(names))
	for _, n := range names {
		vols = append(vols, v1.Volume{Name: n, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claims[n]},
		}})
	}
	for _, v := range pod.Spec.Volumes {
		if _, ok := claims[v.Name]; !ok {
			vols = append(vols, v)
		}
	}
	pod.Spec.Volumes = vols
}

// storageMatches is a pod that mounts each of its ordinal's claims under
// the template's name.
func storageMatches(set *appsv1.StatefulSet, p *v1.Pod) bool {
	o := ordinalOf(p)
	if o < 0 {
		return false
	}
	vols := map[string]v1.Volume{}
	for _, v := range p.Spec.Volumes {
		vols[v.Name] = v
	}
	for _, t := range set.Spec.VolumeClaimTemplates {
		v, ok := vols[t.Name]
		if !ok || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != ClaimName(set, t.Name, o) {
			return false
		}
	}
	return true
}

func podRevision(p *v1.Pod) string { return p.Labels[RevisionLabel] }
