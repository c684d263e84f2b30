package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

var serviceCIDR = netip.MustParsePrefix("10.43.0.0/16")

func newNamespace(t *testing.T, c kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func svcOf(name string, typ corev1.ServiceType, mutate ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func inNodePortRange(p int32) bool { return p >= 30000 && p <= 32767 }

// TestAllocationParallelCreates: concurrent creates all get addresses,
// all different, all in the range.
func TestAllocationParallelCreates(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "alloc-par")
	const n = 200
	var mu sync.Mutex
	ips := map[string]string{}
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out, err := client.CoreV1().Services(ns).Create(ctx, svcOf(fmt.Sprintf("s%03d", i), ""), metav1.CreateOptions{})
			if err != nil {
				t.Errorf("create s%03d: %v", i, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if prev, ok := ips[out.Spec.ClusterIP]; ok {
				t.Errorf("%s and %s both got %s", prev, out.Name, out.Spec.ClusterIP)
			}
			ips[out.Spec.ClusterIP] = out.Name
			ip, err := netip.ParseAddr(out.Spec.ClusterIP)
			if err != nil || !serviceCIDR.Contains(ip) {
				t.Errorf("%s got %q, not in %s", out.Name, out.Spec.ClusterIP, serviceCIDR)
			}
			if len(out.Spec.ClusterIPs) != 1 || out.Spec.ClusterIPs[0] != out.Spec.ClusterIP ||
				len(out.Spec.IPFamilies) != 1 || out.Spec.IPFamilies[0] != corev1.IPv4Protocol ||
				out.Spec.IPFamilyPolicy == nil || *out.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
				t.Errorf("%s: clusterIPs %v ipFamilies %v ipFamilyPolicy %v", out.Name, out.Spec.ClusterIPs, out.Spec.IPFamilies, out.Spec.IPFamilyPolicy)
			}
		}(i)
	}
	wg.Wait()
	t.Logf("%d concurrent creates in %v", n, time.Since(start))
	if len(ips) != n && !t.Failed() {
		t.Errorf("%d distinct addresses for %d services", len(ips), n)
	}
}

