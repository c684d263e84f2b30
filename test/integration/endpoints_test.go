package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
)

// endpointsPod creates a pod bound to a (non-existent) node and gives it
// the status a kubelet would report: running, with ip, Ready as given.
// It stands in for the kubelet where tests need distinct pod IPs and
// readiness flips, which fakeKubelet does not offer.
func endpointsPod(t *testing.T, ns, name, ip string, ready bool, mutate func(*v1.Pod)) {
	t.Helper()
	ctx := context.Background()
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{NodeName: "fake-node", Containers: []v1.Container{{Name: "c", Image: "busybox",
			Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}},
	}
	if mutate != nil {
		mutate(p)
	}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", name, err)
	}
	setEndpointsPodStatus(t, ns, name, ip, ready)
}

// setEndpointsPodStatus sets a test pod's IP and Ready condition, as its
// kubelet would.
func setEndpointsPodStatus(t *testing.T, ns, name, ip string, ready bool) {
	t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status = fakeStatus(cur, v1.PodRunning)
		cur.Status.PodIP, cur.Status.PodIPs = ip, []v1.PodIP{{IP: ip}}
		if !ready {
			for i := range cur.Status.Conditions {
				if c := &cur.Status.Conditions[i]; c.Type == v1.PodReady || c.Type == v1.ContainersReady {
					c.Status = v1.ConditionFalse
				}
			}
		}
		_, err = client.CoreV1().Pods(ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("status of pod %s: %v", name, err)
	}
}

func webService(t *testing.T, ns string, mutate func(*v1.Service)) *v1.Service {
	t.Helper()
	s := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []v1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if mutate != nil {
		mutate(s)
	}
	s, err := client.CoreV1().Services(ns).Create(context.Background(), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create service: %v", err)
	}
	return s
}

// endpointsState summarises a service's Endpoints: ready and not-ready
// IPs per subset, as "ports: ready | notready".
func endpointsState(ns, name string) (string, *v1.Endpoints, error) {
	ep, err := client.CoreV1().Endpoints(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return "", nil, err
	}
	var parts []string
	for _, s := range ep.Subsets {
		var ports, ready, notReady []string
		for _, p := range s.Ports {
			ports = append(ports, fmt.Sprintf("%s=%d", p.Name, p.Port))
		}
		for _, a := range s.Addresses {
			ready = append(ready, a.IP)
		}
		for _, a := range s.NotReadyAddresses {
			notReady = append(notReady, a.IP)
		}
		parts = append(parts, fmt.Sprintf("%s: %s | %s", strings.Join(ports, ","), strings.Join(ready, ","), strings.Join(notReady, ",")))
	}
	return strings.Join(parts, "; "), ep, nil
}

func serviceSlices(ns, name string) ([]discoveryv1.EndpointSlice, error) {
	l, err := client.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + name + "," + discoveryv1.LabelManagedBy + "=endpointslice-controller.k8s.io"})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// slicesState summarises a service's slices: per slice, its ports and its
