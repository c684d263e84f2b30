package gateway

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

const controller = "orca.io/gateway-controller"

func TestIntersect(t *testing.T) {
	for _, tc := range []struct {
		listener string
		route    []string
		want     []string
		ok       bool
	}{
		{"", nil, nil, true},
		{"", []string{"a.example"}, []string{"a.example"}, true},
		{"a.example", nil, []string{"a.example"}, true},
		{"*.example", []string{"a.example", "a.b.example", "example", "other"}, []string{"a.example", "a.b.example"}, true},
		{"a.example", []string{"*.example"}, []string{"a.example"}, true},
		{"*.example", []string{"*.a.example"}, []string{"*.a.example"}, true},
		{"*.a.example", []string{"*.example"}, []string{"*.a.example"}, true},
		{"a.example", []string{"b.example"}, nil, false},
		{"*.example", []string{"Foo.Example."}, []string{"foo.example"}, true},
	} {
		got, ok := intersect(tc.listener, tc.route)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("intersect(%q, %q) = %q %v, want %q %v", tc.listener, tc.route, got, ok, tc.want, tc.ok)
		}
	}
}

func TestModifyPath(t *testing.T) {
	// The specification's table for ReplacePrefixMatch.
	for _, tc := range []struct{ prefix, repl, path, want string }{
		{"/foo", "/xyz", "/foo/bar", "/xyz/bar"},
		{"/foo", "/xyz/", "/foo/bar", "/xyz/bar"},
		{"/foo/", "/xyz", "/foo/bar", "/xyz/bar"},
		{"/foo/", "/xyz/", "/foo/bar", "/xyz/bar"},
		{"/foo", "/", "/foo/bar", "/bar"},
		{"/foo/", "/", "/foo/bar", "/bar"},
		{"/foo", "", "/foo/bar", "/bar"},
		{"/foo", "/xyz", "/foo", "/xyz"},
		{"/foo", "/xyz/", "/foo", "/xyz/"},
		{"/foo", "/", "/foo", "/"},
		{"/foo", "", "/foo", "/"},
	} {
		m, err := compileMatch(gwv1.HTTPRouteMatch{Path: &gwv1.HTTPPathMatch{Type: ptr.To(gwv1.PathMatchPathPrefix), Value: ptr.To(tc.prefix)}})
		if err != nil {
			t.Fatal(err)
		}
		pm := &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr.To(tc.repl)}
		if got := ModifyPath(pm, tc.path, m); got != tc.want {
			t.Errorf("prefix %q to %q on %q: %q, want %q", tc.prefix, tc.repl, tc.path, got, tc.want)
		}
	}
	full := &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr.To("/one")}
	if got := ModifyPath(full, "/a/b", nil); got != "/one" {
		t.Errorf("full path: %q", got)
	}
}

func TestRedirectLocation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		f      gwv1.HTTPRequestRedirectFilter
		scheme string
		port   int32
		want   string
	}{
		{"hostname", gwv1.HTTPRequestRedirectFilter{Hostname: ptr.To(gwv1.PreciseHostname("example.org"))}, "http", 80, "http://example.org/a?q=1"},
		{"to https drops the well-known port", gwv1.HTTPRequestRedirectFilter{Scheme: ptr.To("https")}, "http", 80, "https://web.example/a?q=1"},
		{"a port", gwv1.HTTPRequestRedirectFilter{Port: ptr.To(gwv1.PortNumber(8443)), Scheme: ptr.To("https")}, "http", 80, "https://web.example:8443/a?q=1"},
		{"the listener's port", gwv1.HTTPRequestRedirectFilter{}, "http", 8080, "http://web.example:8080/a?q=1"},
		{"a full path", gwv1.HTTPRequestRedirectFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr.To("/b")}}, "http", 80, "http://web.example/b?q=1"},
	} {
		r := httptest.NewRequest("GET", "http://web.example:80/a?q=1", nil)
		if got := RedirectLocation(&tc.f, r, nil, tc.scheme, tc.port); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if RedirectCode(&gwv1.HTTPRequestRedirectFilter{}) != 302 || RedirectCode(&gwv1.HTTPRequestRedirectFilter{StatusCode: ptr.To(301)}) != 301 {
		t.Error("redirect codes")
	}
}

