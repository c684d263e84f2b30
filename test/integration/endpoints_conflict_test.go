package integration

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
)

// failedWrites counts the API server's answers to creates and updates of
// resource with the given code, from apiserver_request_total on /metrics.
func failedWrites(t *testing.T, resource, code string) float64 {
	t.Helper()
	body, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	total := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `resource="`+resource+`"`) ||
			!strings.Contains(line, `code="`+code+`"`) || !strings.Contains(line, `subresource=""`) ||
			!strings.Contains(line, `verb="POST"`) && !strings.Contains(line, `verb="PUT"`) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		total += v
	}
	return total
}

// writeFailures counts conflicts (409) and writes to objects already gone
// (404) on Endpoints and EndpointSlices.
func writeFailures(t *testing.T) map[string]float64 {
	out := map[string]float64{}
	for _, r := range []string{"endpoints", "endpointslices"} {
		for _, code := range []string{"404", "409"} {
			out[r+" "+code] = failedWrites(t, r, code)
		}
	}
	return out
}

// TestEndpointsWriteWithoutConflicts creates 50 Services with pods behind
// them that turn ready one after another, which has the Endpoints and
// EndpointSlice controllers write each object several times in quick
// succession. A controller that computed a write from a cache not yet
// showing its previous one would fail it with a conflict: a
// FailedToUpdateEndpoint or FailedToUpdateEndpointSlices warning and a
// retried key.
func TestEndpointsWriteWithoutConflicts(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "ep-conflicts")
	before := writeFailures(t)
	const services, podsPer = 50, 3

	errs := make(chan error, services)
	var wg sync.WaitGroup
	for i := range services {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs <- conflictScenario(ctx, ns, i, podsPer)
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	for i := range services {
		name := fmt.Sprintf("svc-%d", i)
		eventually(t, 60*time.Second, func() error {
			ep, err := client.CoreV1().Endpoints(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != podsPer {
				return fmt.Errorf("endpoints %s: %+v", name, ep.Subsets)
			}
			slices, err := serviceSlices(ns, name)
			if err != nil {
				return err
			}
			ready := 0
			for _, s := range slices {
				for _, e := range s.Endpoints {
					if e.Conditions.Ready != nil && *e.Conditions.Ready {
						ready++
					}
				}
			}
			if ready != podsPer {
				return fmt.Errorf("slices of %s: %d ready endpoints", name, ready)
			}
			return nil
		})
	}

	// Events are recorded asynchronously.
	time.Sleep(time.Second)
	evs, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "type=Warning"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		switch e.Reason {
		case "FailedToUpdateEndpoint", "FailedToCreateEndpoint", "FailedToUpdateEndpointSlices":
			t.Errorf("%s %s: %s", e.Reason, e.InvolvedObject.Name, e.Message)
		}
	}
	for k, n := range writeFailures(t) {
		if d := n - before[k]; d != 0 {
			t.Errorf("%v answers %s to the controllers' writes", d, k)
		}
	}
}

// conflictScenario creates service svc-i and its pods, not ready, then
// makes the pods ready one by one.
func conflictScenario(ctx context.Context, ns string, i, pods int) error {
	name := fmt.Sprintf("svc-%d", i)
	labels := map[string]string{"app": name}
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.ServiceSpec{Selector: labels,
			Ports: []v1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if _, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create service %s: %w", name, err)
	}
	setStatus := func(pod string, ip string, ready bool) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Status = fakeStatus(cur, v1.PodRunning)
			cur.Status.PodIP, cur.Status.PodIPs = ip, []v1.PodIP{{IP: ip}}
			status := v1.ConditionFalse
			if ready {
				status = v1.ConditionTrue
			}
			for j := range cur.Status.Conditions {
				if c := &cur.Status.Conditions[j]; c.Type == v1.PodReady || c.Type == v1.ContainersReady {
					c.Status = status
				}
			}
			_, err = client.CoreV1().Pods(ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err
		})
	}
	ip := func(j int) string { return fmt.Sprintf("10.44.%d.%d", i, j+1) }
	for j := range pods {
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, j), Labels: labels},
			Spec: v1.PodSpec{NodeName: "fake-node", Containers: []v1.Container{{Name: "c", Image: "busybox",
				Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}},
		}
		if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s: %w", p.Name, err)
		}
		if err := setStatus(p.Name, ip(j), false); err != nil {
			return fmt.Errorf("status of pod %s: %w", p.Name, err)
		}
	}
	var errs []error
	for j := range pods {
		errs = append(errs, setStatus(fmt.Sprintf("%s-%d", name, j), ip(j), true))
	}
	return errors.Join(errs...)
}