// endpoints as IP(ready), sorted.
func slicesState(ns, name string) (string, error) {
	slices, err := serviceSlices(ns, name)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, s := range slices {
		var ports, eps []string
		for _, p := range s.Ports {
			ports = append(ports, fmt.Sprintf("%s=%d", *p.Name, *p.Port))
		}
		for _, e := range s.Endpoints {
			eps = append(eps, fmt.Sprintf("%s(%v)", e.Addresses[0], *e.Conditions.Ready))
		}
		sort.Strings(eps)
		parts = append(parts, fmt.Sprintf("%s: %s", strings.Join(ports, ","), strings.Join(eps, ",")))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; "), nil
}

func want(got, want string) error {
	if got != want {
		return fmt.Errorf("got %q, want %q", got, want)
	}
	return nil
}

func TestEndpointsReadyPodsAndReadinessFlip(t *testing.T) {
	ns := testNamespace(t, "endpoints-ready")
	svc := webService(t, ns, func(s *v1.Service) { s.Labels = map[string]string{"team": "blue"} })
	for i := 1; i <= 3; i++ {
		endpointsPod(t, ns, fmt.Sprintf("web-%d", i), fmt.Sprintf("10.200.0.%d", i), true, nil)
	}
	eventually(t, 10*time.Second, func() error {
		got, _, err := endpointsState(ns, "web")
		if err != nil {
			return err
		}
		return want(got, "http=8080: 10.200.0.1,10.200.0.2,10.200.0.3 | ")
	})
	eventually(t, 10*time.Second, func() error {
		got, err := slicesState(ns, "web")
		if err != nil {
			return err
		}
		return want(got, "http=8080: 10.200.0.1(true),10.200.0.2(true),10.200.0.3(true)")
	})

	_, ep, _ := endpointsState(ns, "web")
	if ep.Labels["team"] != "blue" {
		t.Errorf("endpoints labels = %v, want the service's", ep.Labels)
	}
	if _, ok := ep.Annotations[v1.EndpointsLastChangeTriggerTime]; !ok {
		t.Errorf("no %s annotation: %v", v1.EndpointsLastChangeTriggerTime, ep.Annotations)
	}
	a := ep.Subsets[0].Addresses[0]
	if a.NodeName == nil || *a.NodeName != "fake-node" || a.TargetRef == nil || a.TargetRef.Kind != "Pod" || a.TargetRef.Name != "web-1" {
		t.Errorf("address = %+v, want node fake-node and a targetRef to pod web-1", a)
	}
	slices, _ := serviceSlices(ns, "web")
	s := slices[0]
	if s.AddressType != discoveryv1.AddressTypeIPv4 || !strings.HasPrefix(s.Name, "web-") || s.Labels["team"] != "blue" ||
		len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != svc.UID {
		t.Errorf("slice meta: name %s, type %s, labels %v, owners %+v", s.Name, s.AddressType, s.Labels, s.OwnerReferences)
	}
	if e := s.Endpoints[0]; e.NodeName == nil || *e.NodeName != "fake-node" || e.TargetRef == nil || e.TargetRef.Kind != "Pod" {
		t.Errorf("slice endpoint = %+v", e)
	}

	// Readiness lost must reach both within 2 s.
	setEndpointsPodStatus(t, ns, "web-2", "10.200.0.2", false)
	eventually(t, 2*time.Second, func() error {
		got, _, err := endpointsState(ns, "web")
		if err != nil {
			return err
		}
		return want(got, "http=8080: 10.200.0.1,10.200.0.3 | 10.200.0.2")
	})
	eventually(t, 2*time.Second, func() error {
		got, err := slicesState(ns, "web")
		if err != nil {
			return err
		}
		return want(got, "http=8080: 10.200.0.1(true),10.200.0.2(false),10.200.0.3(true)")
	})
	sl, _ := serviceSlices(ns, "web")
	if len(sl) != 1 || sl[0].Name != s.Name {
		t.Errorf("slice replaced rather than updated in place: had %s, now %d slices", s.Name, len(sl))
	}

	// A deleted pod leaves both.
	if err := client.CoreV1().Pods(ns).Delete(context.Background(), "web-3", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		got, _, err := endpointsState(ns, "web")
		if err != nil {
			return err
		}
		return want(got, "http=8080: 10.200.0.1 | 10.200.0.2")
	})

	// kubectl's tables.
	out := mustKubectl(t, "", "get", "endpoints", "web", "-n", ns)
	if h := header(out); h != "NAME ENDPOINTS AGE" {
		t.Errorf("endpoints header = %q", h)
	}
	if row := tableRow(t, out, "web"); row[1] != "10.200.0.1:8080" {
		t.Errorf("endpoints row = %v", row)
	}
	out = mustKubectl(t, "", "get", "endpointslices", "-n", ns)
	if h := header(out); h != "NAME ADDRESSTYPE PORTS ENDPOINTS AGE" {
		t.Errorf("endpointslices header = %q", h)
	}
	if row := tableRow(t, out, s.Name); row[1] != "IPv4" || row[2] != "8080" || row[3] != "10.200.0.1,10.200.0.2" {
		t.Errorf("endpointslice row = %v", row)
	}
}

