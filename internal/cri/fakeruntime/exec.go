package fakeruntime

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ExecSync runs a command in a running container through the exec
// handler, within the request's timeout (seconds; none when 0) as the
// runtime enforces it.
func (r *Runtime) ExecSync(ctx context.Context, in *runtimeapi.ExecSyncRequest, _ ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error) {
	r.mu.Lock()
	r.record("ExecSync", in)
	c, ok := r.containers[in.ContainerId]
	var state runtimeapi.ContainerState
	if ok {
		state = c.state
	}
	h := r.exec
	r.mu.Unlock()
	if !ok {
		return nil, notFound("container", in.ContainerId)
	}
	if state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, fmt.Errorf("container is in %s state", state)
	}
	if in.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(in.Timeout)*time.Second)
		defer cancel()
	}
	stdout, stderr, code, err := h(ctx, in.ContainerId, in.Cmd)
	// A command that outran its timeout is reported as containerd does,
	// whatever the handler made of its ended context.
	if ctx.Err() == context.DeadlineExceeded && in.Timeout > 0 {
		return nil, status.Errorf(codes.DeadlineExceeded, "timeout %s exceeded", time.Duration(in.Timeout)*time.Second)
	}
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ExecSyncResponse{Stdout: stdout, Stderr: stderr, ExitCode: code}, nil
}

// unstreamable is the answer of the streaming calls: the fake has no
// streaming server to hand a URL of.
func unstreamable(method string) error {
	return status.Errorf(codes.Unimplemented, "%s: the fake runtime has no streaming server", method)
}

// Exec is refused: there is no streaming server.
func (r *Runtime) Exec(_ context.Context, in *runtimeapi.ExecRequest, _ ...grpc.CallOption) (*runtimeapi.ExecResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("Exec", in)
	return nil, unstreamable("Exec")
}

// Attach is refused: there is no streaming server.
func (r *Runtime) Attach(_ context.Context, in *runtimeapi.AttachRequest, _ ...grpc.CallOption) (*runtimeapi.AttachResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("Attach", in)
	return nil, unstreamable("Attach")
}

// PortForward is refused: there is no streaming server.
func (r *Runtime) PortForward(_ context.Context, in *runtimeapi.PortForwardRequest, _ ...grpc.CallOption) (*runtimeapi.PortForwardResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("PortForward", in)
	return nil, unstreamable("PortForward")
}

// ReopenContainerLog succeeds for a running container, whose log the
// runtime would reopen after a rotation.
func (r *Runtime) ReopenContainerLog(_ context.Context, in *runtimeapi.ReopenContainerLogRequest, _ ...grpc.CallOption) (*runtimeapi.ReopenContainerLogResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("ReopenContainerLog", in)
	c, ok := r.containers[in.ContainerId]
	if !ok {
		return nil, notFound("container", in.ContainerId)
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, fmt.Errorf("container is not running")
	}
	return &runtimeapi.ReopenContainerLogResponse{}, nil
}
