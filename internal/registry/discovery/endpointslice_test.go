package discovery

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry/registrytest"
)

// wantErr and checkErrs are the shared validation-test helpers.
type wantErr = registrytest.WantErr

var checkErrs = registrytest.CheckErrs

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
		want:   []wantErr{{Type: field.ErrorTypeRequired, Field: "addressType", Detail: ""}},
	}, {
		name:   "unknown address type",
		mutate: func(s *discoveryv1.EndpointSlice) { s.AddressType = "IP" },
		want:   []wantErr{{Type: field.ErrorTypeNotSupported, Field: "addressType", Detail: ""}},
	}, {
		name:   "endpoint without addresses",
		mutate: func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = nil },
		want:   []wantErr{{Type: field.ErrorTypeRequired, Field: "endpoints[0].addresses", Detail: "must contain at least 1 address"}},
	}, {
		name: "bad and wrong-family addresses",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].Addresses = []string{"10.1.2", "fd00::1", "127.0.0.1", "169.254.169.254"}
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "endpoints[0].addresses[0]", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "endpoints[0].addresses[1]", Detail: "must be an IPv4 address"},
			{Type: field.ErrorTypeInvalid, Field: "endpoints[0].addresses[2]", Detail: "may not be in the loopback range (127.0.0.0/8, ::1/128)"},
			{Type: field.ErrorTypeInvalid, Field: "endpoints[0].addresses[3]", Detail: "may not be in the link-local range (169.254.0.0/16, fe80::/10)"},
		},
	}, {
		name: "ipv6 slice",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.AddressType = discoveryv1.AddressTypeIPv6
			s.Endpoints[0].Addresses = []string{"fd00::1", "10.0.0.1", "::"}
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "endpoints[0].addresses[1]", Detail: "must be an IPv6 address"},
			{Type: field.ErrorTypeInvalid, Field: "endpoints[0].addresses[2]", Detail: "may not be unspecified (::)"},
		},
	}, {
		name: "fqdn slice",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.AddressType = discoveryv1.AddressTypeFQDN
			s.Endpoints[0].Addresses = []string{"db.example.com", "not a host"}
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "endpoints[0].addresses[1]", Detail: ""}},
	}, {
		name: "too many endpoints",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = make([]discoveryv1.Endpoint, 1001)
		},
		want: []wantErr{{Type: field.ErrorTypeTooMany, Field: "endpoints", Detail: ""}},
	}, {
		name: "too many addresses",
		mutate: func(s *discoveryv1.EndpointSlice) {
			for i := 0; i < 100; i++ {
				s.Endpoints[0].Addresses = append(s.Endpoints[0].Addresses, fmt.Sprintf("10.2.0.%d", i+1))
			}
		},
		want: []wantErr{{Type: field.ErrorTypeTooMany, Field: "endpoints[0].addresses", Detail: ""}},
	}, {
		name: "hostname and node name",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].Hostname = utilptr.To("Pod_0")
			s.Endpoints[0].NodeName = utilptr.To("Node/1")
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "endpoints[0].nodeName", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "endpoints[0].hostname", Detail: ""},
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
			{Type: field.ErrorTypeDuplicate, Field: "endpoints[0].hints.forZones[1].name", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "endpoints[0].hints.forZones[2].name", Detail: ""},
			{Type: field.ErrorTypeDuplicate, Field: "endpoints[0].hints.forNodes[1].name", Detail: ""},
		},
	}, {
		name: "too many zone hints",
		mutate: func(s *discoveryv1.EndpointSlice) {
			for i := 0; i < 8; i++ {
				s.Endpoints[0].Hints.ForZones = append(s.Endpoints[0].Hints.ForZones, discoveryv1.ForZone{Name: fmt.Sprintf("z%d", i)})
			}
		},
		want: []wantErr{{Type: field.ErrorTypeTooMany, Field: "endpoints[0].hints.forZones", Detail: ""}},
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
			{Type: field.ErrorTypeDuplicate, Field: "ports[1].name", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "ports[2].name", Detail: ""},
			{Type: field.ErrorTypeNotSupported, Field: "ports[2].protocol", Detail: ""},
			{Type: field.ErrorTypeRequired, Field: "ports[3].protocol", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "ports[3].appProtocol", Detail: ""},
		},
	}, {
		name: "topology labels",
		mutate: func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].DeprecatedTopology = map[string]string{"bad key!": "v"}
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "endpoints[0].deprecatedTopology", Detail: ""}},
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
	checkErrs(t, validateEndpointSliceUpdate(retyped, old), []wantErr{{Type: field.ErrorTypeInvalid, Field: "addressType", Detail: "field is immutable"}})
}
