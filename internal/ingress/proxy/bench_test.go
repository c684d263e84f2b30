package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	networkingv1 "k8s.io/api/networking/v1"
)

// BenchmarkProxy is a request through the handler next to the same
// request straight to the backend, over keep-alive connections from
// parallel clients: the ingress's own cost per request, without a
// cluster (make bench-ingress measures it on a node).
func BenchmarkProxy(b *testing.B) {
	port := backend(b, "web")
	h := New(nil)
	if err := h.Register(prometheus.NewRegistry()); err != nil {
		b.Fatal(err)
	}
	h.Set(table(b, []*networkingv1.Ingress{ingress([]networkingv1.IngressRule{rule("shop.example", "/", "web")}, nil)}, nil,
		service("web", port)))
	front := httptest.NewServer(h)
	defer front.Close()
	run := func(b *testing.B, url string) {
		tr := &http.Transport{MaxIdleConnsPerHost: 64}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Host = "shop.example"
				resp, err := c.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	b.Run("ingress", func(b *testing.B) { run(b, front.URL+"/") })
	b.Run("direct", func(b *testing.B) { run(b, "http://127.0.0.1:"+strconv.Itoa(int(port))+"/") })
}
