package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func newService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
}

func TestValidateService(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Service)
		want   []string
	}{
		{"clusterIP", func(*corev1.Service) {}, nil},
		{"allocated clusterIP", func(s *corev1.Service) { s.Spec.ClusterIP = "10.96.0.10" }, nil},
		{"headless without ports", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone; s.Spec.Ports = nil }, nil},
		{"externalName", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeExternalName
			s.Spec.ExternalName = "db.example.com."
			s.Spec.Ports = nil
		}, nil},
		{"nodePort", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = 30080
		}, nil},
		{"loadBalancer", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"}
		}, nil},
		{"multiple named ports", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "https", Port: 443}}
		}, nil},
		{"no ports", func(s *corev1.Service) { s.Spec.Ports = nil },
			[]string{"spec.ports: Required value"}},
		{"port out of range", func(s *corev1.Service) { s.Spec.Ports[0].Port = 0 },
			[]string{"spec.ports[0].port: Invalid value"}},
		{"unnamed ports", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Port: 80}, {Name: "b", Port: 81}}
		}, []string{"spec.ports[0].name: Required value"}},
		{"duplicate port names", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "a", Port: 81}}
		}, []string{"spec.ports[1].name: Duplicate value"}},
		{"duplicate ports", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 80}}
		}, []string{"spec.ports[1]: Duplicate value"}},
		{"protocol", func(s *corev1.Service) { s.Spec.Ports[0].Protocol = "HTTP" },
			[]string{"spec.ports[0].protocol: Unsupported value"}},
		{"type", func(s *corev1.Service) { s.Spec.Type = "Ingress" },
			[]string{"spec.type: Unsupported value"}},
		{"sessionAffinity", func(s *corev1.Service) { s.Spec.SessionAffinity = "Cookie" },
			[]string{"spec.sessionAffinity: Unsupported value"}},
		{"selector", func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "not valid!"} },
			[]string{"spec.selector: Invalid value"}},
		{"nodePort on clusterIP", func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30000 },
			[]string{"spec.ports[0].nodePort: Forbidden"}},
		{"externalName without name", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeExternalName },
			[]string{"spec.externalName: Required value"}},
		{"headless nodePort", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.ClusterIP = corev1.ClusterIPNone
		}, []string{"spec.clusterIPs[0]: Invalid value"}},
		{"bad clusterIP", func(s *corev1.Service) { s.Spec.ClusterIP = "10.0.0.300" },
			[]string{"spec.clusterIPs[0]: Invalid value"}},
		{"clusterIPs mismatch", func(s *corev1.Service) {
			s.Spec.ClusterIP = "10.0.0.1"
			s.Spec.ClusterIPs = []string{"10.0.0.2"}
		}, []string{"spec.clusterIPs: Invalid value"}},
		{"source ranges off LoadBalancer", func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"} },
			[]string{"spec.LoadBalancerSourceRanges: Forbidden"}},
		{"externalTrafficPolicy on clusterIP", func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal },
			[]string{"spec.externalTrafficPolicy: Invalid value"}},
		{"externalIPs", func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"127.0.0.1", "nope"} },
			[]string{"spec.externalIPs[0]: Invalid value", "spec.externalIPs[1]: Invalid value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := newService()
			tc.mutate(svc)
			expectErrs(t, runCreate(Services, svc), tc.want...)
		})
	}
}

func TestServiceNames(t *testing.T) {
	for name, ok := range map[string]bool{"web": true, "web-1": true, "1web": false, "web.example": false, "Web": false} {
		if got := len(Services.ValidateName(name, false)) == 0; got != ok {
			t.Errorf("service name %q valid = %v, want %v", name, got, ok)
		}
	}
}

func TestValidateServiceUpdate(t *testing.T) {
	stored := func() *corev1.Service {
		s := newService()
		s.ResourceVersion = "3"
		s.Spec.ClusterIP = "10.96.0.10"
		s.Spec.ClusterIPs = []string{"10.96.0.10"}
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		s.Spec.IPFamilyPolicy = ptrTo(corev1.IPFamilyPolicySingleStack)
		Services.Default(s)
		return s
	}
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Service)
		want   []string
	}{
		{"ports change", func(s *corev1.Service) { s.Spec.Ports[0].Port = 81 }, nil},
		{"client omits allocated clusterIP", func(s *corev1.Service) { s.Spec.ClusterIP = ""; s.Spec.ClusterIPs = nil }, nil},
		{"clusterIP changed", func(s *corev1.Service) { s.Spec.ClusterIP = "10.96.0.11" },
			[]string{"spec.clusterIPs[0]: Invalid value"}},
		{"clusterIPs changed", func(s *corev1.Service) {
			s.Spec.ClusterIP = "10.96.0.11"
			s.Spec.ClusterIPs = []string{"10.96.0.11"}
		}, []string{"spec.clusterIPs[0]: Invalid value"}},
		{"to externalName", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeExternalName
			s.Spec.ExternalName = "example.com"
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := stored()
			svc := old.DeepCopy()
			tc.mutate(svc)
			expectErrs(t, runUpdate(Services, svc, old), tc.want...)
		})
	}

	old := stored()
	svc := old.DeepCopy()
	svc.Spec.ClusterIP = "10.96.0.11"
	expectDetail(t, runUpdate(Services, svc, old), "spec.clusterIPs[0]", "may not change once set")

	// Going from NodePort back to ClusterIP drops the allocated node ports.
	np := stored()
	np.Spec.Type = corev1.ServiceTypeNodePort
	np.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	np.Spec.Ports[0].NodePort = 30080
	back := np.DeepCopy()
	back.Spec.Type = corev1.ServiceTypeClusterIP
	expectErrs(t, runUpdate(Services, back, np))
	if back.Spec.Ports[0].NodePort != 0 || back.Spec.ExternalTrafficPolicy != "" {
		t.Errorf("type-dependent fields kept: nodePort %d etp %q", back.Spec.Ports[0].NodePort, back.Spec.ExternalTrafficPolicy)
	}
	// And a replace that omits the node port keeps it.
	again := np.DeepCopy()
	again.Spec.Ports[0].NodePort = 0
	expectErrs(t, runUpdate(Services, again, np))
	if again.Spec.Ports[0].NodePort != 30080 {
		t.Errorf("node port not carried over: %d", again.Spec.Ports[0].NodePort)
	}
}
