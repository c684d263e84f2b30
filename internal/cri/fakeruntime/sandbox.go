package fakeruntime

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

type sandbox struct {
	id        string
	name      string
	config    *runtimeapi.PodSandboxConfig
	handler   string
	state     runtimeapi.PodSandboxState
	createdAt int64
	ips       []string
	stats     *runtimeapi.PodSandboxStats
}

// sandboxName is containerd's reserved name of a sandbox: one per pod
// and attempt.
func sandboxName(m *runtimeapi.PodSandboxMetadata) string {
	return strings.Join([]string{"k8s", "POD", m.GetName(), m.GetNamespace(), m.GetUid(), fmt.Sprint(m.GetAttempt())}, "_")
}

func hostNetwork(cfg *runtimeapi.PodSandboxConfig) bool {
	return cfg.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE
}

// RunPodSandbox creates a ready sandbox. A second sandbox with the same
// metadata (name, namespace, UID, attempt) is refused while the first
// exists, as containerd refuses it.
func (r *Runtime) RunPodSandbox(_ context.Context, in *runtimeapi.RunPodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.RunPodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("RunPodSandbox", in)
	cfg := in.GetConfig()
	if cfg.GetMetadata() == nil {
		return nil, fmt.Errorf("sandbox config must include metadata")
	}
	id := newID()
	name := sandboxName(cfg.Metadata)
	if err := r.reserve("sandbox", name, id); err != nil {
		return nil, err
	}
	var ips []string
	if !hostNetwork(cfg) {
		var err error
		if ips, err = r.allocate(cfg); err != nil {
			delete(r.names, name)
			return nil, fmt.Errorf("failed to setup network for sandbox %q: %w", id, err)
		}
	}
	r.sandboxes[id] = &sandbox{
		id: id, name: name, config: proto.Clone(cfg).(*runtimeapi.PodSandboxConfig), handler: in.RuntimeHandler,
		state: runtimeapi.PodSandboxState_SANDBOX_READY, createdAt: r.now(), ips: ips,
	}
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, nil
}

// StopPodSandbox stops the sandbox and every container in it.
func (r *Runtime) StopPodSandbox(_ context.Context, in *runtimeapi.StopPodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.StopPodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("StopPodSandbox", in)
	sb, ok := r.sandboxes[in.PodSandboxId]
	if !ok {
		return nil, notFound("sandbox", in.PodSandboxId)
	}
	for _, c := range r.containers {
		if c.sandboxID == sb.id {
			r.stop(c, r.stopCode)
		}
	}
	sb.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// RemovePodSandbox removes the sandbox and its containers, running or
// not; an unknown sandbox is already removed.
func (r *Runtime) RemovePodSandbox(_ context.Context, in *runtimeapi.RemovePodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.RemovePodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("RemovePodSandbox", in)
	sb, ok := r.sandboxes[in.PodSandboxId]
	if !ok {
		return &runtimeapi.RemovePodSandboxResponse{}, nil
	}
	for id, c := range r.containers {
		if c.sandboxID == sb.id {
			delete(r.names, c.name)
			delete(r.containers, id)
		}
	}
	delete(r.names, sb.name)
	delete(r.sandboxes, sb.id)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

// PodSandboxStatus reports one sandbox, with its addresses.
func (r *Runtime) PodSandboxStatus(_ context.Context, in *runtimeapi.PodSandboxStatusRequest, _ ...grpc.CallOption) (*runtimeapi.PodSandboxStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("PodSandboxStatus", in)
	sb, ok := r.sandboxes[in.PodSandboxId]
	if !ok {
		return nil, notFound("sandbox", in.PodSandboxId)
	}
	st := &runtimeapi.PodSandboxStatus{
		Id: sb.id, Metadata: sb.config.Metadata, State: sb.state, CreatedAt: sb.createdAt,
		Linux:          &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: sb.config.GetLinux().GetSecurityContext().GetNamespaceOptions()}},
		Labels:         maps.Clone(sb.config.Labels),
		Annotations:    maps.Clone(sb.config.Annotations),
		RuntimeHandler: sb.handler,
		Network:        &runtimeapi.PodSandboxNetworkStatus{},
	}
	if len(sb.ips) > 0 {
		st.Network.Ip = sb.ips[0]
		for _, ip := range sb.ips[1:] {
			st.Network.AdditionalIps = append(st.Network.AdditionalIps, &runtimeapi.PodIP{Ip: ip})
		}
	}
	return &runtimeapi.PodSandboxStatusResponse{Status: proto.Clone(st).(*runtimeapi.PodSandboxStatus)}, nil
}

// ListPodSandbox lists the sandboxes the filter selects: by ID (or a
// prefix of one), state and labels.
func (r *Runtime) ListPodSandbox(_ context.Context, in *runtimeapi.ListPodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("ListPodSandbox", in)
	f := in.GetFilter()
	out := &runtimeapi.ListPodSandboxResponse{}
	for _, sb := range r.sandboxes {
		if !r.sandboxSelected(sb, f.GetId(), f.GetLabelSelector()) {
			continue
		}
		if f.GetState() != nil && f.State.State != sb.state {
			continue
		}
		out.Items = append(out.Items, &runtimeapi.PodSandbox{
			Id: sb.id, Metadata: proto.Clone(sb.config.Metadata).(*runtimeapi.PodSandboxMetadata), State: sb.state, CreatedAt: sb.createdAt,
			Labels: maps.Clone(sb.config.Labels), Annotations: maps.Clone(sb.config.Annotations), RuntimeHandler: sb.handler,
		})
	}
	return out, nil
}

func (r *Runtime) sandboxSelected(sb *sandbox, id string, labels map[string]string) bool {
	return strings.HasPrefix(sb.id, id) && matches(sb.config.Labels, labels)
}

// KillSandbox makes a sandbox not ready, as when its pause process dies
// or its network goes away; its containers are left as they are.
func (r *Runtime) KillSandbox(id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb, ok := r.sandboxes[id]
	if !ok {
		return notFound("sandbox", id)
	}
	sb.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	return nil
}
