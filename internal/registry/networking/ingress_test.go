package networking

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

const (
	dns1123SubdomainMsg = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	notAnIPMsg          = "must be a DNS name, not an IP address"
)

func serviceBackend(name string, port networkingv1.ServiceBackendPort) networkingv1.IngressBackend {
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: port}}
}

var defaultBackend = serviceBackend("defaultbackend", networkingv1.ServiceBackendPort{Number: 80})

// ingress is upstream's baseIngress of TestValidateIngress: a default
// backend and one rule with one ImplementationSpecific path.
func ingress(tweaks ...func(*networkingv1.Ingress)) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "default"},
		Spec: networkingv1.IngressSpec{
			DefaultBackend: defaultBackend.DeepCopy(),
			Rules:          []networkingv1.IngressRule{httpRule("foo.bar.com", networkingv1.PathTypeImplementationSpecific, "/foo")},
		},
	}
	for _, tweak := range tweaks {
		tweak(ing)
	}
	return ing
}

func httpRule(host string, pathType networkingv1.PathType, path string) networkingv1.IngressRule {
	return networkingv1.IngressRule{
		Host: host,
		IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: ptr.To(pathType), Backend: *defaultBackend.DeepCopy()}},
		}},
	}
}

func firstPath(ing *networkingv1.Ingress) *networkingv1.HTTPIngressPath {
	return &ing.Spec.Rules[0].HTTP.Paths[0]
}

var exampleResource = &corev1.TypedLocalObjectReference{APIGroup: ptr.To("example.com"), Kind: "foo", Name: "bar"}

