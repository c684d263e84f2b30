// Package cri connects to a container runtime through the Container Runtime
// Interface over its unix socket. It adds nothing to the generated clients
// but the dial, so the kubelet sees the runtime exactly as CRI defines it.
package cri

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// maxMsgSize matches upstream's kubelet: container lists on a busy node
// exceed gRPC's 4 MiB default.
const maxMsgSize = 16 << 20

// Client is a CRI runtime and image service over one connection.
type Client struct {
	runtimeapi.RuntimeServiceClient
	runtimeapi.ImageServiceClient
	conn *grpc.ClientConn
}

// Dial connects to the runtime's socket. The connection is lazy: a runtime
// that restarts later is reconnected by gRPC without the caller noticing.
func Dial(socket string) (*Client, error) {
	conn, err := grpc.NewClient("passthrough:///"+socket,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", addr)
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)),
	)
	if err != nil {
		return nil, fmt.Errorf("dial CRI socket %s: %w", socket, err)
	}
	return &Client{
		RuntimeServiceClient: runtimeapi.NewRuntimeServiceClient(conn),
		ImageServiceClient:   runtimeapi.NewImageServiceClient(conn),
		conn:                 conn,
	}, nil
}

// Conn is the connection itself, for containerd's own services on the
// same socket.
func (c *Client) Conn() grpc.ClientConnInterface { return c.conn }

// Close releases the connection.
func (c *Client) Close() error { return c.conn.Close() }

// WaitReady polls the runtime's Version until it answers or ctx ends.
func (c *Client) WaitReady(ctx context.Context) (*runtimeapi.VersionResponse, error) {
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		v, err := c.Version(cctx, &runtimeapi.VersionRequest{})
		cancel()
		if err == nil {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for container runtime: %w (last error: %v)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
