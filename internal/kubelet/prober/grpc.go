package prober

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// GRPC performs a gRPC probe: the standard health check
// (grpc.health.v1.Health/Check) for service on host:port, over plain
// text, with upstream's messages. Only SERVING succeeds.
func GRPC(ctx context.Context, host, service string, port int, timeout time.Duration) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	// passthrough: the address is an IP and port, never a name to
	// resolve, as with upstream's dialer.
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent(userAgent))
	if err != nil {
		return false, fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err)
	}
	defer conn.Close()
	// Connect first and wait for it, as upstream's blocking dial does, so
	// that a server that is not up yet reads as a connection timeout.
	conn.Connect()
	for s := conn.GetState(); s != connectivity.Ready; s = conn.GetState() {
		if !conn.WaitForStateChange(ctx, s) {
			return false, fmt.Sprintf("timeout: failed to connect service %q within %v: %+v", addr, timeout, ctx.Err())
		}
	}
	resp, err := healthpb.NewHealthClient(conn).Check(metadata.NewOutgoingContext(ctx, metadata.MD{}), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		if st, ok := status.FromError(err); ok {
			switch st.Code() {
			case codes.Unimplemented:
				return false, fmt.Sprintf("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", st.Message())
			case codes.DeadlineExceeded:
				return false, fmt.Sprintf("timeout: health rpc did not complete within %v", timeout)
			}
		}
		return false, fmt.Sprintf("error: health rpc probe failed: %+v", err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return false, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String())
	}
	return true, ""
}