func TestValidateIngressCreate(t *testing.T) {
	const pathField = "spec.rules[0].http.paths[0].path"
	tests := []struct {
		name  string
		tweak func(*networkingv1.Ingress)
		want  []wantErr
	}{
		{"valid", func(*networkingv1.Ingress) {}, nil},
		{"empty path (implementation specific)", func(ing *networkingv1.Ingress) { firstPath(ing).Path = "" }, nil},
		{"regex path (implementation specific)", func(ing *networkingv1.Ingress) { firstPath(ing).Path = "/([a-z0-9]*)[" }, nil},
		{"no rules", func(ing *networkingv1.Ingress) { ing.Spec.Rules = nil }, nil},
		{"no defaultBackend", func(ing *networkingv1.Ingress) { ing.Spec.DefaultBackend = nil }, nil},
		{"no defaultBackend or rules", func(ing *networkingv1.Ingress) {
			ing.Spec.DefaultBackend, ing.Spec.Rules = nil, []networkingv1.IngressRule{}
		}, []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec", Detail: "either `defaultBackend` or `rules` must be specified"}}},
		{"backend with no service name", func(ing *networkingv1.Ingress) { ing.Spec.DefaultBackend.Service.Name = "" }, []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.defaultBackend.service.name"},
		}},
		{"service name is a DNS label (relaxed validation, GA)", func(ing *networkingv1.Ingress) {
			ing.Spec.DefaultBackend.Service.Name = "1-test-service"
			firstPath(ing).Backend.Service.Name = "1test-service"
		}, nil},
		{"service name not a DNS label", func(ing *networkingv1.Ingress) { ing.Spec.DefaultBackend.Service.Name = "my.service" }, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.defaultBackend.service.name"},
		}},
		{"service port name and number", func(ing *networkingv1.Ingress) { ing.Spec.DefaultBackend.Service.Port.Name = "http" }, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.defaultBackend", Detail: "cannot set both port name & port number"},
		}},
		{"no service port", func(ing *networkingv1.Ingress) { ing.Spec.DefaultBackend.Service.Port.Number = 0 }, []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.defaultBackend", Detail: "port name or number is required"},
		}},
		{"bad service port name and number", func(ing *networkingv1.Ingress) {
			ing.Spec.DefaultBackend.Service.Port = networkingv1.ServiceBackendPort{Name: "Not_A_Port"}
			firstPath(ing).Backend.Service.Port.Number = 65536
		}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.defaultBackend.service.port.name"},
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].http.paths[0].backend.service.port.number", Detail: "must be between 1 and 65535, inclusive"},
		}},
		{"no backend", func(ing *networkingv1.Ingress) { ing.Spec.DefaultBackend.Service = nil }, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.defaultBackend", Detail: "resource or service backend is required"},
		}},
		{"resource backend", func(ing *networkingv1.Ingress) {
			ing.Spec.DefaultBackend = &networkingv1.IngressBackend{Resource: exampleResource.DeepCopy()}
			firstPath(ing).Backend = networkingv1.IngressBackend{Resource: exampleResource.DeepCopy()}
		}, nil},
		{"resource and service backend", func(ing *networkingv1.Ingress) {
			ing.Spec.DefaultBackend.Resource = exampleResource.DeepCopy()
			firstPath(ing).Backend.Resource = exampleResource.DeepCopy()
		}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.defaultBackend", Detail: "cannot set both resource and service backends"},
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].http.paths[0].backend", Detail: "cannot set both resource and service backends"},
		}},
		{"bad resource backend", func(ing *networkingv1.Ingress) {
			ing.Spec.DefaultBackend = &networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{APIGroup: ptr.To(""), Kind: "foo/"}}
		}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.defaultBackend.resource.apiGroup"},
			{Type: field.ErrorTypeInvalid, Field: "spec.defaultBackend.resource.kind", Detail: "may not contain '/'"},
			{Type: field.ErrorTypeRequired, Field: "spec.defaultBackend.resource.name"},
		}},
		{"no path type", func(ing *networkingv1.Ingress) { firstPath(ing).PathType = nil }, []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.rules[0].http.paths[0].pathType", Detail: "pathType must be specified"},
		}},
		{"unknown path type", func(ing *networkingv1.Ingress) { firstPath(ing).PathType = ptr.To(networkingv1.PathType("foo")) }, []wantErr{
			{Type: field.ErrorTypeNotSupported, Field: "spec.rules[0].http.paths[0].pathType", Detail: `supported values: "Exact", "ImplementationSpecific", "Prefix"`},
		}},
		{"empty path (prefix)", func(ing *networkingv1.Ingress) {
			firstPath(ing).Path, firstPath(ing).PathType = "", ptr.To(networkingv1.PathTypePrefix)
		}, []wantErr{{Type: field.ErrorTypeInvalid, Field: pathField, Detail: "must be an absolute path"}}},
		{"no paths", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].HTTP.Paths = []networkingv1.HTTPIngressPath{} }, []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.rules[0].http.paths"},
		}},
		{"rule without http", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].HTTP = nil }, nil},
		{"host with a port", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = "foobar:80" }, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].host", Detail: dns1123SubdomainMsg},
		}},
		{"IP host", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = "127.0.0.1" }, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].host", Detail: notAnIPMsg},
		}},
		{"wildcard host", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = "*.bar.com" }, nil},
		{"wildcard inside host", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = "foo.*.bar.com" }, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].host"},
		}},
		{"bare wildcard host", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = "*" }, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].host"},
		}},
		{"wildcard host, bad rule", func(ing *networkingv1.Ingress) {
			ing.Spec.Rules = []networkingv1.IngressRule{httpRule("*.foo.com", networkingv1.PathTypeExact, "foo")}
		}, []wantErr{{Type: field.ErrorTypeInvalid, Field: pathField, Detail: "must be an absolute path"}}},
		{"class name", func(ing *networkingv1.Ingress) { ing.Spec.IngressClassName = ptr.To("bar") }, nil},
		{"bad class name", func(ing *networkingv1.Ingress) { ing.Spec.IngressClassName = ptr.To("Bar") }, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.ingressClassName", Detail: dns1123SubdomainMsg},
		}},
		{"class annotation", func(ing *networkingv1.Ingress) {
			ing.Annotations = map[string]string{annotationIngressClass: "foo"}
		}, nil},
		{"class annotation and field agree", func(ing *networkingv1.Ingress) {
			ing.Annotations = map[string]string{annotationIngressClass: "foo"}
			ing.Spec.IngressClassName = ptr.To("foo")
		}, nil},
		{"class annotation and field differ", func(ing *networkingv1.Ingress) {
			ing.Annotations = map[string]string{annotationIngressClass: "foo"}
			ing.Spec.IngressClassName = ptr.To("bar")
		}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "annotations.kubernetes.io/ingress.class", Detail: "must match `ingressClassName` when both are specified"},
		}},
		{"TLS", func(ing *networkingv1.Ingress) {
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"*.bar.com", "foo.bar.com"}, SecretName: "valid"}}
		}, nil},
		{"empty TLS (default certificate)", func(ing *networkingv1.Ingress) {
			ing.Spec.TLS = []networkingv1.IngressTLS{{}, {Hosts: []string{}}}
		}, nil},
		{"bad TLS host and secret", func(ing *networkingv1.Ingress) {
			ing.Spec.TLS = []networkingv1.IngressTLS{{}, {Hosts: []string{"ok.com", "foo.*.bar.com"}, SecretName: "invalid name"}}
		}, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.tls[1].hosts[1]"},
			{Type: field.ErrorTypeInvalid, Field: "spec.tls[1].secretName", Detail: dns1123SubdomainMsg},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateIngressCreate(ingress(tc.tweak)), tc.want)
		})
	}
}

