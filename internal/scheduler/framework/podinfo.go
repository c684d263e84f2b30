package framework

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

// PodInfo is a pod with what the scheduler derives from it computed once:
// its requests, host ports and parsed affinity terms. Plugins evaluate
// thousands of nodes per pod, so parsing selectors per node would dominate.
type PodInfo struct {
	Pod *v1.Pod
	// Requests is the pod's effective request; NonZeroCPU/NonZeroMem
	// substitute defaults for missing requests (for scoring only).
	Requests               Resource
	NonZeroCPU, NonZeroMem int64
	// HostPorts are the container ports that claim a host port.
	HostPorts []v1.ContainerPort

	RequiredAffinity      []AffinityTerm
	RequiredAntiAffinity  []AffinityTerm
	PreferredAffinity     []WeightedAffinityTerm
	PreferredAntiAffinity []WeightedAffinityTerm
	// ParseError is set when a selector in the pod's affinity is invalid;
	// the API server validates them, so this is a safeguard.
	ParseError error
}

// AffinityTerm is a parsed PodAffinityTerm.
type AffinityTerm struct {
	// singleNS is the one namespace the term reads, when it reads one.
	singleNS          string
	Namespaces        sets.Set[string]
	NamespaceSelector labels.Selector
	Selector          labels.Selector
	TopologyKey       string
}

// WeightedAffinityTerm is a parsed WeightedPodAffinityTerm.
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

// NewPodInfo derives the scheduler's view of a pod.
func NewPodInfo(pod *v1.Pod) *PodInfo {
	pi := &PodInfo{Pod: pod}
	pi.Requests, pi.NonZeroCPU, pi.NonZeroMem = podRequests(pod)
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				pi.HostPorts = append(pi.HostPorts, p)
			}
		}
	}
	for _, c := range pod.Spec.InitContainers {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				pi.HostPorts = append(pi.HostPorts, p)
			}
		}
	}
	if a := pod.Spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			pi.RequiredAffinity = pi.parseTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution)
			pi.PreferredAffinity = pi.parseWeighted(pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if pa := a.PodAntiAffinity; pa != nil {
			pi.RequiredAntiAffinity = pi.parseTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution)
			pi.PreferredAntiAffinity = pi.parseWeighted(pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	return pi
}

// HasAffinity reports whether the pod has any pod (anti-)affinity term,
// which makes other pods' placement depend on it.
func (pi *PodInfo) HasAffinity() bool {
	return len(pi.RequiredAffinity)+len(pi.RequiredAntiAffinity)+len(pi.PreferredAffinity)+len(pi.PreferredAntiAffinity) > 0
}

// AffectsScoring reports whether the pod has terms that weigh on where
// other pods go (preferred terms, and required affinity, which upstream
// scores too); required anti-affinity alone only filters.
func (pi *PodInfo) AffectsScoring() bool {
	return len(pi.RequiredAffinity)+len(pi.PreferredAffinity)+len(pi.PreferredAntiAffinity) > 0
}

func (pi *PodInfo) parseTerms(terms []v1.PodAffinityTerm) []AffinityTerm {
	out := make([]AffinityTerm, 0, len(terms))
	for i := range terms {
		t, err := newAffinityTerm(pi.Pod, &terms[i])
		if err != nil {
			pi.ParseError = err
			continue
		}
		out = append(out, t)
	}
	return out
}

func (pi *PodInfo) parseWeighted(terms []v1.WeightedPodAffinityTerm) []WeightedAffinityTerm {
	out := make([]WeightedAffinityTerm, 0, len(terms))
	for i := range terms {
		t, err := newAffinityTerm(pi.Pod, &terms[i].PodAffinityTerm)
		if err != nil {
			pi.ParseError = err
			continue
		}
		out = append(out, WeightedAffinityTerm{AffinityTerm: t, Weight: terms[i].Weight})
	}
	return out
}

func newAffinityTerm(pod *v1.Pod, t *v1.PodAffinityTerm) (AffinityTerm, error) {
	sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
	if err != nil {
		return AffinityTerm{}, err
	}
	// matchLabelKeys/mismatchLabelKeys copy the incoming pod's values into
	// the selector, as upstream does at admission.
	if len(t.MatchLabelKeys) > 0 || len(t.MismatchLabelKeys) > 0 {
		var reqs []labels.Requirement
		for _, k := range t.MatchLabelKeys {
			if v, ok := pod.Labels[k]; ok {
				if r, err := labels.NewRequirement(k, "in", []string{v}); err == nil {
					reqs = append(reqs, *r)
				}
			}
		}
		for _, k := range t.MismatchLabelKeys {
			if v, ok := pod.Labels[k]; ok {
				if r, err := labels.NewRequirement(k, "notin", []string{v}); err == nil {
					reqs = append(reqs, *r)
				}
			}
		}
		sel = sel.Add(reqs...)
	}
	term := AffinityTerm{Selector: sel, TopologyKey: t.TopologyKey, Namespaces: sets.New(t.Namespaces...)}
	if t.NamespaceSelector != nil {
		ns, err := metav1.LabelSelectorAsSelector(t.NamespaceSelector)
		if err != nil {
			return AffinityTerm{}, err
		}
		term.NamespaceSelector = ns
	} else if len(t.Namespaces) == 0 {
		term.Namespaces.Insert(pod.Namespace)
	}
	if term.NamespaceSelector == nil && term.Namespaces.Len() == 1 {
		term.singleNS = term.Namespaces.UnsortedList()[0]
	}
	return term, nil
}

// Matches reports whether pod (in a namespace with nsLabels) is selected
// by the term.
func (t *AffinityTerm) Matches(pod *v1.Pod, nsLabels map[string]string) bool {
	if !t.Namespaces.Has(pod.Namespace) {
		if t.NamespaceSelector == nil || !t.NamespaceSelector.Matches(labels.Set(nsLabels)) {
			return false
		}
	}
	return t.Selector.Matches(labels.Set(pod.Labels))
}

// SingleNamespace returns the one namespace the term selects pods from,
// when it names exactly one and has no namespace selector.
func (t *AffinityTerm) SingleNamespace() (string, bool) {
	return t.singleNS, t.singleNS != ""
}

// CountOn counts the pods on node the term selects, through the node's
// memo when the term reads one namespace.
func (t *AffinityTerm) CountOn(node *NodeInfo, key string, nsLabels map[string]map[string]string) int {
	if ns, ok := t.SingleNamespace(); ok {
		return node.CountMatching(key, ns, t.Selector)
	}
	n := 0
	for _, p := range node.Pods {
		if t.Matches(p.Pod, nsLabels[p.Pod.Namespace]) {
			n++
		}
	}
	return n
}

// MemoKey is the key CountOn uses for this term.
func (t *AffinityTerm) MemoKey() string {
	if ns, ok := t.SingleNamespace(); ok {
		return SelectorKey(ns, t.Selector)
	}
	return ""
}
