package daemonset

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	appsv1 "k8s.io/api/apps/v1"
)

// defaultTolerations are what upstream adds to every daemon pod: a daemon
// must keep running on a node that is unhealthy or cordoned, since it is
// often what makes the node healthy again (networking, storage, logging).
func defaultTolerations(hostNetwork bool) []v1.Toleration {
	t := []v1.Toleration{
		{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
		{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
		{Key: v1.TaintNodeDiskPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
		{Key: v1.TaintNodeMemoryPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
		{Key: v1.TaintNodePIDPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
		{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
	}
	if hostNetwork {
		t = append(t, v1.Toleration{Key: v1.TaintNodeNetworkUnavailable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule})
	}
	return t
}

// addDaemonTolerations adds the default tolerations to spec, replacing a
// toleration the template already has for the same key, operator and
// effect (upstream's AddOrUpdateTolerationInPodSpec).
func addDaemonTolerations(spec *v1.PodSpec) {
	for _, want := range defaultTolerations(spec.HostNetwork) {
		found := false
		for i := range spec.Tolerations {
			have := &spec.Tolerations[i]
			if have.Key == want.Key && have.Effect == want.Effect && have.Operator == want.Operator && have.Value == want.Value {
				*have = want
				found = true
				break
			}
		}
		if !found {
			spec.Tolerations = append(spec.Tolerations, want)
		}
	}
}

// newPod is the pod the DaemonSet would run on nodeName, as far as node
// eligibility is concerned.
func newPod(ds *appsv1.DaemonSet, nodeName string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: *ds.Spec.Template.ObjectMeta.DeepCopy(), Spec: *ds.Spec.Template.Spec.DeepCopy()}
	p.Namespace = ds.Namespace
	p.Spec.NodeName = nodeName
	addDaemonTolerations(&p.Spec)
	return p
}

// nodeShouldRunDaemonPod decides, as upstream's NodeShouldRunDaemonPod,
// whether a new daemon pod belongs on node (shouldRun) and whether one
// already there may stay (shouldContinueRunning): the template's nodeName,
// nodeSelector and required node affinity must match, and every NoSchedule
// and NoExecute taint must be tolerated — except that a pod already
// running stays while only NoSchedule taints are untolerated, as the
// scheduler's taint manager would leave it.
func nodeShouldRunDaemonPod(node *v1.Node, ds *appsv1.DaemonSet) (shouldRun, shouldContinueRunning bool) {
	pod := newPod(ds, node.Name)
	if ds.Spec.Template.Spec.NodeName != "" && ds.Spec.Template.Spec.NodeName != node.Name {
		return false, false
	}
	if fits, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !fits {
		return false, false
	}
	_, untolerated := v1helper.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoExecute || t.Effect == v1.TaintEffectNoSchedule
	}, false)
	if !untolerated {
		return true, true
	}
	_, noExecute := v1helper.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoExecute
	}, false)
	return false, !noExecute
}

// replaceNodeNameAffinity pins a pod to nodeName through required node
// affinity on metadata.name, so that the default scheduler places it (and
// accounts for its resources) rather than the controller binding it
// itself. Like upstream's ReplaceDaemonSetPodNodeNameNodeAffinity it
// replaces any required terms: the controller has already checked them
// against the node.
func replaceNodeNameAffinity(affinity *v1.Affinity, nodeName string) *v1.Affinity {
	sel := &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{nodeName}}},
	}}}
	if affinity == nil {
		return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}}
	}
	if affinity.NodeAffinity == nil {
		affinity.NodeAffinity = &v1.NodeAffinity{}
	}
	affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = sel
	return affinity
}

// targetNodeName is the node a daemon pod is for: where it is bound, or
// where its metadata.name affinity pins it while it waits for the
// scheduler.
func targetNodeName(pod *v1.Pod) (string, error) {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName, nil
	}
	a := pod.Spec.Affinity
	if a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				if f.Key == metav1.ObjectNameField && f.Operator == v1.NodeSelectorOpIn && len(f.Values) == 1 {
					return f.Values[0], nil
				}
			}
		}
	}
	return "", fmt.Errorf("no node name found for pod %s/%s", pod.Namespace, pod.Name)
}