// The bad value and the whole message, where upstream's tests pin them.
func TestValidateIngressMessages(t *testing.T) {
	tests := []struct {
		ing  *networkingv1.Ingress
		want string
	}{
		{ingress(func(ing *networkingv1.Ingress) { ing.Spec.DefaultBackend, ing.Spec.Rules = nil, nil }),
			"spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"},
		{ingress(func(ing *networkingv1.Ingress) {
			ing.Annotations = map[string]string{annotationIngressClass: "foo"}
			ing.Spec.IngressClassName = ptr.To("bar")
		}), `annotations.kubernetes.io/ingress.class: Invalid value: "foo": must match ` + "`ingressClassName`" + ` when both are specified`},
		{ingress(func(ing *networkingv1.Ingress) { ing.Spec.DefaultBackend.Service.Port.Name = "http" }),
			`spec.defaultBackend: Invalid value: "": cannot set both port name & port number`},
		{ingress(func(ing *networkingv1.Ingress) { firstPath(ing).PathType = ptr.To(networkingv1.PathType("foo")) }),
			`spec.rules[0].http.paths[0].pathType: Unsupported value: "foo": supported values: "Exact", "ImplementationSpecific", "Prefix"`},
	}
	for _, tc := range tests {
		errs := validateIngressCreate(tc.ing)
		if len(errs) != 1 || errs[0].Error() != tc.want {
			t.Errorf("got %v\nwant %s", errs, tc.want)
		}
	}
}

// Upstream's TestValidateIngressRuleValue: Exact and Prefix paths are
// checked for sequences that normalise away; ImplementationSpecific ones
// only for being absolute.
func TestValidateIngressPaths(t *testing.T) {
	const (
		exact    = networkingv1.PathTypeExact
		prefix   = networkingv1.PathTypePrefix
		specific = networkingv1.PathTypeImplementationSpecific
	)
	tests := []struct {
		pathType networkingv1.PathType
		path     string
		want     []string
	}{
		{specific, "foo", []string{"must be an absolute path"}},
		{specific, "/foo", nil},
		{specific, "/foo//bar/foo", nil},
		{specific, "/foo/./", nil},
		{prefix, "foo", []string{"must be an absolute path"}},
		{prefix, "/foo/bar/foo", nil},
		{prefix, "/foo//bar/foo", []string{"must not contain '//'"}},
		{exact, "/foo//bar/foo", []string{"must not contain '//'"}},
		{prefix, "/foo/./foo", []string{"must not contain '/./'"}},
		{exact, "/foo/../foo", []string{"must not contain '/../'"}},
		{prefix, "/foo/%2f/foo", []string{"must not contain '%2f'"}},
		{exact, "/foo/%2F/foo", []string{"must not contain '%2F'"}},
		{exact, "/foo/..", []string{"cannot end with '/..'"}},
		{prefix, "/foo/.", []string{"cannot end with '/.'"}},
		{prefix, "/foo#bar", nil},
		{exact, "foo//", []string{"must be an absolute path", "must not contain '//'"}},
	}
	for _, tc := range tests {
		ing := ingress(func(ing *networkingv1.Ingress) {
			firstPath(ing).Path, firstPath(ing).PathType = tc.path, ptr.To(tc.pathType)
		})
		var want []wantErr
		for _, d := range tc.want {
			want = append(want, wantErr{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].http.paths[0].path", Detail: d})
		}
		t.Run(string(tc.pathType)+" "+tc.path, func(t *testing.T) { checkErrs(t, validateIngressCreate(ing), want) })
	}
}

func TestValidateIngressUpdate(t *testing.T) {
	withTLS := func(secret string) func(*networkingv1.Ingress) {
		return func(ing *networkingv1.Ingress) { ing.Spec.TLS = []networkingv1.IngressTLS{{SecretName: secret}} }
	}
	withWildcardRule := func(path string) func(*networkingv1.Ingress) {
		return func(ing *networkingv1.Ingress) {
			ing.Spec.Rules = []networkingv1.IngressRule{httpRule("*.foo.com", networkingv1.PathTypeExact, path)}
		}
	}
	withWildcardRuleService := func(name string) func(*networkingv1.Ingress) {
		return func(ing *networkingv1.Ingress) {
			withWildcardRule("/foo")(ing)
			firstPath(ing).Backend.Service.Name = name
		}
	}
	tests := []struct {
		name     string
		old, new *networkingv1.Ingress
		want     []wantErr
	}{
		{"class annotation and field may differ", ingress(), ingress(func(ing *networkingv1.Ingress) {
			ing.Annotations = map[string]string{annotationIngressClass: "foo"}
			ing.Spec.IngressClassName = ptr.To("bar")
		}), nil},
		{"valid secret to invalid", ingress(withTLS("valid")), ingress(withTLS("invalid name")), []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.tls[0].secretName", Detail: dns1123SubdomainMsg},
		}},
		{"invalid secret to invalid", ingress(withTLS("invalid name 1")), ingress(withTLS("invalid name 2")), nil},
		{"valid wildcard rule to invalid", ingress(withWildcardRule("/foo")), ingress(withWildcardRule("foo")), []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.rules[0].http.paths[0].path", Detail: "must be an absolute path"},
		}},
		{"invalid wildcard rule to invalid", ingress(withWildcardRule("foo")), ingress(withWildcardRule("bar")), nil},
		// Upstream checks the stored rules with zero options, under which
		// service names are DNS-1035 labels: one that is only a DNS label
		// counts as an invalid rule already there.
		{"wildcard rule with a relaxed service name", ingress(withWildcardRuleService("1-svc")), ingress(withWildcardRule("bar")), nil},
		{"wildcard rule still validated for other rules", ingress(withWildcardRule("foo")), ingress(func(ing *networkingv1.Ingress) {
			withWildcardRule("bar")(ing)
			ing.Spec.Rules = append(ing.Spec.Rules, httpRule("foo.com", networkingv1.PathTypeExact, "bar"))
		}), []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.rules[1].http.paths[0].path", Detail: "must be an absolute path"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateIngressUpdate(tc.new, tc.old), tc.want)
		})
	}
}