// fixture is a cluster with Orca's class, a Gateway with an HTTP, an
// HTTPS and an unservable listener, Services web (ready endpoint) and
// api, and a Service in another namespace.
func fixture(t *testing.T) Input {
	t.Helper()
	now := metav1.NewTime(time.Unix(1000, 0))
	certPEM, keyPEM := selfSigned(t, "secure.example")
	svc := func(ns, name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}}}
	}
	slice := func(ns, name, ip string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(3000))}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{ip}}}}
	}
	return Input{
		Controller: controller,
		Classes: []*gwv1.GatewayClass{
			{ObjectMeta: metav1.ObjectMeta{Name: "orca", Generation: 2}, Spec: gwv1.GatewayClassSpec{ControllerName: controller}},
			{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: gwv1.GatewayClassSpec{ControllerName: "example.org/other"}},
		},
		Gateways: []*gwv1.Gateway{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", Generation: 3, CreationTimestamp: now},
			Spec: gwv1.GatewaySpec{GatewayClassName: "orca", Listeners: []gwv1.Listener{
				{Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 80, AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr.To(gwv1.NamespacesFromAll)}}},
				{Name: "https", Protocol: gwv1.HTTPSProtocolType, Port: 443, Hostname: ptr.To(gwv1.Hostname("secure.example")),
					TLS: &gwv1.ListenerTLSConfig{CertificateRefs: []gwv1.SecretObjectReference{{Name: "cert"}}}},
				{Name: "odd", Protocol: gwv1.HTTPProtocolType, Port: 8080},
			}},
		}},
		Namespaces: map[string]map[string]string{"infra": nil, "apps": nil, "other": nil},
		Services: map[types.NamespacedName]*corev1.Service{
			{Namespace: "apps", Name: "web"}: svc("apps", "web"), {Namespace: "apps", Name: "api"}: svc("apps", "api"),
			{Namespace: "other", Name: "db"}: svc("other", "db"), {Namespace: "infra", Name: "web"}: svc("infra", "web"),
		},
		Endpoints: map[types.NamespacedName][]*discoveryv1.EndpointSlice{
			{Namespace: "apps", Name: "web"}: {slice("apps", "web", "10.42.0.5")}, {Namespace: "apps", Name: "api"}: {slice("apps", "api", "10.42.0.6")},
			{Namespace: "infra", Name: "web"}: {slice("infra", "web", "10.42.0.7")},
		},
		Secrets: map[types.NamespacedName]*corev1.Secret{{Namespace: "infra", Name: "cert"}: {
			ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "cert"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM}}},
		Addresses: []string{"192.0.2.10"},
	}
}

func selfSigned(t *testing.T, host string) ([]byte, []byte) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

func httpRoute(ns, name string, hosts []string, parent gwv1.ParentReference, rules ...gwv1.HTTPRouteRule) *gwv1.HTTPRoute {
	r := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1, CreationTimestamp: metav1.NewTime(time.Unix(2000, 0))},
		Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{parent}}, Rules: rules}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gwv1.Hostname(h))
	}
	return r
}

func gwParent(section string) gwv1.ParentReference {
	p := gwv1.ParentReference{Namespace: ptr.To(gwv1.Namespace("infra")), Name: "gw"}
	if section != "" {
		p.SectionName = ptr.To(gwv1.SectionName(section))
	}
	return p
}

func to(svc string, weight int32) gwv1.HTTPBackendRef {
	return gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(svc), Port: ptr.To(gwv1.PortNumber(8080))}, Weight: ptr.To(weight)}}
}

func pathMatch(typ gwv1.PathMatchType, v string) gwv1.HTTPRouteMatch {
	return gwv1.HTTPRouteMatch{Path: &gwv1.HTTPPathMatch{Type: ptr.To(typ), Value: ptr.To(v)}}
}

