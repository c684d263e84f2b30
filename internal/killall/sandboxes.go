package killall

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// sandboxRuntime is the part of the CRI that removing sandboxes uses.
type sandboxRuntime interface {
	ListPodSandbox(ctx context.Context, in *runtimeapi.ListPodSandboxRequest, opts ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error)
	StopPodSandbox(ctx context.Context, in *runtimeapi.StopPodSandboxRequest, opts ...grpc.CallOption) (*runtimeapi.StopPodSandboxResponse, error)
	RemovePodSandbox(ctx context.Context, in *runtimeapi.RemovePodSandboxRequest, opts ...grpc.CallOption) (*runtimeapi.RemovePodSandboxResponse, error)
}

// removeSandboxes stops and removes every pod sandbox of a runtime, which
// stops their containers and has the runtime tear down their networking
// through CNI (veths, addresses, port mappings, network namespaces), the
// part that killing processes would leave behind. It returns how many went.
func removeSandboxes(ctx context.Context, rt sandboxRuntime) (int, error) {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	list, err := rt.ListPodSandbox(lctx, &runtimeapi.ListPodSandboxRequest{})
	cancel()
	if err != nil {
		return 0, fmt.Errorf("killall: list pod sandboxes: %w", err)
	}
	var errs []error
	n := 0
	for _, sb := range list.Items {
		// One stuck sandbox must not keep the others: the processes are
		// killed afterwards anyway.
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := rt.StopPodSandbox(sctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id})
		if err == nil {
			_, err = rt.RemovePodSandbox(sctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id})
		}
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("killall: remove pod sandbox %s (%s/%s): %w", short(sb.Id), sb.GetMetadata().GetNamespace(), sb.GetMetadata().GetName(), err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
