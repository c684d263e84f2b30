package gateway

import (
	"cmp"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/orca-project/orca/internal/ingress/route"
)

// The ports Gateway listeners are served on, the nodes' ingress ports.
const (
	HTTPPort  = 80
	HTTPSPort = 443
)

const (
	kindGateway   = "Gateway"
	kindHTTPRoute = "HTTPRoute"
	kindService   = "Service"
	kindSecret    = "Secret"
)

// Input is what Build reads, gathered from informers. Build neither
// modifies nor keeps any of it.
type Input struct {
	// Controller is Orca's controllerName; GatewayClasses naming it are
	// Orca's.
	Controller string
	Classes    []*gwv1.GatewayClass
	Gateways   []*gwv1.Gateway
	Routes     []*gwv1.HTTPRoute
	Grants     []*gwv1.ReferenceGrant
	// Namespaces are every namespace's labels, for allowedRoutes
	// selectors.
	Namespaces map[string]map[string]string
	Services   map[types.NamespacedName]*corev1.Service
	Endpoints  map[types.NamespacedName][]*discoveryv1.EndpointSlice
	Secrets    map[types.NamespacedName]*corev1.Secret
	// Addresses are where the Gateways are served (the orca-ingress
	// Service's); none leaves them not Programmed.
	Addresses []string
}

// Result is what Build works out: the table to serve and the status of
// every object of Orca's. Conditions carry no transition time: the
// writer keeps a condition's time while its status stays.
type Result struct {
	Table    *Table
	Classes  map[string]gwv1.GatewayClassStatus
	Gateways map[types.NamespacedName]gwv1.GatewayStatus
	// Routes are the parents' entries of Orca's Gateways, by route.
	Routes map[types.NamespacedName][]gwv1.RouteParentStatus
}

// SupportedFeatures are the Gateway API features Orca implements, which
// its GatewayClasses list in status.
var SupportedFeatures = []gwv1.FeatureName{
	"Gateway", "HTTPRoute", "ReferenceGrant",
	"HTTPRouteHostRewrite", "HTTPRouteMethodMatching", "HTTPRoutePathRedirect", "HTTPRoutePathRewrite",
	"HTTPRoutePortRedirect", "HTTPRouteQueryParamMatching", "HTTPRouteResponseHeaderModification",
	"HTTPRouteSchemeRedirect", "HTTPRouteBackendRequestHeaderModification",
	"HTTPRoute303RedirectStatusCode", "HTTPRoute307RedirectStatusCode", "HTTPRoute308RedirectStatusCode",
}

// Build works out the table and the status. The same input always gives
// the same result.
func Build(in Input) Result {
	b := &builder{in: &in, res: Result{
		Table:    newTable(),
		Classes:  map[string]gwv1.GatewayClassStatus{},
		Gateways: map[types.NamespacedName]gwv1.GatewayStatus{},
		Routes:   map[types.NamespacedName][]gwv1.RouteParentStatus{},
	}, gateways: map[types.NamespacedName]*gatewayState{}}
	accepted := b.classes()
	gws := slices.Clone(in.Gateways)
	slices.SortFunc(gws, func(a, c *gwv1.Gateway) int { return olderFirst(&a.ObjectMeta, &c.ObjectMeta) })
	for _, gw := range gws {
		if accepted[string(gw.Spec.GatewayClassName)] && gw.DeletionTimestamp == nil {
			b.gateway(gw)
		}
	}
	routes := slices.Clone(in.Routes)
	slices.SortFunc(routes, func(a, c *gwv1.HTTPRoute) int { return olderFirst(&a.ObjectMeta, &c.ObjectMeta) })
	for _, r := range routes {
		b.route(r)
	}
	for _, gs := range b.gatewayOrder {
		b.res.Gateways[gs.key] = gs.status()
	}
	b.res.Table.sort()
	for _, gs := range b.gatewayOrder {
		if gs.own == nil {
			continue
		}
		gs.own.sort()
		for _, a := range gs.ownAddrs {
			if _, taken := b.res.Table.own[a]; !taken {
				b.res.Table.own[a] = gs.own
			}
		}
	}
	return b.res
}

