package prober

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// serveGRPC runs a gRPC server on loopback and returns its port.
func serveGRPC(t *testing.T, register func(*grpc.Server)) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	register(s)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return l.Addr().(*net.TCPAddr).Port
}

// userAgentHealth records the caller's user agent.
type userAgentHealth struct {
	*health.Server
	seen chan string
}

func (h userAgentHealth) Check(ctx context.Context, r *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	select {
	case h.seen <- strings.Join(md.Get("user-agent"), ","):
	default:
	}
	return h.Server.Check(ctx, r)
}

func TestGRPCProbe(t *testing.T) {
	hs := health.NewServer()
	hs.SetServingStatus("liveness", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("readiness", healthpb.HealthCheckResponse_NOT_SERVING)
	seen := make(chan string, 1)
	port := serveGRPC(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, userAgentHealth{hs, seen}) })
	bare := serveGRPC(t, func(*grpc.Server) {})
	closed := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}()
	addr := func(p int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)) }

	for _, tc := range []struct {
		name    string
		service string
		port    int
		ok      bool
		msg     string
	}{
		{"server as a whole", "", port, true, ""},
		{"serving service", "liveness", port, true, ""},
		{"service not serving", "readiness", port, false, `service unhealthy (responded with "NOT_SERVING")`},
		{"unknown service", "nope", port, false, "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service"},
		{"no health service", "", bare, false, "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): unknown service grpc.health.v1.Health"},
		{"nothing listening", "", closed, false, `timeout: failed to connect service "` + addr(closed) + `" within 1s: context deadline exceeded`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, msg := GRPC(context.Background(), "127.0.0.1", tc.service, tc.port, time.Second)
			if ok != tc.ok || msg != tc.msg {
				t.Errorf("got %v %q, want %v %q", ok, msg, tc.ok, tc.msg)
			}
		})
	}
	if ua := <-seen; !strings.HasPrefix(ua, "kube-probe/1.37") {
		t.Errorf("user agent %q", ua)
	}
}

// Upstream's "should *not* be restarted with a GRPC liveness probe": a
// healthy server keeps the container alive, and readiness follows the
// named service's status.
func TestManagerRunsGRPCProbes(t *testing.T) {
	hs := health.NewServer()
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	port := serveGRPC(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, hs) })
	down := "down"
	grpcProbe := func(service *string) *v1.Probe {
		return &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: int32(port), Service: service}}, PeriodSeconds: 1, TimeoutSeconds: 5, FailureThreshold: 1}
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"},
		Spec: v1.PodSpec{Containers: []v1.Container{
			{Name: "healthy", LivenessProbe: grpcProbe(nil), ReadinessProbe: grpcProbe(nil)},
			{Name: "unhealthy", LivenessProbe: grpcProbe(&down), ReadinessProbe: grpcProbe(&down)},
		}},
	}
	m := NewManager(Config{})
	defer m.Stop()
	m.Update(pod, map[string]string{"healthy": "c1", "unhealthy": "c2"}, "127.0.0.1")
	deadline := time.Now().Add(10 * time.Second)
	for {
		live1, known1, _, _ := m.Result("u", "healthy", Liveness, "c1")
		ready1, rknown1, _, _ := m.Result("u", "healthy", Readiness, "c1")
		live2, known2, _, msg := m.Result("u", "unhealthy", Liveness, "c2")
		ready2, _, _, _ := m.Result("u", "unhealthy", Readiness, "c2")
		if known1 && live1 && rknown1 && ready1 && known2 && !live2 && !ready2 {
			if msg != `service unhealthy (responded with "NOT_SERVING")` {
				t.Errorf("failure message %q", msg)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthy: live %v ready %v; unhealthy: live %v (%q) ready %v", live1, ready1, live2, msg, ready2)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
