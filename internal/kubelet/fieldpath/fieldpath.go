// Package fieldpath resolves the downward API's field and resource
// references against a pod, as the kubelet does for environment variables
// and downwardAPI volumes. The functions are pure: the kubelet fills the
// pod copy it passes (status.hostIP(s), status.podIP(s)) and the node's
// allocatable resources.
package fieldpath

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ExtractFieldPath returns the value a fieldRef selects on pod.
func ExtractFieldPath(pod *v1.Pod, fieldPath string) (string, error) {
	if path, key, ok := splitSubscript(fieldPath); ok {
		switch path {
		case "metadata.annotations":
			// Annotation keys may carry upper case; upstream validates them lowered.
			if errs := validation.IsQualifiedName(strings.ToLower(key)); len(errs) != 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", fieldPath, strings.Join(errs, ";"))
			}
			return pod.Annotations[key], nil
		case "metadata.labels":
			if errs := validation.IsQualifiedName(key); len(errs) != 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", fieldPath, strings.Join(errs, ";"))
			}
			return pod.Labels[key], nil
		default:
			return "", fmt.Errorf("fieldPath %q does not support subscript", fieldPath)
		}
	}
	switch fieldPath {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return FormatMap(pod.Labels), nil
	case "metadata.annotations":
		return FormatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		if ips := hostIPs(pod); len(ips) > 0 {
			return ips[0], nil
		}
		return "", nil
	case "status.hostIPs":
		return strings.Join(hostIPs(pod), ","), nil
	case "status.podIP":
		if ips := podIPs(pod); len(ips) > 0 {
			return ips[0], nil
		}
		return "", nil
	case "status.podIPs":
		return strings.Join(podIPs(pod), ","), nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %v", fieldPath)
}

func hostIPs(pod *v1.Pod) []string {
	var ips []string
	for _, ip := range pod.Status.HostIPs {
		ips = append(ips, ip.IP)
	}
	if len(ips) == 0 && pod.Status.HostIP != "" {
		ips = []string{pod.Status.HostIP}
	}
	return ips
}

func podIPs(pod *v1.Pod) []string {
	var ips []string
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	if len(ips) == 0 && pod.Status.PodIP != "" {
		ips = []string{pod.Status.PodIP}
	}
	return ips
}

// splitSubscript splits "metadata.labels['key']" into its path and key.
func splitSubscript(fieldPath string) (path, key string, ok bool) {
	s, found := strings.CutSuffix(fieldPath, "']")
	if !found {
		return fieldPath, "", false
	}
	path, key, found = strings.Cut(s, "['")
	if !found || path == "" {
		return fieldPath, "", false
	}
	return path, key, true
}

// FormatMap renders a label or annotation map as upstream does: one
// key="value" line per entry, keys sorted, values Go-quoted, no trailing
// newline.
func FormatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%v=%q", k, m[k])
	}
	return b.String()
}

// ExtractResourceValue returns the value a resourceFieldRef selects on
// container c, divided by the selector's divisor (default 1) and rounded up.
// Unset (or zero) cpu, memory and ephemeral-storage limits read as the
// node's allocatable amount, since that is what the container may use.
func ExtractResourceValue(fs *v1.ResourceFieldSelector, c *v1.Container, nodeAllocatable v1.ResourceList) (string, error) {
	divisor := fs.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	limits := mergedLimits(c.Resources.Limits, nodeAllocatable)
	requests := c.Resources.Requests

	kind, name, ok := strings.Cut(fs.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported container resource : %v", fs.Resource)
	}
	list := requests
	if kind == "limits" {
		list = limits
	}
	rn := v1.ResourceName(name)
	switch {
	case rn == v1.ResourceCPU:
		q := list[rn]
		return strconv.FormatInt(ceilDiv(float64(q.MilliValue()), float64(divisor.MilliValue())), 10), nil
	case rn == v1.ResourceMemory, rn == v1.ResourceEphemeralStorage, strings.HasPrefix(name, v1.ResourceHugePagesPrefix):
		q := list[rn]
		return strconv.FormatInt(ceilDiv(float64(q.Value()), float64(divisor.Value())), 10), nil
	}
	return "", fmt.Errorf("unsupported container resource : %v", fs.Resource)
}

func ceilDiv(a, b float64) int64 {
	return int64(math.Ceil(a / b))
}

// mergedLimits fills the container's missing cpu, memory and
// ephemeral-storage limits from node allocatable. Hugepages are never
// overcommitted, so they are not filled.
func mergedLimits(limits, allocatable v1.ResourceList) v1.ResourceList {
	out := make(v1.ResourceList, len(limits)+3)
	for k, v := range limits {
		out[k] = v
	}
	for _, rn := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage} {
		if q, ok := out[rn]; ok && !q.IsZero() {
			continue
		}
		if q, ok := allocatable[rn]; ok {
			out[rn] = q.DeepCopy()
		}
	}
	return out
}

// FindContainer returns the named regular or init container of pod, for
// resourceFieldRefs in volumes, which name their container.
func FindContainer(pod *v1.Pod, name string) (*v1.Container, error) {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i], nil
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i], nil
		}
	}
	return nil, fmt.Errorf("container %s not found", name)
}
