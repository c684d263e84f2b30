package prober

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fakeExec answers ExecSync after setup (the runtime creating the
// process), with a fixed exit code, output and error.
type fakeExec struct {
	setup  time.Duration
	code   int32
	out    string
	err    error
	called chan struct{}
}

func (f fakeExec) ExecSync(ctx context.Context, _ string, _ []string, _ time.Duration) ([]byte, int32, error) {
	if f.called != nil {
		select {
		case f.called <- struct{}{}:
		default:
		}
	}
	select {
	case <-time.After(f.setup):
	case <-ctx.Done():
		return nil, -1, ctx.Err()
	}
	return []byte(f.out), f.code, f.err
}

func TestExecProbe(t *testing.T) {
	timeout := 50 * time.Millisecond
	for _, tc := range []struct {
		name    string
		exec    fakeExec
		ok      bool
		message string
	}{
		{name: "passes", exec: fakeExec{}, ok: true},
		// The runtime starts the command's clock once the process runs:
		// a slow process set-up on a busy node is no timeout.
		{name: "set-up slower than the timeout", exec: fakeExec{setup: 4 * timeout}, ok: true},
		{name: "exit code", exec: fakeExec{code: 1, out: "not yet\n"}, message: "not yet\n"},
		{name: "containerd's timeout", exec: fakeExec{err: errors.New("rpc error: code = Unknown desc = failed to exec in container: timeout 1s exceeded")}, message: `command "true" timed out`},
		{name: "deadline code", exec: fakeExec{err: status.Error(codes.DeadlineExceeded, "context deadline exceeded")}, message: `command "true" timed out`},
		{name: "other error", exec: fakeExec{err: errors.New("container not running")}, message: "container not running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager(Config{Exec: tc.exec})
			ok, msg := m.execProbe([]string{"true"}, "c1", timeout)
			if ok != tc.ok || msg != tc.message {
				t.Errorf("execProbe = %v, %q; want %v, %q", ok, msg, tc.ok, tc.message)
			}
		})
	}
}

// TestFirstProbeRunsAtStart: a container's first probe runs as soon as
// its worker starts (no initial delay), not a period later, and a result
// that flips is reported with its kind.
func TestFirstProbeRunsAtStart(t *testing.T) {
	probe := func(delay int32) *v1.Probe {
		return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 10, InitialDelaySeconds: delay}
	}
	for _, tc := range []struct {
		name      string
		container v1.Container
		// want is the kind reported first, within wait; none when empty.
		want Kind
		wait time.Duration
	}{
		{name: "readiness", container: v1.Container{Name: "c", ReadinessProbe: probe(0)}, want: Readiness, wait: 2 * time.Second},
		{name: "startup", container: v1.Container{Name: "c", StartupProbe: probe(0)}, want: Startup, wait: 2 * time.Second},
		// Liveness starts out passing: a pass changes nothing.
		{name: "liveness passing", container: v1.Container{Name: "c", LivenessProbe: probe(0)}, wait: 500 * time.Millisecond},
		{name: "initial delay honoured", container: v1.Container{Name: "c", ReadinessProbe: probe(5)}, wait: 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := make(chan Kind, 4)
			m := NewManager(Config{Exec: fakeExec{}, OnChange: func(_ types.UID, k Kind) { changed <- k }})
			defer m.Stop()
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1"}, Spec: v1.PodSpec{Containers: []v1.Container{tc.container}}}
			m.Update(pod, map[string]string{"c": "id1"}, "")
			select {
			case k := <-changed:
				if k != tc.want {
					t.Fatalf("first change %q, want %q", k, tc.want)
				}
				ok, known, has, _ := m.Result("u1", "c", k, "id1")
				if !ok || !known || !has {
					t.Errorf("Result = %v, %v, %v; want a known pass", ok, known, has)
				}
			case <-time.After(tc.wait):
				if tc.want != "" {
					t.Fatalf("no %s result within %v", tc.want, tc.wait)
				}
			}
		})
	}
}