func olderFirst(a, c *metav1.ObjectMeta) int {
	return cmp.Or(a.CreationTimestamp.Compare(c.CreationTimestamp.Time), strings.Compare(a.Namespace, c.Namespace), strings.Compare(a.Name, c.Name))
}

type builder struct {
	in           *Input
	res          Result
	gateways     map[types.NamespacedName]*gatewayState
	gatewayOrder []*gatewayState
}

func condition(t string, ok bool, reason, message string, generation int64) metav1.Condition {
	s := metav1.ConditionFalse
	if ok {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: message, ObservedGeneration: generation}
}

// classes writes the status of Orca's GatewayClasses and returns the
// accepted ones. A class with parameters is not accepted: Orca's takes
// none.
func (b *builder) classes() map[string]bool {
	accepted := map[string]bool{}
	for _, c := range b.in.Classes {
		if string(c.Spec.ControllerName) != b.in.Controller {
			continue
		}
		cond := condition(string(gwv1.GatewayClassConditionStatusAccepted), true, string(gwv1.GatewayClassReasonAccepted), "Handled by Orca's built-in ingress", c.Generation)
		if c.Spec.ParametersRef != nil {
			cond = condition(string(gwv1.GatewayClassConditionStatusAccepted), false, string(gwv1.GatewayClassReasonInvalidParameters), "Orca's GatewayClasses take no parameters", c.Generation)
		} else if c.DeletionTimestamp == nil {
			accepted[c.Name] = true
		}
		st := gwv1.GatewayClassStatus{Conditions: []metav1.Condition{cond}}
		for _, f := range SupportedFeatures {
			st.SupportedFeatures = append(st.SupportedFeatures, gwv1.SupportedFeature{Name: f})
		}
		b.res.Classes[c.Name] = st
	}
	return accepted
}

// grantAllows reports whether a ReferenceGrant in toNS lets objects of
// fromKind in fromNS refer to the toKind toName there.
func (b *builder) grantAllows(fromKind, fromNS, toGroup, toKind, toNS, toName string) bool {
	for _, g := range b.in.Grants {
		if g.Namespace != toNS {
			continue
		}
		from := slices.ContainsFunc(g.Spec.From, func(f gwv1.ReferenceGrantFrom) bool {
			return string(f.Group) == gwv1.GroupName && string(f.Kind) == fromKind && string(f.Namespace) == fromNS
		})
		to := slices.ContainsFunc(g.Spec.To, func(t gwv1.ReferenceGrantTo) bool {
			return string(t.Group) == toGroup && string(t.Kind) == toKind && (t.Name == nil || string(*t.Name) == toName)
		})
		if from && to {
			return true
		}
	}
	return false
}

// gatewayState is a Gateway while Build works on it.
type gatewayState struct {
	gw         *gwv1.Gateway
	key        types.NamespacedName
	listeners  []*listenerState
	conditions []metav1.Condition
	addresses  []gwv1.GatewayStatusAddress
	// ownAddrs are the addresses of the Gateway's own Service, where own
	// (nil without them) routes its routes alone.
	ownAddrs []string
	own      *Table
}

// listenerState is one listener: whether it can serve, and its status.
type listenerState struct {
	l          *gwv1.Listener
	hostname   string
	kinds      []gwv1.RouteGroupKind
	accepted   metav1.Condition
	resolved   metav1.Condition
	conflicted metav1.Condition
	programmed metav1.Condition
	attached   int32
	cert       *route.TLSCert
}

// serves reports whether routes may attach to the listener and be
// served on it.
func (ls *listenerState) serves() bool {
	hasCert := ls.cert != nil
	isHTTPS := ls.l.Protocol == gwv1.HTTPSProtocolType
	return ls.takesRoutes() && hasCert == isHTTPS
}

// takesRoutes says whether HTTPRoutes attach to the listener. A listener
// whose certificate cannot be resolved still counts its routes, as the
// specification asks, though it serves none of them.
func (ls *listenerState) takesRoutes() bool {
	return ls.accepted.Status == metav1.ConditionTrue && ls.conflicted.Status == metav1.ConditionFalse &&
		slices.ContainsFunc(ls.kinds, func(k gwv1.RouteGroupKind) bool { return k.Kind == kindHTTPRoute })
}

