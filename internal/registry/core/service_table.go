package core

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// serviceTable prints services as upstream's `kubectl get` does.
var serviceTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Type", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["type"]},
		{Name: "Cluster-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]},
		{Name: "External-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]},
		{Name: "Port(s)", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["ports"]},
		printers.AgeColumn(),
		{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ServiceSpec{}.SwaggerDoc()["selector"]},
	},
	Row: registry.TypedRow(serviceRow),
}

// serviceFields lists the fields a field selector over services may name.
var serviceFields = registry.TypedFields(func(svc *corev1.Service) fields.Set {
	return fields.Set{
		"spec.clusterIP": svc.Spec.ClusterIP,
		"spec.type":      string(svc.Spec.Type),
	}
})

func serviceRow(svc *corev1.Service, now time.Time) []any {
	// Upstream reads the internal type's clusterIPs[0], which conversion
	// fills from v1's singular clusterIP first.
	clusterIP := svc.Spec.ClusterIP
	if clusterIP == "" && len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	}
	if clusterIP == "" {
		clusterIP = "<none>"
	}
	ports := makePortString(svc.Spec.Ports)
	if ports == "" {
		ports = "<none>"
	}
	return []any{
		string(svc.Spec.Type),
		clusterIP,
		serviceExternalIP(svc),
		ports,
		printers.TranslateTimestampSince(svc.CreationTimestamp, now),
		labels.FormatLabels(svc.Spec.Selector),
	}
}

// serviceExternalIP is upstream's getServiceExternalIP in its wide form:
// the server always prints wide, so load balancer addresses are never
// clipped to 16 characters.
func serviceExternalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		lbIPs := loadBalancerIngress(svc.Status.LoadBalancer)
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(append(lbIPs, svc.Spec.ExternalIPs...), ",")
		}
		if len(lbIPs) > 0 {
			return strings.Join(lbIPs, ",")
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// loadBalancerIngress returns the distinct ingress points, IP preferred over
// hostname, sorted.
func loadBalancerIngress(s corev1.LoadBalancerStatus) []string {
	set := map[string]bool{}
	for _, ing := range s.Ingress {
		if ing.IP != "" {
			set[ing.IP] = true
		} else if ing.Hostname != "" {
			set[ing.Hostname] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func makePortString(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		} else {
			pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}