func cond(conds []metav1.Condition, t string) string {
	for _, c := range conds {
		if c.Type == t {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return "missing"
}

func TestBuildStatus(t *testing.T) {
	in := fixture(t)
	in.Routes = []*gwv1.HTTPRoute{
		httpRoute("apps", "ok", []string{"web.example"}, gwParent("http"), gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{to("web", 1)}}),
		httpRoute("apps", "no-section", nil, gwParent("nope"), gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{to("web", 1)}}),
		// The HTTPS listener takes routes of its own namespace only.
		httpRoute("apps", "not-allowed", nil, gwParent("https"), gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{to("web", 1)}}),
		httpRoute("infra", "wrong-host", []string{"other.example"}, gwParent("https"), gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{to("web", 1)}}),
		httpRoute("apps", "cross", nil, gwParent("http"), gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{func() gwv1.HTTPBackendRef {
			b := to("db", 1)
			b.Namespace = ptr.To(gwv1.Namespace("other"))
			return b
		}()}}),
		httpRoute("apps", "missing", nil, gwParent("http"), gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{to("nope", 1)}}),
		httpRoute("apps", "elsewhere", nil, gwv1.ParentReference{Name: "not-ours"}),
	}
	res := Build(in)

	cs := res.Classes["orca"]
	if got := cond(cs.Conditions, "Accepted"); got != "True/Accepted" || cs.Conditions[0].ObservedGeneration != 2 || len(cs.SupportedFeatures) == 0 {
		t.Errorf("class: %s, generation %d, features %d", got, cs.Conditions[0].ObservedGeneration, len(cs.SupportedFeatures))
	}
	if _, ok := res.Classes["other"]; ok {
		t.Error("another controller's class has a status from Orca")
	}
	gs := res.Gateways[types.NamespacedName{Namespace: "infra", Name: "gw"}]
	if got := cond(gs.Conditions, "Accepted"); got != "True/ListenersNotValid" {
		t.Errorf("gateway Accepted %s", got)
	}
	if got := cond(gs.Conditions, "Programmed"); got != "True/Programmed" || len(gs.Addresses) != 1 || gs.Addresses[0].Value != "192.0.2.10" {
		t.Errorf("gateway Programmed %s, addresses %v", got, gs.Addresses)
	}
	want := map[string][2]string{ // listener: Accepted, Programmed
		"http": {"True/Accepted", "True/Programmed"}, "https": {"True/Accepted", "True/Programmed"}, "odd": {"False/PortUnavailable", "False/Invalid"},
	}
	for _, l := range gs.Listeners {
		if got := [2]string{cond(l.Conditions, "Accepted"), cond(l.Conditions, "Programmed")}; got != want[string(l.Name)] {
			t.Errorf("listener %s: %v, want %v", l.Name, got, want[string(l.Name)])
		}
	}
	if gs.Listeners[0].AttachedRoutes != 3 {
		t.Errorf("http listener: %d routes attached, want ok, cross and missing", gs.Listeners[0].AttachedRoutes)
	}
	routeConds := func(name string) [2]string {
		ps := res.Routes[types.NamespacedName{Namespace: "apps", Name: name}]
		if name == "wrong-host" {
			ps = res.Routes[types.NamespacedName{Namespace: "infra", Name: name}]
		}
		if len(ps) != 1 {
			return [2]string{"parents", string(rune('0' + len(ps)))}
		}
		return [2]string{cond(ps[0].Conditions, "Accepted"), cond(ps[0].Conditions, "ResolvedRefs")}
	}
	for name, want := range map[string][2]string{
		"ok":          {"True/Accepted", "True/ResolvedRefs"},
		"no-section":  {"False/NoMatchingParent", "True/ResolvedRefs"},
		"not-allowed": {"False/NotAllowedByListeners", "True/ResolvedRefs"},
		"wrong-host":  {"False/NoMatchingListenerHostname", "True/ResolvedRefs"},
		"cross":       {"True/Accepted", "False/RefNotPermitted"},
		"missing":     {"True/Accepted", "False/BackendNotFound"},
	} {
		if got := routeConds(name); got != want {
			t.Errorf("route %s: %v, want %v", name, got, want)
		}
	}
	if _, ok := res.Routes[types.NamespacedName{Namespace: "apps", Name: "elsewhere"}]; ok {
		t.Error("a route of another Gateway has a parent status from Orca")
	}

	// A grant lets the cross-namespace backend through.
	in.Grants = []*gwv1.ReferenceGrant{{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "g"}, Spec: gwv1.ReferenceGrantSpec{
		From: []gwv1.ReferenceGrantFrom{{Group: gwv1.GroupName, Kind: "HTTPRoute", Namespace: "apps"}},
		To:   []gwv1.ReferenceGrantTo{{Group: "", Kind: "Service"}},
	}}}
	if got := cond(Build(in).Routes[types.NamespacedName{Namespace: "apps", Name: "cross"}][0].Conditions, "ResolvedRefs"); got != "True/ResolvedRefs" {
		t.Errorf("with a grant: %s", got)
	}
	// The TLS listener serves its certificate.
	if c, ok := res.Table.Certificate("secure.example"); !ok || c.Secret.Name != "cert" {
		t.Error("no certificate for the HTTPS listener's host")
	}

	// Without its Secret the HTTPS listener still counts the route that
	// attaches to it, but is not programmed and serves nothing.
	in = fixture(t)
	in.Secrets = nil
	in.Routes = []*gwv1.HTTPRoute{httpRoute("infra", "tls", nil, gwParent("https"), gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{to("web", 1)}})}
	res = Build(in)
	https := res.Gateways[types.NamespacedName{Namespace: "infra", Name: "gw"}].Listeners[1]
	if got := [3]string{cond(https.Conditions, "ResolvedRefs"), cond(https.Conditions, "Programmed"), cond(res.Routes[types.NamespacedName{Namespace: "infra", Name: "tls"}][0].Conditions, "Accepted")}; got != [3]string{"False/InvalidCertificateRef", "False/Invalid", "True/Accepted"} || https.AttachedRoutes != 1 {
		t.Errorf("HTTPS listener without its Secret: %v, %d routes attached", got, https.AttachedRoutes)
	}
	if _, ok := res.Table.Certificate("secure.example"); ok {
		t.Error("a certificate served for a listener whose Secret is missing")
	}
	if res.Table.Serves(HTTPSPort) {
		t.Error("the route of a listener without its certificate is served")
	}
}