func (b *builder) gateway(gw *gwv1.Gateway) {
	key := types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}
	gs := &gatewayState{gw: gw, key: key}
	b.gateways[key] = gs
	b.gatewayOrder = append(b.gatewayOrder, gs)
	gen := gw.Generation
	gs.ownAddrs = OwnAddresses(b.in.Services[types.NamespacedName{Namespace: gw.Namespace, Name: ServiceName(gw.Name)}], gw.Name, b.in.Addresses)
	if len(gs.ownAddrs) > 0 {
		gs.own = newTable()
	}
	for _, a := range append(slices.Clone(gs.ownAddrs), b.in.Addresses...) {
		t := gwv1.IPAddressType
		if _, err := netip.ParseAddr(a); err != nil {
			t = gwv1.HostnameAddressType
		}
		gs.addresses = append(gs.addresses, gwv1.GatewayStatusAddress{Type: &t, Value: a})
	}
	for i := range gw.Spec.Listeners {
		gs.listeners = append(gs.listeners, b.listener(gw, &gw.Spec.Listeners[i]))
	}
	markConflicts(gs.listeners, gen)

	accepted := condition(string(gwv1.GatewayConditionAccepted), true, string(gwv1.GatewayReasonAccepted), "Accepted by Orca's built-in ingress", gen)
	valid := 0
	for _, ls := range gs.listeners {
		if ls.accepted.Status == metav1.ConditionTrue && ls.conflicted.Status == metav1.ConditionFalse {
			valid++
		}
	}
	switch {
	case gw.Spec.Infrastructure != nil && gw.Spec.Infrastructure.ParametersRef != nil:
		accepted = condition(string(gwv1.GatewayConditionAccepted), false, string(gwv1.GatewayReasonInvalidParameters), "Orca's Gateways take no infrastructure parameters", gen)
	case len(gw.Spec.Addresses) > 0 && !gs.hasAddresses(gw.Spec.Addresses):
		accepted = condition(string(gwv1.GatewayConditionAccepted), false, string(gwv1.GatewayReasonUnsupportedAddress), "Orca's Gateways are served on the addresses of their own Service and of the kube-system/orca-ingress Service", gen)
	case valid == 0 && len(gs.listeners) > 0:
		accepted = condition(string(gwv1.GatewayConditionAccepted), false, string(gwv1.GatewayReasonListenersNotValid), "No listener is valid", gen)
	case valid < len(gs.listeners):
		accepted = condition(string(gwv1.GatewayConditionAccepted), true, string(gwv1.GatewayReasonListenersNotValid), "Some listeners are not valid", gen)
	}
	programmed := condition(string(gwv1.GatewayConditionProgrammed), true, string(gwv1.GatewayReasonProgrammed), "Served on every node's ingress", gen)
	switch {
	case accepted.Status == metav1.ConditionFalse:
		programmed = condition(string(gwv1.GatewayConditionProgrammed), false, string(gwv1.GatewayReasonInvalid), accepted.Message, gen)
	case len(gs.addresses) == 0:
		programmed = condition(string(gwv1.GatewayConditionProgrammed), false, string(gwv1.GatewayReasonAddressNotAssigned), "The kube-system/orca-ingress Service has no address yet", gen)
	}
	gs.conditions = []metav1.Condition{accepted, programmed}
	for _, ls := range gs.listeners {
		ls.programmed = condition(string(gwv1.ListenerConditionProgrammed), true, string(gwv1.ListenerReasonProgrammed), "", gen)
		switch {
		case accepted.Status == metav1.ConditionFalse || !ls.serves():
			ls.programmed = condition(string(gwv1.ListenerConditionProgrammed), false, string(gwv1.ListenerReasonInvalid), "The listener is not valid", gen)
		case len(gs.addresses) == 0:
			ls.programmed = condition(string(gwv1.ListenerConditionProgrammed), false, string(gwv1.ListenerReasonPending), "No address yet", gen)
		}
		if accepted.Status == metav1.ConditionTrue && ls.serves() && ls.cert != nil {
			claimCert(b.res.Table, ls)
			if gs.own != nil {
				claimCert(gs.own, ls)
			}
		}
	}
}

