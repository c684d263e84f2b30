package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestIngressThroughput is `make bench-ingress`: requests per second and
// latency through the node's ingress next to the same requests straight
// to the pod's address, in the same run and alternating, then how long
// an Ingress change takes to reach the traffic. It runs only when
// ORCA_BENCH_INGRESS is set.
func TestIngressThroughput(t *testing.T) {
	if os.Getenv("ORCA_BENCH_INGRESS") == "" {
		t.Skip("a benchmark: make bench-ingress runs it")
	}
	nodes := needNodes(t, 1)
	importEcho(t, nodes)
	ns := namespace(t)
	ctx := context.Background()
	for _, app := range []string{"bench-a", "bench-b"} {
		createPod(t, echoPod(ns, app, nodeName, app))
		echoService(t, ns, app)
	}
	podIP := waitPod(t, ns, "bench-a", 2*time.Minute, "Ready", ready).Status.PodIP
	waitPod(t, ns, "bench-b", 2*time.Minute, "Ready", ready)
	kubectlOK(t, `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: bench
spec:
  rules:
  - host: bench.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: bench-a, port: {number: 80}}}}
`, "-n", ns, "apply", "-f", "-")
	// The node's ingress on loopback: what a client on the node sends,
	// without the service proxy's DNAT of the node addresses in between.
	const ingressURL = "http://127.0.0.1:80/"
	direct := "http://" + podIP + ":8080/"
	eventually(t, time.Minute, func() error {
		pod, err := benchGet(http.DefaultClient, ingressURL, "bench.example")
		if err != nil || pod != "bench-a" {
			return fmt.Errorf("through the ingress: %q %v", pod, err)
		}
		return nil
	})

	const workers, rounds = 16, 3
	const each = 5 * time.Second
	var viaIngress, viaPod loadResult
	for range rounds {
		viaIngress.add(load(ingressURL, "bench.example", workers, each))
		viaPod.add(load(direct, "", workers, each))
	}
	if viaIngress.errors > 0 || viaPod.errors > 0 {
		t.Errorf("errors: %d through the ingress, %d to the pod", viaIngress.errors, viaPod.errors)
	}

	// Rule updates: flip the backend and time until requests follow.
	var follow []time.Duration
	c := &http.Client{Timeout: 2 * time.Second}
	want := "bench-a"
	for i := range 20 {
		want = map[string]string{"bench-a": "bench-b", "bench-b": "bench-a"}[want]
		ing, err := client.NetworkingV1().Ingresses(ns).Get(ctx, "bench", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ing.Spec.Rules[0].HTTP.Paths[0].Backend = networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: want, Port: networkingv1.ServiceBackendPort{Number: 80}}}
		start := time.Now()
		if _, err := client.NetworkingV1().Ingresses(ns).Update(ctx, ing, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		for {
			if pod, err := benchGet(c, ingressURL, "bench.example"); err == nil && pod == want {
				break
			}
			if time.Since(start) > 10*time.Second {
				t.Fatalf("change %d: the ingress did not follow within 10 s", i)
			}
			time.Sleep(2 * time.Millisecond)
		}
		follow = append(follow, time.Since(start))
	}
	slices.Sort(follow)

	fmt.Printf("\nIngress throughput, %d keep-alive clients, %d rounds of %v each path, alternating:\n\n", workers, rounds, each)
	fmt.Println("| path | requests/s | p50 | p99 |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| through the ingress | %.0f | %v | %v |\n", viaIngress.rps(), viaIngress.pct(50), viaIngress.pct(99))
	fmt.Printf("| straight to the pod | %.0f | %v | %v |\n", viaPod.rps(), viaPod.pct(50), viaPod.pct(99))
	fmt.Printf("| ratio | %.2f | %.2f | %.2f |\n\n", viaIngress.rps()/viaPod.rps(),
		float64(viaIngress.pct(50))/float64(viaPod.pct(50)), float64(viaIngress.pct(99))/float64(viaPod.pct(99)))
	fmt.Printf("Ingress change to traffic following it, %d changes: p50 %v, p99 %v, max %v\n",
		len(follow), follow[len(follow)/2].Round(time.Millisecond), follow[len(follow)*99/100].Round(time.Millisecond), follow[len(follow)-1].Round(time.Millisecond))
}

// benchGet is the pod that answered GET url with Host host.
func benchGet(c *http.Client, url, host string) (string, error) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if host != "" {
		req.Host = host
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var a echoAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return "", err
	}
	return a.Pod, nil
}

// loadResult is what load measured.
type loadResult struct {
	requests, errors int
	elapsed          time.Duration
	latencies        []time.Duration
}

func (r *loadResult) add(o loadResult) {
	r.requests += o.requests
	r.errors += o.errors
	r.elapsed += o.elapsed
	r.latencies = append(r.latencies, o.latencies...)
}

func (r *loadResult) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }

func (r *loadResult) pct(p int) time.Duration {
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, len(s)*p/100)].Round(10 * time.Microsecond)
}

// load sends GET url from workers keep-alive clients for d.
func load(url, host string, workers int, d time.Duration) loadResult {
	tr := &http.Transport{MaxIdleConnsPerHost: workers, DialContext: (&net.Dialer{}).DialContext}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	var mu sync.Mutex
	var out loadResult
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var mine []time.Duration
			errs := 0
			for time.Since(start) < d {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				if host != "" {
					req.Host = host
				}
				t0 := time.Now()
				resp, err := c.Do(req)
				if err != nil {
					errs++
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs++
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			out.latencies = append(out.latencies, mine...)
			out.errors += errs
			mu.Unlock()
		})
	}
	wg.Wait()
	out.elapsed = time.Since(start)
	out.requests = len(out.latencies)
	return out
}
