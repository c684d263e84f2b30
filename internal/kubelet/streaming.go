package kubelet

import (
	"context"
	"fmt"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/kubelet/server"
)

// Streaming adapts the kubelet to the streaming server: it resolves pods
// and containers by name to runtime instances and passes calls through.
type Streaming struct{ K *Kubelet }

var _ server.Runtime = Streaming{}

func (s Streaming) find(namespace, name string) *v1.Pod {
	var found *v1.Pod
	for _, p := range s.K.Pods() {
		if p.Namespace == namespace && p.Name == name {
			// Of two pods with one name (one terminating), the newer.
			if found == nil || p.CreationTimestamp.After(found.CreationTimestamp.Time) {
				found = p
			}
		}
	}
	return found
}

// Container implements server.Runtime.
func (s Streaming) Container(ctx context.Context, namespace, pod, name string, previous bool) (server.ContainerRef, error) {
	p := s.find(namespace, pod)
	if p == nil {
		return server.ContainerRef{}, fmt.Errorf("pod %s/%s: %w", namespace, pod, server.ErrNotFound)
	}
	spec := findContainer(p, name)
	if spec == nil {
		return server.ContainerRef{}, fmt.Errorf("container %q in pod %s/%s: %w", name, namespace, pod, server.ErrNotFound)
	}
	runs := s.K.state.get(p.UID).byName()[name]
	idx := 0
	if previous {
		idx = 1
	}
	if len(runs) <= idx {
		what := "container"
		if previous {
			what = "previous terminated container"
		}
		return server.ContainerRef{}, fmt.Errorf("%s %q in pod %q: %w", what, name, pod, server.ErrNotFound)
	}
	r := runs[idx]
	logPath := r.LogPath
	if logPath != "" && !filepath.IsAbs(logPath) {
		logPath = filepath.Join(s.K.podLogDir(p), logPath)
	}
	return server.ContainerRef{ID: r.ID, LogPath: logPath, TTY: spec.TTY, Stdin: spec.Stdin}, nil
}

// Sandbox implements server.Runtime.
func (s Streaming) Sandbox(ctx context.Context, namespace, pod string) (string, error) {
	p := s.find(namespace, pod)
	if p == nil {
		return "", fmt.Errorf("pod %s/%s: %w", namespace, pod, server.ErrNotFound)
	}
	sb := readySandbox(s.K.state.get(p.UID))
	if sb == nil {
		return "", fmt.Errorf("sandbox of pod %s/%s: %w", namespace, pod, server.ErrNotFound)
	}
	return sb.ID, nil
}

// Running implements server.Runtime.
func (s Streaming) Running(ctx context.Context, id string) (bool, error) {
	st, err := s.K.rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		return false, err
	}
	return st.Status != nil && st.Status.State == runtimeapi.ContainerState_CONTAINER_RUNNING, nil
}

// Exec implements server.Runtime.
func (s Streaming) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return s.K.rt.Exec(ctx, req)
}

// Attach implements server.Runtime.
func (s Streaming) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	return s.K.rt.Attach(ctx, req)
}

// PortForward implements server.Runtime.
func (s Streaming) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return s.K.rt.PortForward(ctx, req)
}