func (gs *gatewayState) hasAddresses(want []gwv1.GatewaySpecAddress) bool {
	for _, a := range want {
		if !slices.ContainsFunc(gs.addresses, func(have gwv1.GatewayStatusAddress) bool { return have.Value == a.Value }) {
			return false
		}
	}
	return true
}

// claimCert serves a listener's certificate for its hostname, unless an
// older Gateway's listener serves one there.
func claimCert(t *Table, ls *listenerState) {
	if _, taken := t.certs[ls.hostname]; !taken {
		t.certs[ls.hostname] = ls.cert
	}
}

func (b *builder) listener(gw *gwv1.Gateway, l *gwv1.Listener) *listenerState {
	gen := gw.Generation
	ls := &listenerState{l: l}
	if l.Hostname != nil {
		ls.hostname = normalize(string(*l.Hostname))
	}
	ls.accepted = condition(string(gwv1.ListenerConditionAccepted), true, string(gwv1.ListenerReasonAccepted), "", gen)
	ls.resolved = condition(string(gwv1.ListenerConditionResolvedRefs), true, string(gwv1.ListenerReasonResolvedRefs), "", gen)
	switch l.Protocol {
	case gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType:
		want := int32(HTTPPort)
		if l.Protocol == gwv1.HTTPSProtocolType {
			want = HTTPSPort
		}
		if int32(l.Port) != want {
			ls.accepted = condition(string(gwv1.ListenerConditionAccepted), false, string(gwv1.ListenerReasonPortUnavailable),
				fmt.Sprintf("Orca serves %s listeners on port %d only", l.Protocol, want), gen)
		}
	default:
		ls.accepted = condition(string(gwv1.ListenerConditionAccepted), false, string(gwv1.ListenerReasonUnsupportedProtocol),
			fmt.Sprintf("protocol %s is not supported; HTTP and HTTPS are", l.Protocol), gen)
	}
	// Route kinds: HTTPRoute is the one Orca serves.
	if l.AllowedRoutes != nil && len(l.AllowedRoutes.Kinds) > 0 {
		ls.kinds = []gwv1.RouteGroupKind{}
		for _, k := range l.AllowedRoutes.Kinds {
			if (k.Group == nil || string(*k.Group) == gwv1.GroupName) && k.Kind == kindHTTPRoute && (l.Protocol == gwv1.HTTPProtocolType || l.Protocol == gwv1.HTTPSProtocolType) {
				if !slices.ContainsFunc(ls.kinds, func(x gwv1.RouteGroupKind) bool { return x.Kind == kindHTTPRoute }) {
					ls.kinds = append(ls.kinds, routeKind())
				}
				continue
			}
			ls.resolved = condition(string(gwv1.ListenerConditionResolvedRefs), false, string(gwv1.ListenerReasonInvalidRouteKinds),
				fmt.Sprintf("route kind %s is not supported", k.Kind), gen)
		}
	} else if l.Protocol == gwv1.HTTPProtocolType || l.Protocol == gwv1.HTTPSProtocolType {
		ls.kinds = []gwv1.RouteGroupKind{routeKind()}
	} else {
		ls.kinds = []gwv1.RouteGroupKind{}
	}
	if l.Protocol == gwv1.HTTPSProtocolType {
		b.listenerCert(gw, ls)
	}
	return ls
}

func routeKind() gwv1.RouteGroupKind {
	g := gwv1.Group(gwv1.GroupName)
	return gwv1.RouteGroupKind{Group: &g, Kind: kindHTTPRoute}
}