func TestEndpointsNamedTargetPort(t *testing.T) {
	ns := testNamespace(t, "endpoints-named")
	webService(t, ns, func(s *v1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("http") })
	endpointsPod(t, ns, "a", "10.200.1.1", true, nil)
	endpointsPod(t, ns, "b", "10.200.1.2", true, func(p *v1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 9090 })
	endpointsPod(t, ns, "c", "10.200.1.3", true, func(p *v1.Pod) { p.Spec.Containers[0].Ports[0].Name = "metrics" })
	eventually(t, 10*time.Second, func() error {
		got, _, err := endpointsState(ns, "web")
		if err != nil {
			return err
		}
		return want(got, "http=8080: 10.200.1.1 | ; http=9090: 10.200.1.2 | ")
	})
	eventually(t, 10*time.Second, func() error {
		got, err := slicesState(ns, "web")
		if err != nil {
			return err
		}
		// The pod without the named port is still an endpoint, with no ports.
		return want(got, ": 10.200.1.3(true); http=8080: 10.200.1.1(true); http=9090: 10.200.1.2(true)")
	})
}

func TestEndpointsHeadlessHostnames(t *testing.T) {
	ns := testNamespace(t, "endpoints-headless")
	webService(t, ns, func(s *v1.Service) { s.Spec.ClusterIP = v1.ClusterIPNone })
	for i := range 2 {
		endpointsPod(t, ns, fmt.Sprintf("web-%d", i), fmt.Sprintf("10.200.2.%d", i+1), true, func(p *v1.Pod) {
			p.Spec.Hostname, p.Spec.Subdomain = fmt.Sprintf("web-%d", i), "web"
		})
	}
	endpointsPod(t, ns, "other", "10.200.2.9", true, func(p *v1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "other", "elsewhere" })
	eventually(t, 10*time.Second, func() error {
		_, ep, err := endpointsState(ns, "web")
		if err != nil {
			return err
		}
		if _, ok := ep.Labels[v1.IsHeadlessService]; !ok {
			return fmt.Errorf("labels %v lack %s", ep.Labels, v1.IsHeadlessService)
		}
		var got []string
		for _, s := range ep.Subsets {
			for _, a := range s.Addresses {
				got = append(got, a.IP+"="+a.Hostname)
			}
		}
		return want(strings.Join(got, ","), "10.200.2.1=web-0,10.200.2.2=web-1,10.200.2.9=")
	})
	eventually(t, 10*time.Second, func() error {
		slices, err := serviceSlices(ns, "web")
		if err != nil || len(slices) != 1 {
			return fmt.Errorf("%d slices, %v", len(slices), err)
		}
		if _, ok := slices[0].Labels[v1.IsHeadlessService]; !ok {
			return fmt.Errorf("slice labels %v lack %s", slices[0].Labels, v1.IsHeadlessService)
		}
		var got []string
		for _, e := range slices[0].Endpoints {
			h := ""
			if e.Hostname != nil {
				h = *e.Hostname
			}
			got = append(got, e.Addresses[0]+"="+h)
		}
		sort.Strings(got)
		return want(strings.Join(got, ","), "10.200.2.1=web-0,10.200.2.2=web-1,10.200.2.9=")
	})
}

