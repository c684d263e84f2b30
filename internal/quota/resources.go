// Package quota measures what objects cost against a ResourceQuota, for
// both the ResourceQuota admission plugin (charging a request before it
// is stored) and the quota controller (recounting a namespace). It
// follows upstream's evaluators: compute resources of pods, services and
// their node ports and load balancers, claims and their storage, and an
// object count for any resource.
package quota

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Add returns a + b.
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range a {
		q := v.DeepCopy()
		if o, ok := b[k]; ok {
			q.Add(o)
		}
		out[k] = q
	}
	for k, v := range b {
		if _, ok := out[k]; !ok {
			out[k] = v.DeepCopy()
		}
	}
	return out
}

// SubtractWithNonNegativeResult returns a - b, never below zero.
func SubtractWithNonNegativeResult(a, b corev1.ResourceList) corev1.ResourceList {
	zero := resource.MustParse("0")
	out := corev1.ResourceList{}
	for k, v := range a {
		q := v.DeepCopy()
		if o, ok := b[k]; ok {
			q.Sub(o)
		}
		if q.Cmp(zero) > 0 {
			out[k] = q
		} else {
			out[k] = zero.DeepCopy()
		}
	}
	for k := range b {
		if _, ok := out[k]; !ok {
			out[k] = zero.DeepCopy()
		}
	}
	return out
}

// Mask keeps only the named resources of a list.
func Mask(l corev1.ResourceList, names []corev1.ResourceName) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, n := range names {
		if v, ok := l[n]; ok {
			out[n] = v.DeepCopy()
		}
	}
	return out
}

// Names lists a ResourceList's resource names, sorted.
func Names(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// LessThanOrEqual reports whether a <= b for every resource both name,
// and which resources of a exceed b.
func LessThanOrEqual(a, b corev1.ResourceList) (bool, []corev1.ResourceName) {
	var exceeded []corev1.ResourceName
	for _, k := range Names(a) {
		if lim, ok := b[k]; ok {
			if q := a[k]; q.Cmp(lim) > 0 {
				exceeded = append(exceeded, k)
			}
		}
	}
	return len(exceeded) == 0, exceeded
}

// Equals reports whether two lists hold the same quantities.
func Equals(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		o, ok := b[k]
		if !ok || v.Cmp(o) != 0 {
			return false
		}
	}
	return true
}

// RemoveZeros drops zero quantities.
func RemoveZeros(l corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range l {
		if !v.IsZero() {
			out[k] = v
		}
	}
	return out
}

// IsNegative lists the resources with a negative quantity.
func IsNegative(l corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, k := range Names(l) {
		if q := l[k]; q.Sign() < 0 {
			out = append(out, k)
		}
	}
	return out
}

// PrettyPrint formats a list as upstream's messages do: name=quantity
// pairs sorted by name, joined by commas.
func PrettyPrint(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, k := range Names(l) {
		q := l[k]
		parts = append(parts, string(k)+"="+q.String())
	}
	return strings.Join(parts, ",")
}

// PrettyPrintNames joins resource names with commas.
func PrettyPrintNames(names []corev1.ResourceName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

func intersect(names []corev1.ResourceName, set map[corev1.ResourceName]bool) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, n := range names {
		if set[n] {
			out = append(out, n)
		}
	}
	return out
}

func one() resource.Quantity { return *resource.NewQuantity(1, resource.DecimalSI) }