func TestValidateIngressStatusUpdate(t *testing.T) {
	// With no rules or backend: a status write leaves the spec alone,
	// so the spec is not checked.
	withLB := func(ips ...networkingv1.IngressLoadBalancerIngress) *networkingv1.Ingress {
		ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "default"}}
		ing.Status.LoadBalancer.Ingress = ips
		return ing
	}
	old := withLB(networkingv1.IngressLoadBalancerIngress{IP: "127.0.0.1", Hostname: "foo.bar.com"})
	legacy := withLB(networkingv1.IngressLoadBalancerIngress{IP: "001.002.003.004", Hostname: "foo.com"})
	tests := []struct {
		name     string
		old, new *networkingv1.Ingress
		want     []wantErr
	}{
		{"valid", old, withLB(networkingv1.IngressLoadBalancerIngress{IP: "127.0.0.2", Hostname: "foo.com"}), nil},
		{"IPv6 and ports", old, withLB(networkingv1.IngressLoadBalancerIngress{IP: "2001:db8::1", Ports: []networkingv1.IngressPortStatus{{Port: 80, Protocol: corev1.ProtocolTCP}}}), nil},
		{"legacy IP kept", legacy, legacy, nil},
		{"invalid IP", old, withLB(networkingv1.IngressLoadBalancerIngress{IP: "abcd", Hostname: "foo.com"}), []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "status.loadBalancer.ingress[0].ip", Detail: "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"},
		}},
		{"legacy IP added", old, legacy, []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "status.loadBalancer.ingress[0].ip", Detail: "must not have leading 0s"},
		}},
		{"IP hostname", old, withLB(networkingv1.IngressLoadBalancerIngress{IP: "127.0.0.1", Hostname: "127.0.0.1"}), []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "status.loadBalancer.ingress[0].hostname", Detail: notAnIPMsg},
		}},
		{"bad hostname", old, withLB(networkingv1.IngressLoadBalancerIngress{Hostname: "Foo_Bar"}), []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "status.loadBalancer.ingress[0].hostname", Detail: dns1123SubdomainMsg},
		}},
		{"no load balancer", old, withLB(), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateIngressStatusUpdate(tc.new, tc.old), tc.want)
		})
	}
}