// listenerCert finds an HTTPS listener's certificate: its first
// certificateRef, a TLS Secret, another namespace's only with a grant.
func (b *builder) listenerCert(gw *gwv1.Gateway, ls *listenerState) {
	gen := gw.Generation
	fail := func(reason gwv1.ListenerConditionReason, format string, args ...any) {
		ls.resolved = condition(string(gwv1.ListenerConditionResolvedRefs), false, string(reason), fmt.Sprintf(format, args...), gen)
	}
	tls := ls.l.TLS
	if tls == nil || len(tls.CertificateRefs) == 0 {
		fail(gwv1.ListenerReasonInvalidCertificateRef, "an HTTPS listener needs a certificateRef")
		return
	}
	if tls.Mode != nil && *tls.Mode != gwv1.TLSModeTerminate {
		ls.accepted = condition(string(gwv1.ListenerConditionAccepted), false, string(gwv1.ListenerReasonUnsupportedValue), "only TLS mode Terminate is supported", gen)
		return
	}
	ref := tls.CertificateRefs[0]
	if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != kindSecret) {
		fail(gwv1.ListenerReasonInvalidCertificateRef, "certificateRef %s is not a Secret", ref.Name)
		return
	}
	ns := gw.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	if ns != gw.Namespace && !b.grantAllows(kindGateway, gw.Namespace, "", kindSecret, ns, string(ref.Name)) {
		fail(gwv1.ListenerReasonRefNotPermitted, "no ReferenceGrant in %s lets the Gateway use Secret %s", ns, ref.Name)
		return
	}
	key := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
	cert, err := route.LoadCert(b.in.Secrets[key], key)
	if err != nil {
		fail(gwv1.ListenerReasonInvalidCertificateRef, "%v", err)
		return
	}
	ls.cert = cert
}

// markConflicts sets each listener's Conflicted condition: listeners of
// one port with different protocols conflict, as do two with the same
// port, protocol and hostname.
func markConflicts(ls []*listenerState, gen int64) {
	for i, a := range ls {
		a.conflicted = condition(string(gwv1.ListenerConditionConflicted), false, string(gwv1.ListenerReasonNoConflicts), "", gen)
		for j, c := range ls {
			if i == j || a.l.Port != c.l.Port {
				continue
			}
			if a.l.Protocol != c.l.Protocol {
				a.conflicted = condition(string(gwv1.ListenerConditionConflicted), true, string(gwv1.ListenerReasonProtocolConflict), "another listener of the port has another protocol", gen)
				break
			}
			if a.hostname == c.hostname {
				a.conflicted = condition(string(gwv1.ListenerConditionConflicted), true, string(gwv1.ListenerReasonHostnameConflict), "another listener of the port has the same hostname", gen)
				break
			}
		}
	}
}

func (gs *gatewayState) status() gwv1.GatewayStatus {
	st := gwv1.GatewayStatus{Addresses: gs.addresses, Conditions: gs.conditions}
	for _, ls := range gs.listeners {
		st.Listeners = append(st.Listeners, gwv1.ListenerStatus{
			Name: ls.l.Name, SupportedKinds: ls.kinds, AttachedRoutes: ls.attached,
			Conditions: []metav1.Condition{ls.accepted, ls.programmed, ls.resolved, ls.conflicted},
		})
	}
	return st
}

