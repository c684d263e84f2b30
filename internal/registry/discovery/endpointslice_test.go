package discovery

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"
)

type wantErr struct {
	typ    field.ErrorType
	field  string
	detail string
}

func checkErrs(t *testing.T, got field.ErrorList, want []wantErr) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Type != w.typ || g.Field != w.field || (w.detail != "" && g.Detail != w.detail) {
			t.Errorf("error %d: got %s %q (%q), want %s %q (%q)", i, g.Type, g.Field, g.Detail, w.typ, w.field, w.detail)
		}
	}
}

func TestDefaultEndpointSlice(t *testing.T) {
	slice := &discoveryv1.EndpointSlice{Ports: []discoveryv1.EndpointPort{
		{Port: utilptr.To[int32](80)},
		{Name: utilptr.To("dns"), Protocol: utilptr.To(corev1.ProtocolUDP)},
	}}
	defaultEndpointSlice(slice)
	if p := slice.Ports[0]; *p.Name != "" || *p.Protocol != corev1.ProtocolTCP {
		t.Errorf("port 0 = %q/%s", *p.Name, *p.Protocol)
	}
	if p := slice.Ports[1]; *p.Name != "dns" || *p.Protocol != corev1.ProtocolUDP {
		t.Errorf("port 1 overwritten: %q/%s", *p.Name, *p.Protocol)
	}
}

func TestDeprecatedTopologyIsDropped(t *testing.T) {
	topo := map[string]string{"kubernetes.io/hostname": "n1"}
	slice := &discoveryv1.EndpointSlice{Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, DeprecatedTopology: topo}}}
	prepareEndpointSliceForCreate(slice)
	if slice.Endpoints[0].DeprecatedTopology != nil {
		t.Errorf("create kept deprecatedTopology")
	}

	old := &discoveryv1.EndpointSlice{Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, DeprecatedTopology: topo}}}
	same := old.DeepCopy()
	same.Labels = map[string]string{"a": "b"}
	prepareEndpointSliceForUpdate(same, old)
	if same.Endpoints[0].DeprecatedTopology == nil {
		t.Errorf("update without endpoint changes dropped stored topology")
	}
	moved := old.DeepCopy()
	moved.Endpoints[0].Addresses = []string{"10.0.0.2"}
	prepareEndpointSliceForUpdate(moved, old)
	if moved.Endpoints[0].DeprecatedTopology != nil {
		t.Errorf("update with endpoint changes kept topology")
	}
}

func validSlice() *discoveryv1.EndpointSlice {
	slice := &discoveryv1.EndpointSlice{
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses: []string{"10.1.2.3"},
			Hostname:  utilptr.To("pod-0"),
			NodeName:  utilptr.To("node-1"),
			Zone:      utilptr.To("zone-a"),
			Hints:     &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "zone-a"}}},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: utilptr.To("http"), Port: utilptr.To[int32](80), AppProtocol: utilptr.To("kubernetes.io/h2c")}},
	}
	defaultEndpointSlice(slice)
	return slice
}

