package prober

import (
	"context"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CRIExecer is the one CRI call an Exec needs.
type CRIExecer interface {
	ExecSync(ctx context.Context, in *runtimeapi.ExecSyncRequest, opts ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error)
}

// CRIExec runs commands in containers through a CRI runtime, the
// runtime timing the command (whole seconds, as CRI carries them).
type CRIExec struct{ Runtime CRIExecer }

// ExecSync runs cmd and returns its output (stdout, then stderr).
func (e CRIExec) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, int32, error) {
	resp, err := e.Runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: int64(timeout / time.Second)})
	if err != nil {
		return nil, -1, err
	}
	return append(resp.Stdout, resp.Stderr...), resp.ExitCode, nil
}