func TestAllocationNodePortsAndRelease(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "alloc-np")
	svcs := client.CoreV1().Services(ns)

	np, err := svcs.Create(ctx, svcOf("np", corev1.ServiceTypeNodePort, func(s *corev1.Service) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP})
	}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range np.Spec.Ports {
		if !inNodePortRange(p.NodePort) {
			t.Errorf("port %s got node port %d", p.Name, p.NodePort)
		}
	}
	if np.Spec.Ports[0].NodePort == np.Spec.Ports[1].NodePort {
		t.Errorf("two ports share node port %d", np.Spec.Ports[0].NodePort)
	}

	taken := np.Spec.Ports[0].NodePort
	_, err = svcs.Create(ctx, svcOf("clash", corev1.ServiceTypeNodePort, func(s *corev1.Service) { s.Spec.Ports[0].NodePort = taken }), metav1.CreateOptions{})
	wantStatus(t, err, apierrors.IsInvalid, fmt.Sprintf("spec.ports[0].nodePort: Invalid value: %d: provided port is already allocated", taken))
	_, err = svcs.Create(ctx, svcOf("far", corev1.ServiceTypeNodePort, func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 40000 }), metav1.CreateOptions{})
	wantStatus(t, err, apierrors.IsInvalid, "spec.ports[0].nodePort: Invalid value: 40000: provided port is not in the valid range. The range of valid ports is 30000-32767")
	_, err = svcs.Create(ctx, svcOf("ipclash", "", func(s *corev1.Service) { s.Spec.ClusterIP = np.Spec.ClusterIP }), metav1.CreateOptions{})
	wantStatus(t, err, apierrors.IsInvalid, fmt.Sprintf(`spec.clusterIPs: Invalid value: ["%s"]: failed to allocate IP %s: provided IP is already allocated`, np.Spec.ClusterIP, np.Spec.ClusterIP))
	_, err = svcs.Create(ctx, svcOf("ipout", "", func(s *corev1.Service) { s.Spec.ClusterIP = "10.99.0.5" }), metav1.CreateOptions{})
	wantStatus(t, err, apierrors.IsInvalid, "failed to allocate IP 10.99.0.5: the provided IP (10.99.0.5) is not in the valid range. The range of valid IPs is 10.43.0.0/16")

	// A dry run takes nothing: the same values are still free afterwards.
	dry, err := svcs.Create(ctx, svcOf("dry", corev1.ServiceTypeNodePort), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil || dry.Spec.ClusterIP == "" || !inNodePortRange(dry.Spec.Ports[0].NodePort) {
		t.Fatalf("dry run: %v", err)
	}
	kept, err := svcs.Create(ctx, svcOf("kept", corev1.ServiceTypeNodePort, func(s *corev1.Service) {
		s.Spec.ClusterIP = dry.Spec.ClusterIP
		s.Spec.Ports[0].NodePort = dry.Spec.Ports[0].NodePort
	}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("values a dry run showed are not free: %v", err)
	}

	// Deleting frees the address and the ports: a new service gets them.
	ip := np.Spec.ClusterIP
	if err := svcs.Delete(ctx, "np", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again, err := svcs.Create(ctx, svcOf("again", corev1.ServiceTypeNodePort, func(s *corev1.Service) {
		s.Spec.ClusterIP = ip
		s.Spec.Ports[0].NodePort = taken
	}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("values of a deleted service are not free: %v", err)
	}
	if again.Spec.ClusterIP != ip || again.Spec.Ports[0].NodePort != taken {
		t.Errorf("got %s:%d, asked for %s:%d", again.Spec.ClusterIP, again.Spec.Ports[0].NodePort, ip, taken)
	}

	// Headless and ExternalName services get no address.
	hl, err := svcs.Create(ctx, svcOf("headless", "", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }), metav1.CreateOptions{})
	if err != nil || hl.Spec.ClusterIP != corev1.ClusterIPNone || len(hl.Spec.ClusterIPs) != 1 || hl.Spec.ClusterIPs[0] != corev1.ClusterIPNone {
		t.Errorf("headless: %v, clusterIPs %v", err, hl)
	}
	en, err := svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}}, metav1.CreateOptions{})
	if err != nil || en.Spec.ClusterIP != "" || len(en.Spec.IPFamilies) != 0 {
		t.Errorf("ExternalName: %v, %+v", err, en.Spec)
	}

	// ClusterIP -> NodePort allocates; NodePort -> ClusterIP releases.
	web, err := svcs.Create(ctx, svcOf("web", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	web.Spec.Type = corev1.ServiceTypeNodePort
	web, err = svcs.Update(ctx, web, metav1.UpdateOptions{})
	if err != nil || !inNodePortRange(web.Spec.Ports[0].NodePort) {
		t.Fatalf("ClusterIP -> NodePort: %v", err)
	}
	port := web.Spec.Ports[0].NodePort
	web.Spec.Type = corev1.ServiceTypeClusterIP
	web.Spec.ExternalTrafficPolicy = ""
	web.Spec.Ports[0].NodePort = 0
	web, err = svcs.Update(ctx, web, metav1.UpdateOptions{})
	if err != nil || web.Spec.Ports[0].NodePort != 0 {
		t.Fatalf("NodePort -> ClusterIP: %v", err)
	}
	if _, err := svcs.Create(ctx, svcOf("reuse", corev1.ServiceTypeNodePort, func(s *corev1.Service) { s.Spec.Ports[0].NodePort = port }), metav1.CreateOptions{}); err != nil {
		t.Errorf("node port %d not freed by the type change: %v", port, err)
	}
	_ = kept
}

func wantStatus(t *testing.T, err error, is func(error) bool, msg string) {
	t.Helper()
	if err == nil || !is(err) {
		t.Fatalf("error %v, want another status", err)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Fatalf("error %q\nwant it to contain %q", err.Error(), msg)
	}
}

func TestKubernetesService(t *testing.T) {
	ctx := context.Background()
	svc, err := client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	port := int32(restPort(t))
	if svc.Spec.ClusterIP != "10.43.0.1" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "https" ||
		svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.IntVal != port {
		t.Errorf("kubernetes service: %+v", svc.Spec)
	}
	ep, err := client.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 || ep.Subsets[0].Addresses[0].IP != "127.0.0.1" ||
		len(ep.Subsets[0].Ports) != 1 || ep.Subsets[0].Ports[0].Port != port || ep.Subsets[0].Ports[0].Name != "https" {
		t.Errorf("kubernetes endpoints: %+v", ep.Subsets)
	}
	slice, err := client.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if slice.Labels[discoveryv1.LabelServiceName] != "kubernetes" || len(slice.Endpoints) != 1 || slice.Endpoints[0].Addresses[0] != "127.0.0.1" ||
		len(slice.Ports) != 1 || *slice.Ports[0].Port != port {
		t.Errorf("kubernetes endpointslice: %+v", slice)
	}
	// The serving certificate names the service's address, so pods can
	// verify https://10.43.0.1.
	found := false
	for _, ip := range servingCertIPs(t) {
		found = found || ip == "10.43.0.1"
	}
	if !found {
		t.Errorf("serving certificate lacks 10.43.0.1")
	}
}

func restPort(t *testing.T) int {
	t.Helper()
	u, err := url.Parse(inst.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func servingCertIPs(t *testing.T) []string {
	t.Helper()
	u, _ := url.Parse(inst.URL)
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var out []string
	for _, ip := range conn.ConnectionState().PeerCertificates[0].IPAddresses {
		out = append(out, ip.String())
	}
	return out
}

// TestAllocationSurvivesRestart: what a killed server handed out is still
// taken after a restart on the same data, and the kubernetes service is
// reconciled, not duplicated.
func TestAllocationSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "orca-alloc-restart-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })

	srv1 := startServerProcess(t, ctx, dir)
	svc, err := srv1.client.CoreV1().Services("default").Create(ctx, svcOf("np", corev1.ServiceTypeNodePort), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv1.kill()

	srv2 := startServerProcess(t, ctx, dir)
	svcs := srv2.client.CoreV1().Services("default")
	_, err = svcs.Create(ctx, svcOf("ip", "", func(s *corev1.Service) { s.Spec.ClusterIP = svc.Spec.ClusterIP }), metav1.CreateOptions{})
	wantStatus(t, err, apierrors.IsInvalid, "provided IP is already allocated")
	_, err = svcs.Create(ctx, svcOf("port", corev1.ServiceTypeNodePort, func(s *corev1.Service) { s.Spec.Ports[0].NodePort = svc.Spec.Ports[0].NodePort }), metav1.CreateOptions{})
	wantStatus(t, err, apierrors.IsInvalid, "provided port is already allocated")
	_, err = svcs.Create(ctx, svcOf("k", "", func(s *corev1.Service) { s.Spec.ClusterIP = "10.43.0.1" }), metav1.CreateOptions{})
	wantStatus(t, err, apierrors.IsInvalid, "provided IP is already allocated")
	k, err := svcs.Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || k.Spec.ClusterIP != "10.43.0.1" {
		t.Fatalf("kubernetes service after restart: %v %v", err, k)
	}
	// The new server listens on another port; the service follows it.
	u, _ := url.Parse(srv2.cfg.Host)
	port, _ := strconv.Atoi(u.Port())
	if k.Spec.Ports[0].TargetPort.IntVal != int32(port) {
		t.Errorf("kubernetes service targets %d, the server listens on %d", k.Spec.Ports[0].TargetPort.IntVal, port)
	}
	ep, err := srv2.client.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || ep.Subsets[0].Ports[0].Port != int32(port) {
		t.Errorf("kubernetes endpoints after restart: %v %+v", err, ep)
	}
}