func TestRouting(t *testing.T) {
	in := fixture(t)
	get := func(m gwv1.HTTPMethod) *gwv1.HTTPMethod { return &m }
	in.Routes = []*gwv1.HTTPRoute{
		httpRoute("apps", "site", []string{"web.example"}, gwParent("http"),
			gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{pathMatch(gwv1.PathMatchPathPrefix, "/")}, BackendRefs: []gwv1.HTTPBackendRef{to("web", 1)}},
			gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{pathMatch(gwv1.PathMatchPathPrefix, "/api")}, BackendRefs: []gwv1.HTTPBackendRef{to("api", 1)}},
			gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: ptr.To(gwv1.PathMatchExact), Value: ptr.To("/api/x")}, Method: get("POST")}},
				Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{StatusCode: ptr.To(301)}}}},
			gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: ptr.To(gwv1.PathMatchPathPrefix), Value: ptr.To("/api")},
				Headers: []gwv1.HTTPHeaderMatch{{Name: "version", Value: "two"}}}}, BackendRefs: []gwv1.HTTPBackendRef{to("web", 1)}},
			gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{pathMatch(gwv1.PathMatchPathPrefix, "/empty")}},
		),
		httpRoute("apps", "wild", []string{"*.example"}, gwParent("http"),
			gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{to("api", 1)}}),
	}
	tbl := Build(in).Table
	for _, tc := range []struct {
		method, url string
		header      [2]string
		want        string // backend service, "redirect", "fail" or "none"
	}{
		{"GET", "http://web.example/", [2]string{}, "web"},
		{"GET", "http://web.example/api/v1", [2]string{}, "api"},
		{"GET", "http://web.example/apix", [2]string{}, "web"}, // prefix by path element
		{"GET", "http://web.example/api/v1", [2]string{"Version", "two"}, "web"},
		{"POST", "http://web.example/api/x", [2]string{}, "redirect"},
		{"GET", "http://web.example/api/x", [2]string{}, "api"},
		{"GET", "http://web.example/empty", [2]string{}, "fail"},
		{"GET", "http://a.b.example/", [2]string{}, "api"}, // wildcard, any depth
		{"GET", "http://example/", [2]string{}, "none"},
	} {
		r := httptest.NewRequest(tc.method, tc.url, nil)
		if tc.header[0] != "" {
			r.Header.Set(tc.header[0], tc.header[1])
		}
		rule, _, ok := tbl.Route(80, r.Host, r)
		got := "none"
		switch {
		case !ok:
		case rule.Redirect != nil:
			got = "redirect"
		case rule.Fail:
			got = "fail"
		default:
			got = rule.Pick(0.5).Service.Name
		}
		if got != tc.want {
			t.Errorf("%s %s %v: %s, want %s", tc.method, tc.url, tc.header, got, tc.want)
		}
	}
	if tbl.Serves(8080) {
		t.Error("the listener on port 8080 is served")
	}
}