func TestEndpointSlicesSplitAndServiceDeletion(t *testing.T) {
	ns := testNamespace(t, "endpoints-many")
	webService(t, ns, nil)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range 250 {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			endpointsPod(t, ns, fmt.Sprintf("web-%03d", i), fmt.Sprintf("10.201.%d.%d", i/200, i%200+1), true, nil)
		}()
	}
	wg.Wait()
	eventually(t, 30*time.Second, func() error {
		slices, err := serviceSlices(ns, "web")
		if err != nil {
			return err
		}
		n := 0
		for _, s := range slices {
			if len(s.Endpoints) > 100 {
				return fmt.Errorf("slice %s has %d endpoints", s.Name, len(s.Endpoints))
			}
			n += len(s.Endpoints)
		}
		if len(slices) != 3 || n != 250 {
			return fmt.Errorf("%d slices with %d endpoints, want 3 with 250", len(slices), n)
		}
		return nil
	})
	eventually(t, 30*time.Second, func() error {
		_, ep, err := endpointsState(ns, "web")
		if err != nil {
			return err
		}
		if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 250 {
			return fmt.Errorf("endpoints subsets: %d", len(ep.Subsets))
		}
		return nil
	})

	if err := client.CoreV1().Services(ns).Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		if _, err := client.CoreV1().Endpoints(ns).Get(context.Background(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("endpoints still there (%v)", err)
		}
		slices, err := serviceSlices(ns, "web")
		if err != nil {
			return err
		}
		if len(slices) != 0 {
			return fmt.Errorf("%d slices left", len(slices))
		}
		return nil
	})
}

func TestEndpointsSelectorlessServiceLeftAlone(t *testing.T) {
	ns := testNamespace(t, "endpoints-manual")
	webService(t, ns, func(s *v1.Service) { s.Spec.Selector = nil })
	endpointsPod(t, ns, "web-1", "10.200.3.1", true, nil)
	user := &v1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"owner": "user"}},
		Subsets: []v1.EndpointSubset{{Addresses: []v1.EndpointAddress{{IP: "192.0.2.10"}},
			Ports: []v1.EndpointPort{{Name: "http", Port: 9999, Protocol: v1.ProtocolTCP}}}},
	}
	created, err := client.CoreV1().Endpoints(ns).Create(context.Background(), user, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Touch the service so that both controllers look at it again.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.CoreV1().Services(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Annotations = map[string]string{"touched": "yes"}
		_, err = client.CoreV1().Services(ns).Update(context.Background(), cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	got, ep, err := endpointsState(ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if got != "http=9999: 192.0.2.10 | " || ep.ResourceVersion != created.ResourceVersion {
		t.Errorf("user endpoints changed: %q (resourceVersion %s, was %s)", got, ep.ResourceVersion, created.ResourceVersion)
	}
	if slices, _ := serviceSlices(ns, "web"); len(slices) != 0 {
		t.Errorf("the endpointslice controller made %d slices for a service without selector", len(slices))
	}

	// The user's Endpoints are mirrored into a slice of their own.
	mirrored := func() ([]discoveryv1.EndpointSlice, error) {
		l, err := client.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{
			LabelSelector: discoveryv1.LabelServiceName + "=web," + discoveryv1.LabelManagedBy + "=endpointslicemirroring-controller.k8s.io"})
		if err != nil {
			return nil, err
		}
		return l.Items, nil
	}
	eventually(t, 10*time.Second, func() error {
		slices, err := mirrored()
		if err != nil {
			return err
		}
		if len(slices) != 1 || len(slices[0].Endpoints) != 1 || slices[0].Endpoints[0].Addresses[0] != "192.0.2.10" ||
			*slices[0].Ports[0].Port != 9999 || slices[0].Labels["owner"] != "user" ||
			len(slices[0].OwnerReferences) != 1 || slices[0].OwnerReferences[0].Kind != "Endpoints" {
			return fmt.Errorf("mirrored slices: %+v", slices)
		}
		return nil
	})
	// Opting out removes the mirror.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.CoreV1().Endpoints(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Labels[discoveryv1.LabelSkipMirror] = "true"
		_, err = client.CoreV1().Endpoints(ns).Update(context.Background(), cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		slices, err := mirrored()
		if err != nil || len(slices) != 0 {
			return fmt.Errorf("%d mirrored slices left (%v)", len(slices), err)
		}
		return nil
	})
}
