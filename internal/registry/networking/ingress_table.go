package networking

import (
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// ingressTable prints ingresses as upstream's `kubectl get` does.
var ingressTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Class", Type: "string", Description: "The name of the IngressClass resource that should be used for additional configuration"},
		{Name: "Hosts", Type: "string", Description: "Hosts that incoming requests are matched against before the ingress rule"},
		{Name: "Address", Type: "string", Description: "Address is a list containing ingress points for the load-balancer"},
		{Name: "Ports", Type: "string", Description: "Ports of TLS configurations that open"},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(ing *networkingv1.Ingress, now time.Time) []any {
		class := "<none>"
		if ing.Spec.IngressClassName != nil {
			class = *ing.Spec.IngressClassName
		}
		ports := "80"
		if len(ing.Spec.TLS) != 0 {
			ports = "80, 443"
		}
		return []any{class, ingressHosts(ing.Spec.Rules), ingressAddress(ing.Status.LoadBalancer), ports,
			printers.TranslateTimestampSince(ing.CreationTimestamp, now)}
	}),
}

// ingressHosts is upstream's formatHosts: the first three hosts the rules
// name, "*" when they name none. Past three hosts, upstream counts every
// rule it did not print, host or not, from len(rules)-3.
func ingressHosts(rules []networkingv1.IngressRule) string {
	const max = 3
	var hosts []string
	more := false
	for _, rule := range rules {
		if len(hosts) == max {
			more = true
			break
		}
		if rule.Host != "" {
			hosts = append(hosts, rule.Host)
		}
	}
	if len(hosts) == 0 {
		return "*"
	}
	return printers.ListWithMore(hosts, more, len(rules), max)
}

// ingressAddress is upstream's ingressLoadBalancerStatusStringer in its
// wide form (the server always prints wide): each load balancer's IP, or
// its hostname, once and sorted.
func ingressAddress(s networkingv1.IngressLoadBalancerStatus) string {
	addrs := sets.New[string]()
	for _, lb := range s.Ingress {
		if lb.IP != "" {
			addrs.Insert(lb.IP)
		} else if lb.Hostname != "" {
			addrs.Insert(lb.Hostname)
		}
	}
	return strings.Join(sets.List(addrs), ",")
}
