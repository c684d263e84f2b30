// Package fakeruntime is an in-memory container runtime that answers the
// CRI calls the kubelet makes with the semantics containerd gives them:
// sandboxes that are ready until stopped and hold their name until
// removed, containers that go from created to running to exited, images
// that must be present (or pullable) before a container is created from
// them, NotFound for unknown IDs. Nothing runs: a test says when a
// container exits, with which code and reason, what an exec returns, which
// address a sandbox gets and what the stats read. It lets the kubelet and
// its parts be tested in milliseconds without root, and is safe for
// concurrent use as the kubelet's workers use it.
package fakeruntime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// Name and Version are what the fake reports as its runtime.
const (
	Name    = "fake"
	Version = "0.1.0"
)

// ExecHandler answers ExecSync for a container: the kubelet's exec probes
// and lifecycle hooks go through it.
type ExecHandler func(ctx context.Context, containerID string, cmd []string) (stdout, stderr []byte, exitCode int32, err error)

// IPAllocator gives a new sandbox on the pod network its addresses, the
// first being the pod's IP. An error fails RunPodSandbox as a failed CNI
// ADD does.
type IPAllocator func(cfg *runtimeapi.PodSandboxConfig) ([]string, error)

// Call is one CRI call the runtime received, in order.
type Call struct {
	Method  string
	Request any
}

// Runtime is the in-memory runtime. The zero value is not usable; New
// makes one.
type Runtime struct {
	clock    clock.PassiveClock
	allocate IPAllocator
	stopCode int32

	mu         sync.Mutex
	sandboxes  map[string]*sandbox
	containers map[string]*container
	// names are the reserved sandbox and container names, as containerd
	// keeps them until the object is removed.
	names    map[string]string
	images   map[string]*image // by ID
	registry map[string]uint64 // pullable references and their sizes
	exec     ExecHandler
	fsInfo   *runtimeapi.ImageFsInfoResponse
	calls    []Call
	nextIP   int
	// network is the NetworkReady condition when the network is not
	// ready (a node whose CNI configuration is missing).
	network *runtimeapi.RuntimeCondition
}

// Option configures a Runtime.
type Option func(*Runtime)

// WithClock sets the clock that stamps creation, start and finish times.
func WithClock(c clock.PassiveClock) Option { return func(r *Runtime) { r.clock = c } }

// WithIPAllocator sets how sandboxes get their addresses; by default they
// get 10.88.0.2, 10.88.0.3, ... in order.
func WithIPAllocator(a IPAllocator) Option { return func(r *Runtime) { r.allocate = a } }

// WithStopExitCode sets the exit code of a container stopped by
// StopContainer (137 by default: killed, as a process that ignores SIGTERM).
func WithStopExitCode(code int32) Option { return func(r *Runtime) { r.stopCode = code } }

// New returns an empty runtime.
func New(opts ...Option) *Runtime {
	r := &Runtime{
		clock:      clock.RealClock{},
		stopCode:   137,
		sandboxes:  map[string]*sandbox{},
		containers: map[string]*container{},
		names:      map[string]string{},
		images:     map[string]*image{},
		registry:   map[string]uint64{},
		exec: func(context.Context, string, []string) ([]byte, []byte, int32, error) {
			return nil, nil, 0, nil
		},
	}
	r.allocate = r.sequentialIPs
	for _, o := range opts {
		o(r)
	}
	return r
}

func (r *Runtime) sequentialIPs(*runtimeapi.PodSandboxConfig) ([]string, error) {
	r.nextIP++
	n := r.nextIP + 1
	return []string{fmt.Sprintf("10.88.%d.%d", n/256, n%256)}, nil
}

// SetExecHandler replaces the ExecSync handler; by default every command
// succeeds with no output.
func (r *Runtime) SetExecHandler(h ExecHandler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exec = h
}

// Calls returns the calls received so far.
func (r *Runtime) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// record notes a call; r.mu is held.
func (r *Runtime) record(method string, req any) {
	r.calls = append(r.calls, Call{Method: method, Request: req})
}

func (r *Runtime) now() int64 { return r.clock.Now().UnixNano() }

// Version answers as a CRI v1 runtime.
func (r *Runtime) Version(_ context.Context, in *runtimeapi.VersionRequest, _ ...grpc.CallOption) (*runtimeapi.VersionResponse, error) {
	r.mu.Lock()
	r.record("Version", in)
	r.mu.Unlock()
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: Name, RuntimeVersion: Version, RuntimeApiVersion: "v1"}, nil
}

// SetNetworkNotReady makes Status report the network not ready, with
// the reason and message a runtime gives; an empty reason makes it ready.
func (r *Runtime) SetNetworkNotReady(reason, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.network = nil
	if reason != "" {
		r.network = &runtimeapi.RuntimeCondition{Type: runtimeapi.NetworkReady, Reason: reason, Message: message}
	}
}

// Status reports the runtime ready, and its network unless told otherwise.
func (r *Runtime) Status(_ context.Context, in *runtimeapi.StatusRequest, _ ...grpc.CallOption) (*runtimeapi.StatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("Status", in)
	network := &runtimeapi.RuntimeCondition{Type: runtimeapi.NetworkReady, Status: true}
	if r.network != nil {
		network = proto.Clone(r.network).(*runtimeapi.RuntimeCondition)
	}
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true}, network,
	}}}, nil
}

func newID() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// notFound is the error containerd's CRI plugin gives for an unknown ID.
func notFound(kind, id string) error {
	return status.Errorf(codes.NotFound, "an error occurred when try to find %s %q: not found", kind, id)
}

// reserve takes a name for id, refusing one another object holds; r.mu
// is held.
func (r *Runtime) reserve(kind, name, id string) error {
	if holder, ok := r.names[name]; ok {
		return status.Errorf(codes.AlreadyExists, "failed to reserve %s name %q: name %q is reserved for %q", kind, name, name, holder)
	}
	r.names[name] = id
	return nil
}

// matches reports whether labels carry every pair of the selector.
func matches(labels, selector map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
