package fakeruntime

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

type container struct {
	id, name   string
	sandboxID  string
	config     *runtimeapi.ContainerConfig
	imageID    string
	imageName  string
	logPath    string
	state      runtimeapi.ContainerState
	createdAt  int64
	startedAt  int64
	finishedAt int64
	exitCode   int32
	reason     string
	message    string
	resources  *runtimeapi.LinuxContainerResources
	stats      *runtimeapi.ContainerStats
}

// containerName is containerd's reserved name of a container: one per
// container name, sandbox and attempt.
func containerName(c *runtimeapi.ContainerMetadata, sb *runtimeapi.PodSandboxMetadata) string {
	return strings.Join([]string{"k8s", c.GetName(), sb.GetName(), sb.GetNamespace(), sb.GetUid(), fmt.Sprint(c.GetAttempt())}, "_")
}

// CreateContainer creates a container in a ready sandbox from an image
// the runtime holds.
func (r *Runtime) CreateContainer(_ context.Context, in *runtimeapi.CreateContainerRequest, _ ...grpc.CallOption) (*runtimeapi.CreateContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("CreateContainer", in)
	sb, ok := r.sandboxes[in.PodSandboxId]
	if !ok {
		return nil, notFound("sandbox", in.PodSandboxId)
	}
	if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, fmt.Errorf("sandbox container %q is not running", sb.id)
	}
	cfg := in.GetConfig()
	if cfg.GetMetadata() == nil {
		return nil, fmt.Errorf("container config must include metadata")
	}
	img := r.findImage(cfg.GetImage().GetImage())
	if img == nil {
		return nil, status.Errorf(codes.NotFound, "failed to resolve image %q: not found", cfg.GetImage().GetImage())
	}
	id := newID()
	name := containerName(cfg.Metadata, sb.config.Metadata)
	if err := r.reserve("container", name, id); err != nil {
		return nil, err
	}
	c := &container{
		id: id, name: name, sandboxID: sb.id, config: proto.Clone(cfg).(*runtimeapi.ContainerConfig),
		imageID: img.id, imageName: cfg.GetImage().GetUserSpecifiedImage(),
		state: runtimeapi.ContainerState_CONTAINER_CREATED, createdAt: r.now(),
	}
	if c.imageName == "" && len(img.tags) > 0 {
		c.imageName = img.tags[0]
	}
	if cfg.LogPath != "" {
		c.logPath = filepath.Join(sb.config.LogDirectory, cfg.LogPath)
	}
	if res := cfg.GetLinux().GetResources(); res != nil {
		c.resources = proto.Clone(res).(*runtimeapi.LinuxContainerResources)
	}
	r.containers[id] = c
	return &runtimeapi.CreateContainerResponse{ContainerId: id}, nil
}

// StartContainer starts a created container.
func (r *Runtime) StartContainer(_ context.Context, in *runtimeapi.StartContainerRequest, _ ...grpc.CallOption) (*runtimeapi.StartContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("StartContainer", in)
	c, ok := r.containers[in.ContainerId]
	if !ok {
		return nil, notFound("container", in.ContainerId)
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, fmt.Errorf("container is in %s state", c.state)
	}
	if sb := r.sandboxes[c.sandboxID]; sb == nil || sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, fmt.Errorf("sandbox container %q is not running", c.sandboxID)
	}
	c.state = runtimeapi.ContainerState_CONTAINER_RUNNING
	c.startedAt = r.now()
	return &runtimeapi.StartContainerResponse{}, nil
}

// StopContainer stops a running container at once: it exits with the
// runtime's stop exit code. Containers that are not running are left
// alone, as containerd leaves them.
func (r *Runtime) StopContainer(_ context.Context, in *runtimeapi.StopContainerRequest, _ ...grpc.CallOption) (*runtimeapi.StopContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("StopContainer", in)
	c, ok := r.containers[in.ContainerId]
	if !ok {
		return nil, notFound("container", in.ContainerId)
	}
	r.stop(c, r.stopCode)
	return &runtimeapi.StopContainerResponse{}, nil
}

// stop ends a running container with code; r.mu is held.
func (r *Runtime) stop(c *container, code int32) {
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	r.exit(c, code, "", "")
}

// exit ends a container; an empty reason is containerd's: Completed for
// code 0, Error otherwise. r.mu is held.
func (r *Runtime) exit(c *container, code int32, reason, message string) {
	if reason == "" {
		reason = "Error"
		if code == 0 {
			reason = "Completed"
		}
	}
	c.state = runtimeapi.ContainerState_CONTAINER_EXITED
	c.finishedAt = r.now()
	c.exitCode, c.reason, c.message = code, reason, message
}