func TestValidateEndpointSlice(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*discoveryv1.EndpointSlice)
		want   []wantErr
	}{{
		name:   "valid",
		mutate: func(*discoveryv1.EndpointSlice) {},
	}, {
		name:   "missing address type",
		mutate: func(s *discoveryv1.EndpointSlice) { s.AddressType = "" },
		want:   []wantErr{{field.ErrorTypeRequired, "addressType", ""}},
	}, {
		name:   "unknown address type",
		mutate: func(s *discoveryv1.EndpointSlice) { s.AddressType = "IP" },
		want:   []wantErr{{field.ErrorTypeNotSupported, "addressType", ""}},
	}, {
		name:   "endpoint without addresses",
		mutate: func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = nil },
		want:   []wantErr{{field.ErrorTypeRequired, "endpoints[0].addresses", "must contain at least 1 address"}},
	}, {
		name: "bad and wrong-family addresses",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].Addresses = []string{"10.1.2", "fd00::1", "127.0.0.1", "169.254.169.254"}
		},
		want: []wantErr{
			{field.ErrorTypeInvalid, "endpoints[0].addresses[0]", ""},
			{field.ErrorTypeInvalid, "endpoints[0].addresses[1]", "must be an IPv4 address"},
			{field.ErrorTypeInvalid, "endpoints[0].addresses[2]", "may not be in the loopback range (127.0.0.0/8, ::1/128)"},
			{field.ErrorTypeInvalid, "endpoints[0].addresses[3]", "may not be in the link-local range (169.254.0.0/16, fe80::/10)"},
		},
	}, {
		name: "ipv6 slice",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.AddressType = discoveryv1.AddressTypeIPv6
			s.Endpoints[0].Addresses = []string{"fd00::1", "10.0.0.1", "::"}
		},
		want: []wantErr{
			{field.ErrorTypeInvalid, "endpoints[0].addresses[1]", "must be an IPv6 address"},
			{field.ErrorTypeInvalid, "endpoints[0].addresses[2]", "may not be unspecified (::)"},
		},
	}, {
		name: "fqdn slice",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.AddressType = discoveryv1.AddressTypeFQDN
			s.Endpoints[0].Addresses = []string{"db.example.com", "not a host"}
		},
		want: []wantErr{{field.ErrorTypeInvalid, "endpoints[0].addresses[1]", ""}},
	}, {
		name: "too many endpoints",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = make([]discoveryv1.Endpoint, 1001)
		},
		want: []wantErr{{field.ErrorTypeTooMany, "endpoints", ""}},
	}, {
		name: "too many addresses",
		mutate: func(s *discoveryv1.EndpointSlice) {
			for i := 0; i < 100; i++ {
				s.Endpoints[0].Addresses = append(s.Endpoints[0].Addresses, fmt.Sprintf("10.2.0.%d", i+1))
			}
		},
		want: []wantErr{{field.ErrorTypeTooMany, "endpoints[0].addresses", ""}},
	}, {
		name: "hostname and node name",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].Hostname = utilptr.To("Pod_0")
			s.Endpoints[0].NodeName = utilptr.To("Node/1")
		},
		want: []wantErr{
			{field.ErrorTypeInvalid, "endpoints[0].nodeName", ""},
			{field.ErrorTypeInvalid, "endpoints[0].hostname", ""},
		},
	}, {
		name: "hints",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].Hints = &discoveryv1.EndpointHints{
				ForZones: []discoveryv1.ForZone{{Name: "zone-a"}, {Name: "zone-a"}, {Name: "bad zone"}},
				ForNodes: []discoveryv1.ForNode{{Name: "node-1"}, {Name: "node-1"}},
			}
		},
		want: []wantErr{
			{field.ErrorTypeDuplicate, "endpoints[0].hints.forZones[1].name", ""},
			{field.ErrorTypeInvalid, "endpoints[0].hints.forZones[2].name", ""},
			{field.ErrorTypeDuplicate, "endpoints[0].hints.forNodes[1].name", ""},
		},
	}, {
		name: "too many zone hints",
		mutate: func(s *discoveryv1.EndpointSlice) {
			for i := 0; i < 8; i++ {
				s.Endpoints[0].Hints.ForZones = append(s.Endpoints[0].Hints.ForZones, discoveryv1.ForZone{Name: fmt.Sprintf("z%d", i)})
			}
		},
		want: []wantErr{{field.ErrorTypeTooMany, "endpoints[0].hints.forZones", ""}},
	}, {
		name: "ports",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.Ports = append(s.Ports,
				discoveryv1.EndpointPort{Name: utilptr.To("http"), Protocol: utilptr.To(corev1.ProtocolTCP)},
				discoveryv1.EndpointPort{Name: utilptr.To("Bad_Name"), Protocol: utilptr.To[corev1.Protocol]("ICMP")},
				discoveryv1.EndpointPort{Name: utilptr.To("grpc"), AppProtocol: utilptr.To("a/b/c")},
			)
		},
		want: []wantErr{
			{field.ErrorTypeDuplicate, "ports[1].name", ""},
			{field.ErrorTypeInvalid, "ports[2].name", ""},
			{field.ErrorTypeNotSupported, "ports[2].protocol", ""},
			{field.ErrorTypeRequired, "ports[3].protocol", ""},
			{field.ErrorTypeInvalid, "ports[3].appProtocol", ""},
		},
	}, {
		name: "topology labels",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].DeprecatedTopology = map[string]string{"bad key!": "v"}
		},
		want: []wantErr{{field.ErrorTypeInvalid, "endpoints[0].deprecatedTopology", ""}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validSlice()
			tc.mutate(s)
			checkErrs(t, validateEndpointSlice(s), tc.want)
		})
	}
}

func TestValidateEndpointSliceUpdate(t *testing.T) {
	old := validSlice()
	changed := old.DeepCopy()
	changed.Endpoints[0].Addresses = []string{"10.9.9.9"}
	checkErrs(t, validateEndpointSliceUpdate(changed, old), nil)

	retyped := old.DeepCopy()
	retyped.AddressType = discoveryv1.AddressTypeIPv6
	checkErrs(t, validateEndpointSliceUpdate(retyped, old), []wantErr{{field.ErrorTypeInvalid, "addressType", "field is immutable"}})
}
