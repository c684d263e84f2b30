package healthcheck

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

func TestServersAnswerPerLocalEndpoints(t *testing.T) {
	addrs := map[int32]string{}
	var healthy atomic.Bool
	healthy.Store(true)
	s := &Servers{Healthy: healthy.Load, Listen: func(port int32) (net.Listener, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			addrs[port] = ln.Addr().String()
		}
		return ln, err
	}}
	defer s.Close()
	get := func(port int32) (int, string, string) {
		t.Helper()
		resp, err := http.Get("http://" + addrs[port] + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("X-Load-Balancing-Endpoint-Weight")
	}

	s.Sync(map[int32]Service{31000: {Namespace: "ns", Name: "web", LocalEndpoints: 2}, 31001: {Namespace: "ns", Name: "api"}})
	code, body, weight := get(31000)
	want := "{\n\t\"service\": {\n\t\t\"namespace\": \"ns\",\n\t\t\"name\": \"web\"\n\t},\n\t\"localEndpoints\": 2,\n\t\"serviceProxyHealthy\": true\n}"
	if code != 200 || body != want || weight != "2" {
		t.Errorf("with local endpoints: %d %q weight %s", code, body, weight)
	}
	if code, _, _ := get(31001); code != 503 {
		t.Errorf("without local endpoints: %d, want 503", code)
	}

	// Counts change in place; a port no longer wanted closes.
	first := addrs[31000]
	s.Sync(map[int32]Service{31000: {Namespace: "ns", Name: "web"}})
	if addrs[31000] != first {
		t.Fatal("port reopened for a count change")
	}
	if code, _, _ := get(31000); code != 503 {
		t.Errorf("after the local endpoints went: %d, want 503", code)
	}
	if _, err := http.Get("http://" + addrs[31001] + "/"); err == nil {
		t.Error("removed port still answers")
	}

	healthy.Store(false)
	s.Sync(map[int32]Service{31000: {Namespace: "ns", Name: "web", LocalEndpoints: 1}})
	if code, _, _ := get(31000); code != 503 {
		t.Errorf("proxy unhealthy: %d, want 503", code)
	}
}