// RemoveContainer removes a container, stopping it first if it runs; an
// unknown container is already removed.
func (r *Runtime) RemoveContainer(_ context.Context, in *runtimeapi.RemoveContainerRequest, _ ...grpc.CallOption) (*runtimeapi.RemoveContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("RemoveContainer", in)
	if c, ok := r.containers[in.ContainerId]; ok {
		delete(r.names, c.name)
		delete(r.containers, c.id)
	}
	return &runtimeapi.RemoveContainerResponse{}, nil
}

// ContainerStatus reports one container: state, times, exit code and
// reason, image, log path and resources.
func (r *Runtime) ContainerStatus(_ context.Context, in *runtimeapi.ContainerStatusRequest, _ ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("ContainerStatus", in)
	c, ok := r.containers[in.ContainerId]
	if !ok {
		return nil, notFound("container", in.ContainerId)
	}
	st := &runtimeapi.ContainerStatus{
		Id: c.id, Metadata: c.config.Metadata, State: c.state,
		CreatedAt: c.createdAt, StartedAt: c.startedAt, FinishedAt: c.finishedAt,
		ExitCode: c.exitCode, Reason: c.reason, Message: c.message,
		Image: &runtimeapi.ImageSpec{Image: c.imageName}, ImageRef: c.imageID, ImageId: c.imageID,
		Labels: maps.Clone(c.config.Labels), Annotations: maps.Clone(c.config.Annotations),
		Mounts: c.config.Mounts, LogPath: c.logPath,
	}
	if c.resources != nil {
		st.Resources = &runtimeapi.ContainerResources{Linux: c.resources}
	}
	return &runtimeapi.ContainerStatusResponse{Status: proto.Clone(st).(*runtimeapi.ContainerStatus)}, nil
}

// ListContainers lists the containers the filter selects: by ID (or a
// prefix of one), sandbox, state and labels.
func (r *Runtime) ListContainers(_ context.Context, in *runtimeapi.ListContainersRequest, _ ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("ListContainers", in)
	f := in.GetFilter()
	out := &runtimeapi.ListContainersResponse{}
	for _, c := range r.containers {
		if !r.containerSelected(c, f.GetId(), f.GetPodSandboxId(), f.GetLabelSelector()) {
			continue
		}
		if f.GetState() != nil && f.State.State != c.state {
			continue
		}
		out.Containers = append(out.Containers, &runtimeapi.Container{
			Id: c.id, PodSandboxId: c.sandboxID, Metadata: proto.Clone(c.config.Metadata).(*runtimeapi.ContainerMetadata),
			Image: &runtimeapi.ImageSpec{Image: c.imageID}, ImageRef: c.imageID, ImageId: c.imageID,
			State: c.state, CreatedAt: c.createdAt,
			Labels: maps.Clone(c.config.Labels), Annotations: maps.Clone(c.config.Annotations),
		})
	}
	return out, nil
}

func (r *Runtime) containerSelected(c *container, id, sandboxID string, labels map[string]string) bool {
	return strings.HasPrefix(c.id, id) && (sandboxID == "" || strings.HasPrefix(c.sandboxID, sandboxID)) && matches(c.config.Labels, labels)
}

// UpdateContainerResources changes what a created or running container
// may use; ContainerStatus reports it from then on.
func (r *Runtime) UpdateContainerResources(_ context.Context, in *runtimeapi.UpdateContainerResourcesRequest, _ ...grpc.CallOption) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("UpdateContainerResources", in)
	c, ok := r.containers[in.ContainerId]
	if !ok {
		return nil, notFound("container", in.ContainerId)
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_CREATED && c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, fmt.Errorf("container %q is in %s state", c.id, c.state)
	}
	if in.Linux != nil {
		c.resources = proto.Clone(in.Linux).(*runtimeapi.LinuxContainerResources)
	}
	return &runtimeapi.UpdateContainerResourcesResponse{}, nil
}

// Exit ends a running container as if its process exited with code; an
// empty reason is the runtime's own (Completed or Error), "OOMKilled"
// says the kernel killed it.
func (r *Runtime) Exit(id string, code int32, reason, message string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[id]
	if !ok {
		return notFound("container", id)
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return fmt.Errorf("container %q is in %s state", id, c.state)
	}
	r.exit(c, code, reason, message)
	return nil
}
