package logrotate

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Runtime is the part of the CRI the manager uses.
type Runtime interface {
	ListContainers(ctx context.Context, in *runtimeapi.ListContainersRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error)
	ContainerStatus(ctx context.Context, in *runtimeapi.ContainerStatusRequest, opts ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error)
	ReopenContainerLog(ctx context.Context, in *runtimeapi.ReopenContainerLogRequest, opts ...grpc.CallOption) (*runtimeapi.ReopenContainerLogResponse, error)
}

// Manager rotates the logs of a node's running containers.
type Manager struct {
	Runtime Runtime
	Policy  Policy
	Log     *slog.Logger
	// Interval between passes (10 s).
	Interval time.Duration
}

// Run rotates every Interval until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	if m.Interval == 0 {
		m.Interval = 10 * time.Second
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := m.RotateLogs(ctx); err != nil && ctx.Err() == nil {
			m.log().Warn("rotate container logs", "err", err)
		}
	}, m.Interval)
}

// RotateLogs is one pass over the running containers.
func (m *Manager) RotateLogs(ctx context.Context) error {
	resp, err := m.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
	}})
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	var errs []error
	for _, c := range resp.Containers {
		st, err := m.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.Id})
		if err != nil || st.Status == nil || st.Status.LogPath == "" {
			continue
		}
		if err := m.rotate(ctx, c.Id, st.Status.LogPath); err != nil {
			errs = append(errs, fmt.Errorf("container %s: %w", c.Id, err))
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) rotate(ctx context.Context, id, log string) error {
	info, err := os.Stat(log)
	if err != nil {
		// Not written yet, or being reopened.
		return nil
	}
	rotated, err := filepath.Glob(log + ".*")
	if err != nil {
		return err
	}
	a := Plan(m.Policy, log, info.Size(), rotated, time.Now())
	for _, f := range a.Remove {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	for _, f := range a.Compress {
		if err := compress(f); err != nil {
			return fmt.Errorf("compress %s: %w", f, err)
		}
	}
	if a.Rotate == "" {
		return nil
	}
	if err := os.Rename(log, a.Rotate); err != nil {
		return fmt.Errorf("rename %s: %w", log, err)
	}
	if _, err := m.Runtime.ReopenContainerLog(ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: id}); err != nil {
		// Put the log back, as upstream, so that the container's output
		// is not lost to a file nobody reads.
		if rerr := os.Rename(a.Rotate, log); rerr != nil {
			m.log().Error("restore container log after failed reopen", "log", log, "err", rerr)
		}
		return fmt.Errorf("reopen log: %w", err)
	}
	m.log().Debug("rotated container log", "container", id, "log", log, "to", a.Rotate)
	return nil
}

// compress gzips a file through a temporary one and removes the
// original, as upstream's compressLog.
func compress(path string) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := path + compressSuffix + tmpSuffix
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := gzip.NewWriter(out)
	if _, err := io.Copy(w, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := w.Close(); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path+compressSuffix); err != nil {
		return err
	}
	return os.Remove(path)
}

func (m *Manager) log() *slog.Logger {
	if m.Log == nil {
		return slog.Default()
	}
	return m.Log
}