// allows reports whether a listener takes routes from namespace.
func (b *builder) allows(gw *gwv1.Gateway, ls *listenerState, namespace string) bool {
	from := gwv1.NamespacesFromSame
	var sel *metav1.LabelSelector
	if ar := ls.l.AllowedRoutes; ar != nil && ar.Namespaces != nil {
		if ar.Namespaces.From != nil {
			from = *ar.Namespaces.From
		}
		sel = ar.Namespaces.Selector
	}
	switch from {
	case gwv1.NamespacesFromAll:
		return true
	case gwv1.NamespacesFromSelector:
		if sel == nil {
			return false
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		return err == nil && s.Matches(labels.Set(b.in.Namespaces[namespace]))
	case gwv1.NamespacesFromNone:
		return false
	}
	return namespace == gw.Namespace
}

// route attaches one HTTPRoute to the listeners of Orca's Gateways its
// parentRefs name, and records each of those parents' status.
func (b *builder) route(r *gwv1.HTTPRoute) {
	key := types.NamespacedName{Namespace: r.Namespace, Name: r.Name}
	gen := r.Generation
	rules, unsupported := b.compileRules(r)
	resolved := b.resolvedRefs(r)
	var parents []gwv1.RouteParentStatus
	for _, p := range r.Spec.ParentRefs {
		if (p.Group != nil && string(*p.Group) != gwv1.GroupName) || (p.Kind != nil && string(*p.Kind) != kindGateway) {
			continue
		}
		ns := r.Namespace
		if p.Namespace != nil {
			ns = string(*p.Namespace)
		}
		gs := b.gateways[types.NamespacedName{Namespace: ns, Name: string(p.Name)}]
		if gs == nil || r.DeletionTimestamp != nil {
			continue
		}
		accepted := b.attach(r, p, gs, rules, unsupported)
		accepted.ObservedGeneration = gen
		res := resolved
		res.ObservedGeneration = gen
		parents = append(parents, gwv1.RouteParentStatus{
			ParentRef: p, ControllerName: gwv1.GatewayController(b.in.Controller),
			Conditions: []metav1.Condition{accepted, res},
		})
	}
	if len(parents) > 0 {
		b.res.Routes[key] = parents
	}
}

// attach attaches the route to the listeners of gs that parentRef p
// names and that take it, and says whether it was accepted.
func (b *builder) attach(r *gwv1.HTTPRoute, p gwv1.ParentReference, gs *gatewayState, rules []compiledRule, unsupported string) metav1.Condition {
	if gs.conditions[0].Status != metav1.ConditionTrue {
		return condition(string(gwv1.RouteConditionAccepted), false, string(gwv1.RouteReasonNotAllowedByListeners), "the Gateway is not accepted", 0)
	}
	var candidates []*listenerState
	for _, ls := range gs.listeners {
		if (p.SectionName == nil || string(*p.SectionName) == string(ls.l.Name)) && (p.Port == nil || *p.Port == ls.l.Port) {
			candidates = append(candidates, ls)
		}
	}
	if len(candidates) == 0 {
		return condition(string(gwv1.RouteConditionAccepted), false, string(gwv1.RouteReasonNoMatchingParent), "no listener of the Gateway matches the parentRef", 0)
	}
	var allowed []*listenerState
	for _, ls := range candidates {
		if ls.takesRoutes() && b.allows(gs.gw, ls, r.Namespace) {
			allowed = append(allowed, ls)
		}
	}
	if len(allowed) == 0 {
		return condition(string(gwv1.RouteConditionAccepted), false, string(gwv1.RouteReasonNotAllowedByListeners), "no listener of the Gateway takes the route", 0)
	}
	if unsupported != "" {
		return condition(string(gwv1.RouteConditionAccepted), false, string(gwv1.RouteReasonUnsupportedValue), unsupported, 0)
	}
	routeHosts := make([]string, len(r.Spec.Hostnames))
	for i, h := range r.Spec.Hostnames {
		routeHosts[i] = string(h)
	}
	attached := false
	for _, ls := range allowed {
		hosts, ok := intersect(ls.hostname, routeHosts)
		if !ok {
			continue
		}
		attached = true
		ls.attached++
		if ls.serves() {
			serve(b.res.Table, r, int32(ls.l.Port), hosts, rules)
			if gs.own != nil {
				serve(gs.own, r, int32(ls.l.Port), hosts, rules)
			}
		}
	}
	if !attached {
		return condition(string(gwv1.RouteConditionAccepted), false, string(gwv1.RouteReasonNoMatchingListenerHostname), "no hostname of the route matches a listener's", 0)
	}
	return condition(string(gwv1.RouteConditionAccepted), true, string(gwv1.RouteReasonAccepted), "", 0)
}

// compiledRule is a rule ready for the table, with its matches.
type compiledRule struct {
	rule    *Rule
	matches []*Match
}

// compileRules turns the route's rules into table rules. unsupported is
// why the route cannot be served as written (a filter Orca lacks, a
// regular expression that does not compile), or empty.
func (b *builder) compileRules(r *gwv1.HTTPRoute) ([]compiledRule, string) {
	var out []compiledRule
	var unsupported string
	note := func(format string, args ...any) {
		if unsupported == "" {
			unsupported = fmt.Sprintf(format, args...)
		}
	}
	key := types.NamespacedName{Namespace: r.Namespace, Name: r.Name}
	for i, rule := range r.Spec.Rules {
		cr := compiledRule{rule: &Rule{Route: key}}
		for _, f := range rule.Filters {
			switch f.Type {
			case gwv1.HTTPRouteFilterRequestHeaderModifier:
				cr.rule.RequestHeaders = append(cr.rule.RequestHeaders, f.RequestHeaderModifier)
			case gwv1.HTTPRouteFilterResponseHeaderModifier:
				cr.rule.ResponseHeaders = append(cr.rule.ResponseHeaders, f.ResponseHeaderModifier)
			case gwv1.HTTPRouteFilterRequestRedirect:
				cr.rule.Redirect = f.RequestRedirect
			case gwv1.HTTPRouteFilterURLRewrite:
				cr.rule.Rewrite = f.URLRewrite
			default:
				note("rule %d: filter %s is not supported", i, f.Type)
				cr.rule.Fail = true
			}
		}
		for _, br := range rule.BackendRefs {
			cr.rule.Backends = append(cr.rule.Backends, b.backend(r, br))
		}
		if cr.rule.Redirect == nil && len(cr.rule.Backends) == 0 {
			cr.rule.Fail = true
		}
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwv1.HTTPRouteMatch{{}}
		}
		for _, m := range matches {
			cm, err := compileMatch(m)
			if err != nil {
				note("rule %d: %v", i, err)
				continue
			}
			cr.matches = append(cr.matches, cm)
		}
		out = append(out, cr)
	}
	return out, unsupported
}

