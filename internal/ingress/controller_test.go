package ingress

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/orca-project/orca/internal/ingress/route"
	"github.com/orca-project/orca/internal/testutil"
)

// TestController: an Ingress of the class, and one without a class once
// the class is the default, are routed to the ready endpoints of their
// Service, and follow its changes.
func TestController(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	class, prefix, portName, port := ClassName, networkingv1.PathTypePrefix, "http", int32(8080)
	backend := networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}
	ing := func(name, host string, cls *string) *networkingv1.Ingress {
		return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: networkingv1.IngressSpec{
			IngressClassName: cls,
			Rules: []networkingv1.IngressRule{{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: backend}}}}}},
		}}
	}
	client := fake.NewSimpleClientset(
		ing("mine", "a.example", &class), ing("classless", "b.example", nil),
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
			AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.42.0.5"}}}},
	)
	var current atomic.Pointer[route.Table]
	c, err := New(Config{Client: client, Set: func(t *route.Table) { current.Store(t) },
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Run(ctx) }()
	endpoints := func(host string) []string {
		t := current.Load()
		if t == nil {
			return nil
		}
		m, ok := t.Route(host, "/")
		if !ok {
			return nil
		}
		return m.Backends[0].Endpoints
	}
	testutil.Eventually(t, 10*time.Second, "a.example routed to the ready endpoint", func() bool { return slices.Equal(endpoints("a.example"), []string{"10.42.0.5:8080"}) })
	if got := endpoints("b.example"); got != nil {
		t.Errorf("an Ingress without a class was routed while no class is the default: %v", got)
	}

	// The class becomes the default: the classless Ingress is ours too.
	if _, err := client.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: ClassName, Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}},
		Spec:       networkingv1.IngressClassSpec{Controller: ControllerName}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the classless Ingress routed once the class is the default", func() bool { return slices.Equal(endpoints("b.example"), []string{"10.42.0.5:8080"}) })

	// An endpoint more: the table follows.
	sl, _ := client.DiscoveryV1().EndpointSlices("default").Get(ctx, "web-1", metav1.GetOptions{})
	sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.42.1.7"}})
	if _, err := client.DiscoveryV1().EndpointSlices("default").Update(ctx, sl, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the new endpoint in the table", func() bool { return slices.Equal(endpoints("a.example"), []string{"10.42.0.5:8080", "10.42.1.7:8080"}) })
}
