package endpointslice

import (
	"cmp"
	"slices"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Plan is what one sync writes. Slices in Create have no name yet (the
// server generates it from generateName).
type Plan struct {
	Create, Update, Delete []*discoveryv1.EndpointSlice
}

// Owner is what a set of slices belongs to: a Service (this controller) or
// an Endpoints object (mirroring).
type Owner struct {
	Namespace, Name string
	// Labels are exactly the labels every slice carries.
	Labels map[string]string
	// Annotations, when not nil, are exactly the annotations every slice
	// carries; when nil, annotations are left to the caller.
	Annotations map[string]string
	Ref         metav1.OwnerReference
	// Placeholder keeps one empty slice when there are no endpoints.
	Placeholder bool
}

// ServiceOwner is the owner of a service's slices.
func ServiceOwner(svc *v1.Service) Owner {
	return Owner{Namespace: svc.Namespace, Name: svc.Name, Labels: Labels(svc),
		Ref: *metav1.NewControllerRef(svc, serviceGVK), Placeholder: true}
}

// Empty reports whether the plan writes nothing.
func (p Plan) Empty() bool { return len(p.Create)+len(p.Update)+len(p.Delete) == 0 }

// Reconcile plans the writes that turn existing (the slices managed for
// the owner) into desired (per address type, as
// DesiredEndpoints groups them), as upstream's reconciler does, to keep
// churn low: endpoints stay in the slice they are in, updated in place;
// slices that lose every endpoint are deleted; new endpoints first fill
// slices being written anyway, then the one unchanged slice they fit in
// best, and only then new slices of at most maxPerSlice. A deletion paired
// with a creation becomes an update. An owner without endpoints keeps one
// empty placeholder slice if it asks for one.
func Reconcile(o Owner, existing []*discoveryv1.EndpointSlice, desired map[discoveryv1.AddressType]map[string]*Group, maxPerSlice int) Plan {
	var plan Plan
	byType := map[discoveryv1.AddressType][]*discoveryv1.EndpointSlice{}
	for _, s := range sortedByName(existing) {
		if _, ok := desired[s.AddressType]; ok && ownedBy(s, o) {
			byType[s.AddressType] = append(byType[s.AddressType], s)
		} else {
			plan.Delete = append(plan.Delete, s)
		}
	}
	types := make([]discoveryv1.AddressType, 0, len(desired))
	for t := range desired {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		byPorts := map[string][]*discoveryv1.EndpointSlice{}
		for _, s := range byType[t] {
			k := PortsKey(s.Ports)
			byPorts[k] = append(byPorts[k], s)
		}
		keys := make([]string, 0, len(desired[t]))
		for k := range desired[t] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := reconcilePorts(o, t, byPorts[k], desired[t][k], maxPerSlice)
			plan.Create = append(plan.Create, p.Create...)
			plan.Update = append(plan.Update, p.Update...)
			plan.Delete = append(plan.Delete, p.Delete...)
			delete(byPorts, k)
		}
		// Port sets no pod resolves to any more.
		rest := make([]string, 0, len(byPorts))
		for k := range byPorts {
			rest = append(rest, k)
		}
		slices.Sort(rest)
		for _, k := range rest {
			plan.Delete = append(plan.Delete, byPorts[k]...)
		}
	}

	if o.Placeholder && len(existing) == len(plan.Delete) && len(plan.Create) == 0 {
		t := discoveryv1.AddressTypeIPv4
		if len(types) > 0 {
			t = types[0]
		}
		kept := false
		for i, s := range plan.Delete {
			if isPlaceholder(s, o, t) {
				plan.Delete = slices.Delete(plan.Delete, i, i+1)
				kept = true
				break
			}
		}
		if !kept {
			plan.Create = append(plan.Create, newSlice(o, t, []discoveryv1.EndpointPort{}))
		}
	}

	// Reuse slices about to be deleted for slices about to be created.
	for i := 0; i < len(plan.Delete) && len(plan.Create) > 0; {
		d := plan.Delete[i]
		if d.AddressType != plan.Create[0].AddressType || !ownedBy(d, o) {
			i++
			continue
		}
		c := plan.Create[0]
		reused := d.DeepCopy()
		reused.Labels, reused.OwnerReferences = c.Labels, c.OwnerReferences
		if o.Annotations != nil {
			reused.Annotations = c.Annotations
		}
		reused.Ports, reused.Endpoints = c.Ports, c.Endpoints
		plan.Update = append(plan.Update, reused)
		plan.Create = plan.Create[1:]
		plan.Delete = slices.Delete(plan.Delete, i, i+1)
	}
	return plan
}

func reconcilePorts(o Owner, t discoveryv1.AddressType, existing []*discoveryv1.EndpointSlice, g *Group, maxPerSlice int) Plan {
	var plan Plan
	want := make(map[string]discoveryv1.Endpoint, len(g.Endpoints))
	for k, ep := range g.Endpoints {
		want[k] = ep
	}
	var unchanged []*discoveryv1.EndpointSlice
	// 1. Keep endpoints where they are, updated; drop the unwanted.
	for _, s := range existing {
		changed := false
		kept := make([]discoveryv1.Endpoint, 0, len(s.Endpoints))
		for _, ep := range s.Endpoints {
			k := EndpointKey(ep)
			d, ok := want[k]
			if !ok {
				changed = true
				continue
			}
			if !equality.Semantic.DeepEqual(d, ep) {
				changed = true
			}
			kept = append(kept, d)
			delete(want, k)
		}
		metaChanged := !equality.Semantic.DeepEqual(s.Labels, o.Labels) ||
			(o.Annotations != nil && !equality.Semantic.DeepEqual(s.Annotations, o.Annotations))
		switch {
		case changed && len(kept) == 0:
			plan.Delete = append(plan.Delete, s)
		case changed || metaChanged:
			u := s.DeepCopy()
			u.Endpoints = kept
			u.Labels = copyLabels(o.Labels)
			if o.Annotations != nil {
				u.Annotations = copyLabels(o.Annotations)
			}
			plan.Update = append(plan.Update, u)
		default:
			unchanged = append(unchanged, s)
		}
	}
	remaining := make([]discoveryv1.Endpoint, 0, len(want))
	for _, ep := range want {
		remaining = append(remaining, ep)
	}
	sortEndpoints(remaining)
	take := func(s *discoveryv1.EndpointSlice) {
		n := min(maxPerSlice-len(s.Endpoints), len(remaining))
		if n <= 0 {
			return
		}
		s.Endpoints = append(s.Endpoints, remaining[:n]...)
		remaining = remaining[n:]
	}
	// 2. Fill the slices being written anyway, fullest first.
	if len(remaining) > 0 && len(plan.Update) > 0 {
		fill := slices.Clone(plan.Update)
		slices.SortStableFunc(fill, func(a, b *discoveryv1.EndpointSlice) int { return cmp.Compare(len(b.Endpoints), len(a.Endpoints)) })
		for _, s := range fill {
			take(s)
		}
	}
	// 3. Put what is left into the unchanged slice it fits best, or new
	// slices.
	for len(remaining) > 0 {
		var s *discoveryv1.EndpointSlice
		if len(remaining) < maxPerSlice && len(unchanged) > 0 {
			if i := sliceToFill(unchanged, len(remaining), maxPerSlice); i >= 0 {
				s = unchanged[i].DeepCopy()
				unchanged = slices.Delete(unchanged, i, i+1)
			}
		}
		if s == nil {
			s = newSlice(o, t, g.Ports)
		}
		take(s)
		if s.Name != "" {
			plan.Update = append(plan.Update, s)
		} else {
			plan.Create = append(plan.Create, s)
		}
	}
	return plan
}

// sliceToFill picks the slice that n more endpoints would fill most
// closely without overflowing, or -1.
func sliceToFill(candidates []*discoveryv1.EndpointSlice, n, maxPerSlice int) int {
	best, bestDiff := -1, maxPerSlice
	for i, s := range candidates {
		diff := maxPerSlice - (n + len(s.Endpoints))
		if diff >= 0 && diff < bestDiff {
			best, bestDiff = i, diff
			if diff == 0 {
				break
			}
		}
	}
	return best
}

var serviceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Service"}

func newSlice(o Owner, t discoveryv1.AddressType, ports []discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    slicePrefix(o.Name),
			Namespace:       o.Namespace,
			Labels:          copyLabels(o.Labels),
			OwnerReferences: []metav1.OwnerReference{o.Ref},
		},
		AddressType: t,
		Ports:       ports,
		Endpoints:   []discoveryv1.Endpoint{},
	}
	if o.Annotations != nil {
		s.Annotations = copyLabels(o.Annotations)
	}
	return s
}

// slicePrefix is NAME-, or endpointslice- when NAME- would make names too
// long to be valid.
func slicePrefix(name string) string {
	if len(name)+1 > 253-5 {
		return "endpointslice-"
	}
	return name + "-"
}

func isPlaceholder(s *discoveryv1.EndpointSlice, o Owner, t discoveryv1.AddressType) bool {
	return len(s.Endpoints) == 0 && len(s.Ports) == 0 && s.AddressType == t && ownedBy(s, o) &&
		equality.Semantic.DeepEqual(s.Labels, o.Labels)
}

func ownedBy(s *discoveryv1.EndpointSlice, o Owner) bool {
	for _, r := range s.OwnerReferences {
		if r.UID == o.Ref.UID && r.Kind == o.Ref.Kind && r.APIVersion == o.Ref.APIVersion {
			return true
		}
	}
	return false
}

func sortedByName(in []*discoveryv1.EndpointSlice) []*discoveryv1.EndpointSlice {
	out := slices.Clone(in)
	slices.SortFunc(out, func(a, b *discoveryv1.EndpointSlice) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func copyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
