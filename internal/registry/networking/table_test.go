package networking

import (
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

var tableNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestServiceCIDRTable(t *testing.T) {
	printerstest.CheckColumns(t, servicecidrTable, []printerstest.Column{printerstest.Col("CIDRs", "string", 0), printerstest.Col("Age", "string", 0)})
	sc := serviceCIDR("10.43.0.0/16", "fd00:43::/108")
	sc.CreationTimestamp = metav1.NewTime(tableNow.Add(-2 * time.Hour))
	printerstest.CheckRow(t, servicecidrTable, sc, tableNow, []any{"10.43.0.0/16,fd00:43::/108", "120m"})
	printerstest.CheckRow(t, servicecidrTable, serviceCIDR(), tableNow, []any{"", "<unknown>"})
}

func TestIPAddressTable(t *testing.T) {
	printerstest.CheckColumns(t, ipaddressTable, []printerstest.Column{printerstest.Col("ParentRef", "string", 0)})
	tests := []struct {
		ref  *networkingv1.ParentReference
		want string
	}{
		{&networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "kubernetes"}, "services/default/kubernetes"},
		{&networkingv1.ParentReference{Group: "MyGroup", Resource: "MyResources", Name: "bar"}, "myresources.mygroup/bar"},
		{nil, "<none>"},
	}
	for _, tc := range tests {
		printerstest.CheckRow(t, ipaddressTable, ipAddress(tc.ref), tableNow, []any{tc.want})
	}
}

func TestIngressTable(t *testing.T) {
	col := printerstest.Col
	printerstest.CheckColumns(t, ingressTable, []printerstest.Column{
		col("Class", "string", 0), col("Hosts", "string", 0), col("Address", "string", 0), col("Ports", "string", 0), col("Age", "string", 0),
	})
	ing := ingress()
	ing.CreationTimestamp = metav1.NewTime(tableNow.Add(-90 * time.Second))
	printerstest.CheckRow(t, ingressTable, ing, tableNow, []any{"<none>", "foo.bar.com", "", "80", "90s"})

	ing.Spec.IngressClassName = ptr.To("nginx")
	ing.Spec.TLS = []networkingv1.IngressTLS{{SecretName: "cert"}}
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{
		{IP: "10.0.0.2", Hostname: "ignored.example.com"}, {Hostname: "lb.example.com"}, {IP: "10.0.0.1"}, {IP: "10.0.0.2"}, {},
	}
	printerstest.CheckRow(t, ingressTable, ing, tableNow, []any{"nginx", "foo.bar.com", "10.0.0.1,10.0.0.2,lb.example.com", "80, 443", "90s"})
}

// Upstream's formatHosts prints up to three hosts and counts what is left
// from the number of rules, whether they name a host or not.
func TestIngressHosts(t *testing.T) {
	rules := func(hosts ...string) []networkingv1.IngressRule {
		var out []networkingv1.IngressRule
		for _, h := range hosts {
			out = append(out, networkingv1.IngressRule{Host: h})
		}
		return out
	}
	tests := []struct {
		rules []networkingv1.IngressRule
		want  string
	}{
		{nil, "*"},
		{rules("", ""), "*"},
		{rules("", "", "", "a.com"), "a.com"},
		{rules("a.com", "b.com", "c.com"), "a.com,b.com,c.com"},
		{rules("a.com", "b.com", "c.com", "d.com"), "a.com,b.com,c.com + 1 more..."},
		{rules("a.com", "", "b.com", "c.com", ""), "a.com,b.com,c.com + 2 more..."},
	}
	for _, tc := range tests {
		if got := ingressHosts(tc.rules); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.rules, got, tc.want)
		}
	}
}

// The ingressclass table places the name itself, as the server's NAME
// column, so that the default class can say so.
func TestIngressClassTable(t *testing.T) {
	want := []printerstest.Column{
		printerstest.Col("Name", "string", 0), printerstest.Col("Controller", "string", 0),
		printerstest.Col("Parameters", "string", 0), printerstest.Col("Age", "string", 0),
	}
	if !ingressclassTable.OwnName || len(ingressclassTable.Columns) != len(want) {
		t.Fatalf("columns = %+v", ingressclassTable.Columns)
	}
	for i, c := range ingressclassTable.Columns {
		if c.Name != want[i].Name || c.Type != want[i].Type || c.Priority != want[i].Priority || c.Description == "" {
			t.Errorf("column %d = %+v, want %+v", i, c, want[i])
		}
		wantFormat := ""
		if i == 0 {
			wantFormat = "name"
		}
		if c.Format != wantFormat {
			t.Errorf("column %s has format %q, want %q", c.Name, c.Format, wantFormat)
		}
	}

	ic := ingressClass("example.com/ingress", nil)
	ic.CreationTimestamp = metav1.NewTime(tableNow.Add(-3 * 24 * time.Hour))
	printerstest.CheckRow(t, ingressclassTable, ic, tableNow, []any{"test123", "example.com/ingress", "<none>", "3d"})

	ic.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
	ic.Spec.Parameters = params(ptr.To("k8s.example.com"), "IngressParameters", "external-lb", ptr.To("Cluster"), nil)
	printerstest.CheckRow(t, ingressclassTable, ic, tableNow, []any{"test123 (default)", "example.com/ingress", "IngressParameters.k8s.example.com/external-lb", "3d"})

	ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] = "True"
	ic.Spec.Parameters = params(nil, "ConfigMap", "settings", ptr.To("Namespace"), ptr.To("ingress"))
	printerstest.CheckRow(t, ingressclassTable, ic, tableNow, []any{"test123", "example.com/ingress", "ConfigMap/settings", "3d"})
}

func TestNetworkPolicyTable(t *testing.T) {
	printerstest.CheckColumns(t, networkpolicyTable, []printerstest.Column{printerstest.Col("Pod-Selector", "string", 0), printerstest.Col("Age", "string", 0)})
	np := networkPolicy()
	np.CreationTimestamp = metav1.NewTime(tableNow.Add(-5 * time.Minute))
	printerstest.CheckRow(t, networkpolicyTable, np, tableNow, []any{"a=b", "5m"})

	np.Spec.PodSelector = metav1.LabelSelector{}
	printerstest.CheckRow(t, networkpolicyTable, np, tableNow, []any{"<none>", "5m"})

	np.Spec.PodSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"db", "cache"}}}
	printerstest.CheckRow(t, networkpolicyTable, np, tableNow, []any{"tier in (cache,db)", "5m"})
}