func compileMatch(m gwv1.HTTPRouteMatch) (*Match, error) {
	cm := &Match{PathType: gwv1.PathMatchPathPrefix, Path: ""}
	if m.Path != nil {
		if m.Path.Type != nil {
			cm.PathType = *m.Path.Type
		}
		v := "/"
		if m.Path.Value != nil {
			v = *m.Path.Value
		}
		switch cm.PathType {
		case gwv1.PathMatchExact:
			cm.Path = v
		case gwv1.PathMatchRegularExpression:
			re, err := regexp.Compile("^(?:" + v + ")$")
			if err != nil {
				return nil, fmt.Errorf("path %q: %w", v, err)
			}
			cm.Path, cm.pathRE = v, re
		default:
			cm.PathType = gwv1.PathMatchPathPrefix
			cm.Path = strings.TrimRight(v, "/")
		}
	}
	if m.Method != nil {
		cm.Method = string(*m.Method)
	}
	for _, h := range m.Headers {
		vm := valueMatch{name: string(h.Name), value: h.Value}
		if h.Type != nil && *h.Type == gwv1.HeaderMatchRegularExpression {
			re, err := regexp.Compile("^(?:" + h.Value + ")$")
			if err != nil {
				return nil, fmt.Errorf("header %s: %w", h.Name, err)
			}
			vm.re = re
		}
		cm.Headers = append(cm.Headers, vm)
	}
	for _, q := range m.QueryParams {
		vm := valueMatch{name: string(q.Name), value: q.Value}
		if q.Type != nil && *q.Type == gwv1.QueryParamMatchRegularExpression {
			re, err := regexp.Compile("^(?:" + q.Value + ")$")
			if err != nil {
				return nil, fmt.Errorf("query parameter %s: %w", q.Name, err)
			}
			vm.re = re
		}
		cm.Query = append(cm.Query, vm)
	}
	return cm, nil
}

// backend resolves one backendRef; an invalid one stays in the rule, to
// answer its share of requests with 500.
func (b *builder) backend(r *gwv1.HTTPRoute, br gwv1.HTTPBackendRef) Backend {
	weight := int32(1)
	if br.Weight != nil {
		weight = *br.Weight
	}
	out := Backend{Weight: weight, Invalid: true}
	for _, f := range br.Filters {
		switch f.Type {
		case gwv1.HTTPRouteFilterRequestHeaderModifier:
			out.RequestHeaders = append(out.RequestHeaders, f.RequestHeaderModifier)
		case gwv1.HTTPRouteFilterResponseHeaderModifier:
			out.ResponseHeaders = append(out.ResponseHeaders, f.ResponseHeaderModifier)
		}
	}
	if reason, _ := b.refProblem(r, br.BackendObjectReference); reason != "" {
		return out
	}
	ns := r.Namespace
	if br.Namespace != nil {
		ns = string(*br.Namespace)
	}
	be, problem := route.ServiceBackend(b.in.Services, b.in.Endpoints, ns, string(br.Name), int32(*br.Port))
	out.Backend = be
	out.Invalid = problem != ""
	return out
}

