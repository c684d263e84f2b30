package fakeruntime

import (
	"context"
	"maps"
	"sort"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// SetContainerStats sets what the stats calls report for a container
// (its attributes and timestamps are filled in); until set, a container
// reports zero use.
func (r *Runtime) SetContainerStats(id string, s *runtimeapi.ContainerStats) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[id]
	if !ok {
		return notFound("container", id)
	}
	c.stats = proto.Clone(s).(*runtimeapi.ContainerStats)
	return nil
}

// SetPodSandboxStats sets what the stats calls report for a sandbox.
func (r *Runtime) SetPodSandboxStats(id string, s *runtimeapi.PodSandboxStats) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb, ok := r.sandboxes[id]
	if !ok {
		return notFound("sandbox", id)
	}
	sb.stats = proto.Clone(s).(*runtimeapi.PodSandboxStats)
	return nil
}

// containerStats is c's stats as reported; r.mu is held.
func (r *Runtime) containerStats(c *container) *runtimeapi.ContainerStats {
	s := &runtimeapi.ContainerStats{}
	if c.stats != nil {
		s = proto.Clone(c.stats).(*runtimeapi.ContainerStats)
	}
	s.Attributes = &runtimeapi.ContainerAttributes{
		Id: c.id, Metadata: c.config.Metadata, Labels: maps.Clone(c.config.Labels), Annotations: maps.Clone(c.config.Annotations),
	}
	now := r.now()
	if s.Cpu == nil {
		s.Cpu = &runtimeapi.CpuUsage{UsageCoreNanoSeconds: &runtimeapi.UInt64Value{}, UsageNanoCores: &runtimeapi.UInt64Value{}}
	}
	if s.Memory == nil {
		s.Memory = &runtimeapi.MemoryUsage{WorkingSetBytes: &runtimeapi.UInt64Value{}, UsageBytes: &runtimeapi.UInt64Value{}}
	}
	s.Cpu.Timestamp, s.Memory.Timestamp = now, now
	return s
}

// sandboxStats is sb's stats as reported; r.mu is held.
func (r *Runtime) sandboxStats(sb *sandbox) *runtimeapi.PodSandboxStats {
	s := &runtimeapi.PodSandboxStats{}
	if sb.stats != nil {
		s = proto.Clone(sb.stats).(*runtimeapi.PodSandboxStats)
	}
	s.Attributes = &runtimeapi.PodSandboxAttributes{
		Id: sb.id, Metadata: sb.config.Metadata, Labels: maps.Clone(sb.config.Labels), Annotations: maps.Clone(sb.config.Annotations),
	}
	if s.Linux == nil {
		s.Linux = &runtimeapi.LinuxPodSandboxStats{}
	}
	if len(s.Linux.Containers) == 0 {
		for _, c := range r.sortedContainers() {
			if c.sandboxID == sb.id && c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
				s.Linux.Containers = append(s.Linux.Containers, r.containerStats(c))
			}
		}
	}
	return s
}

func (r *Runtime) sortedContainers() []*container {
	out := make([]*container, 0, len(r.containers))
	for _, c := range r.containers {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].createdAt < out[j].createdAt || (out[i].createdAt == out[j].createdAt && out[i].id < out[j].id)
	})
	return out
}

// ContainerStats reports one container's use.
func (r *Runtime) ContainerStats(_ context.Context, in *runtimeapi.ContainerStatsRequest, _ ...grpc.CallOption) (*runtimeapi.ContainerStatsResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("ContainerStats", in)
	c, ok := r.containers[in.ContainerId]
	if !ok {
		return nil, notFound("container", in.ContainerId)
	}
	return &runtimeapi.ContainerStatsResponse{Stats: r.containerStats(c)}, nil
}

// ListContainerStats reports the use of the running containers the
// filter selects.
func (r *Runtime) ListContainerStats(_ context.Context, in *runtimeapi.ListContainerStatsRequest, _ ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("ListContainerStats", in)
	f := in.GetFilter()
	out := &runtimeapi.ListContainerStatsResponse{}
	for _, c := range r.sortedContainers() {
		if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING && r.containerSelected(c, f.GetId(), f.GetPodSandboxId(), f.GetLabelSelector()) {
			out.Stats = append(out.Stats, r.containerStats(c))
		}
	}
	return out, nil
}

// PodSandboxStats reports one sandbox's use.
func (r *Runtime) PodSandboxStats(_ context.Context, in *runtimeapi.PodSandboxStatsRequest, _ ...grpc.CallOption) (*runtimeapi.PodSandboxStatsResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("PodSandboxStats", in)
	sb, ok := r.sandboxes[in.PodSandboxId]
	if !ok {
		return nil, notFound("sandbox", in.PodSandboxId)
	}
	return &runtimeapi.PodSandboxStatsResponse{Stats: r.sandboxStats(sb)}, nil
}

// ListPodSandboxStats reports the use of the ready sandboxes the filter
// selects.
func (r *Runtime) ListPodSandboxStats(_ context.Context, in *runtimeapi.ListPodSandboxStatsRequest, _ ...grpc.CallOption) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("ListPodSandboxStats", in)
	f := in.GetFilter()
	out := &runtimeapi.ListPodSandboxStatsResponse{}
	ids := make([]string, 0, len(r.sandboxes))
	for id := range r.sandboxes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		sb := r.sandboxes[id]
		if sb.state == runtimeapi.PodSandboxState_SANDBOX_READY && r.sandboxSelected(sb, f.GetId(), f.GetLabelSelector()) {
			out.Stats = append(out.Stats, r.sandboxStats(sb))
		}
	}
	return out, nil
}