func TestServiceName(t *testing.T) {
	if got := ServiceName("gw"); got != "orca-gateway-gw" {
		t.Errorf("ServiceName(gw) = %s", got)
	}
	long := strings.Repeat("g", 60)
	a, b := ServiceName(long), ServiceName(long+"x")
	if len(a) != 63 || len(b) != 63 || a == b || !strings.HasPrefix(a, "orca-gateway-ggg") {
		t.Errorf("long names: %s, %s", a, b)
	}
}

// Two Gateways route the same host and path to different Services: on
// the shared addresses the older one's route wins, on each Gateway's own
// address its own route does.
func TestOwnAddresses(t *testing.T) {
	in := fixture(t)
	second := in.Gateways[0].DeepCopy()
	second.Name, second.CreationTimestamp = "gw2", metav1.NewTime(time.Unix(1500, 0))
	in.Gateways = append(in.Gateways, second)
	own := func(gw, clusterIP string, lb ...string) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: ServiceName(gw), Labels: map[string]string{NameLabel: gw}},
			Spec: corev1.ServiceSpec{ClusterIP: clusterIP}}
		for _, ip := range lb {
			s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
		}
		return s
	}
	// gw's load balancer address is the shared one (no pool): only its
	// cluster IP is its own. gw2 has a pool's address too.
	in.Services[types.NamespacedName{Namespace: "infra", Name: ServiceName("gw")}] = own("gw", "10.43.0.10", "192.0.2.10")
	in.Services[types.NamespacedName{Namespace: "infra", Name: ServiceName("gw2")}] = own("gw2", "10.43.0.11", "198.51.100.7")
	parent := func(gw string) gwv1.ParentReference {
		p := gwParent("http")
		p.Name = gwv1.ObjectName(gw)
		return p
	}
	in.Routes = []*gwv1.HTTPRoute{
		httpRoute("apps", "one", nil, parent("gw"), gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{to("web", 1)}}),
		httpRoute("apps", "two", nil, parent("gw2"), gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{to("api", 1)}}),
	}
	res := Build(in)
	addrs := func(gw string) []string {
		var out []string
		for _, a := range res.Gateways[types.NamespacedName{Namespace: "infra", Name: gw}].Addresses {
			out = append(out, a.Value)
		}
		return out
	}
	if got := addrs("gw"); !slices.Equal(got, []string{"10.43.0.10", "192.0.2.10"}) {
		t.Errorf("gw's addresses: %v", got)
	}
	if got := addrs("gw2"); !slices.Equal(got, []string{"198.51.100.7", "10.43.0.11", "192.0.2.10"}) {
		t.Errorf("gw2's addresses: %v", got)
	}
	backend := func(tbl *Table) string {
		r := httptest.NewRequest("GET", "http://any.example/", nil)
		rule, _, ok := tbl.Route(80, r.Host, r)
		if !ok {
			return "none"
		}
		return rule.Backends[0].Service.Name
	}
	if got := backend(res.Table); got != "web" {
		t.Errorf("shared addresses route to %s, want the older Gateway's web", got)
	}
	for addr, want := range map[string]string{"10.43.0.10": "web", "10.43.0.11": "api", "198.51.100.7": "api"} {
		tbl, ok := res.Table.For(addr)
		if !ok {
			t.Errorf("no table for %s", addr)
			continue
		}
		if got := backend(tbl); got != want {
			t.Errorf("%s routes to %s, want %s", addr, got, want)
		}
	}
	if _, ok := res.Table.For("192.0.2.10"); ok {
		t.Error("a shared address has a Gateway's own table")
	}
	// A Service of the name that is not the Gateway's gives it nothing.
	in.Services[types.NamespacedName{Namespace: "infra", Name: ServiceName("gw2")}].Labels = nil
	if got := Build(in).Gateways[types.NamespacedName{Namespace: "infra", Name: "gw2"}].Addresses; len(got) != 1 {
		t.Errorf("gw2 with a stranger's Service: %v", got)
	}
}