// refProblem is why a backendRef cannot be used: InvalidKind,
// RefNotPermitted or BackendNotFound, with a message; empty when it can.
func (b *builder) refProblem(r *gwv1.HTTPRoute, ref gwv1.BackendObjectReference) (gwv1.RouteConditionReason, string) {
	if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != kindService) {
		kind := kindService
		if ref.Kind != nil {
			kind = string(*ref.Kind)
		}
		return gwv1.RouteReasonInvalidKind, fmt.Sprintf("backendRef %s is a %s, not a Service", ref.Name, kind)
	}
	ns := r.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	if ns != r.Namespace && !b.grantAllows(kindHTTPRoute, r.Namespace, "", kindService, ns, string(ref.Name)) {
		return gwv1.RouteReasonRefNotPermitted, fmt.Sprintf("no ReferenceGrant in %s lets the route use Service %s", ns, ref.Name)
	}
	key := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
	svc := b.in.Services[key]
	if svc == nil {
		return gwv1.RouteReasonBackendNotFound, fmt.Sprintf("Service %s not found", key)
	}
	if ref.Port == nil || !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == int32(*ref.Port) }) {
		return gwv1.RouteReasonBackendNotFound, fmt.Sprintf("Service %s has no such port", key)
	}
	return "", ""
}

// resolvedRefs is the route's ResolvedRefs condition: the first backend
// that cannot be used says why.
func (b *builder) resolvedRefs(r *gwv1.HTTPRoute) metav1.Condition {
	for _, rule := range r.Spec.Rules {
		for _, br := range rule.BackendRefs {
			if reason, msg := b.refProblem(r, br.BackendObjectReference); reason != "" {
				return condition(string(gwv1.RouteConditionResolvedRefs), false, string(reason), msg, 0)
			}
		}
	}
	return condition(string(gwv1.RouteConditionResolvedRefs), true, string(gwv1.RouteReasonResolvedRefs), "", 0)
}

// serve adds the route's rules to t for port and hosts (nil: any host).
func serve(t *Table, r *gwv1.HTTPRoute, port int32, hosts []string, rules []compiledRule) {
	pr := t.ports[port]
	if pr == nil {
		pr = &portRoutes{exact: map[string]*hostRoutes{}}
		t.ports[port] = pr
	}
	if hosts == nil {
		hosts = []string{""}
	}
	routeKey := r.Namespace + "/" + r.Name
	for _, h := range hosts {
		hr := pr.bucket(h)
		for ri, cr := range rules {
			for mi, m := range cr.matches {
				hr.entries = append(hr.entries, &entry{match: m, rule: cr.rule, prec: precedence{
					pathKind: pathKind(m.PathType), pathLen: len(m.Path), method: m.Method != "",
					headers: len(m.Headers), queries: len(m.Query),
					created: r.CreationTimestamp.UnixNano(), route: routeKey, ruleIndex: ri, matchIdx: mi,
				}})
			}
		}
	}
}

func pathKind(t gwv1.PathMatchType) int {
	switch t {
	case gwv1.PathMatchExact:
		return 0
	case gwv1.PathMatchRegularExpression:
		return 1
	}
	return 2
}

// bucket is the routes of host pattern h, made on first use.
func (pr *portRoutes) bucket(h string) *hostRoutes {
	switch {
	case h == "":
		if pr.any == nil {
			pr.any = &hostRoutes{}
		}
		return pr.any
	case isWildcard(h):
		for _, hr := range pr.wild {
			if hr.pattern == h {
				return hr
			}
		}
		hr := &hostRoutes{pattern: h}
		pr.wild = append(pr.wild, hr)
		return hr
	}
	hr := pr.exact[h]
	if hr == nil {
		hr = &hostRoutes{pattern: h}
		pr.exact[h] = hr
	}
	return hr
}
