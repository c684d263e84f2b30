// Package prober runs containers' liveness, readiness and startup probes
// (exec, httpGet, tcpSocket, gRPC) with upstream's timing rules: initial
// delay, period, timeout, and success and failure thresholds counted in a
// row. A worker per probe keeps the latest result; the kubelet reads the
// results when it syncs and is told whenever one flips.
package prober

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
)

// userAgent is what upstream's kubelet of the same minor version sends.
const userAgent = "kube-probe/1.37"

// Kind is which probe a worker runs.
type Kind string

const (
	Liveness  Kind = "Liveness"
	Readiness Kind = "Readiness"
	Startup   Kind = "Startup"
)

// Exec runs a command in a container and waits for it.
type Exec interface {
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (output []byte, exitCode int32, err error)
}

// Config wires a Manager.
type Config struct {
	Exec Exec
	// OnChange is called (from a probe goroutine) when a result flips,
	// with the kind of probe whose result it was.
	OnChange func(types.UID, Kind)
	Recorder record.EventRecorder
	Log      *slog.Logger
}

// Manager owns every probe worker of a node.
type Manager struct {
	cfg     Config
	mu      sync.Mutex
	workers map[key]*worker
}

type key struct {
	uid       types.UID
	container string
	kind      Kind
}

type worker struct {
	containerID string
	stop        chan struct{}
	mu          sync.Mutex
	result      bool
	known       bool
	message     string
}

// NewManager returns a manager with no workers.
func NewManager(cfg Config) *Manager {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Manager{cfg: cfg, workers: map[key]*worker{}}
}

// Update starts workers for the probes of the pod's running containers
// (running maps container name to its current runtime ID) and stops the
// workers of instances that are gone.
func (m *Manager) Update(pod *v1.Pod, running map[string]string, podIP string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	want := map[key]bool{}
	// Sidecars (restartable init containers) are probed as regular
	// containers; other init containers cannot have probes.
	var probed []*v1.Container
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			probed = append(probed, c)
		}
	}
	for i := range pod.Spec.Containers {
		probed = append(probed, &pod.Spec.Containers[i])
	}
	for _, c := range probed {
		id, ok := running[c.Name]
		if !ok {
			continue
		}
		for kind, p := range map[Kind]*v1.Probe{Liveness: c.LivenessProbe, Readiness: c.ReadinessProbe, Startup: c.StartupProbe} {
			if p == nil {
				continue
			}
			k := key{pod.UID, c.Name, kind}
			want[k] = true
			if w, ok := m.workers[k]; ok && w.containerID == id {
				continue
			} else if ok {
				close(w.stop)
			}
			w := &worker{containerID: id, stop: make(chan struct{})}
			m.workers[k] = w
			go m.run(pod, c, kind, p, w, podIP)
		}
	}
	for k, w := range m.workers {
		if k.uid == pod.UID && !want[k] {
			close(w.stop)
			delete(m.workers, k)
		}
	}
}

// Result reports a probe's latest result for the container instance id:
// ok is false when the container has no such probe; known is false while
// no result is in yet.
func (m *Manager) Result(uid types.UID, container string, kind Kind, id string) (success, known, ok bool, message string) {
	m.mu.Lock()
	w, has := m.workers[key{uid, container, kind}]
	m.mu.Unlock()
	if !has || w.containerID != id {
		return false, false, has, ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.result, w.known, true, w.message
}

// RemovePod stops the workers of a pod.
func (m *Manager) RemovePod(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, w := range m.workers {
		if k.uid == uid {
			close(w.stop)
			delete(m.workers, k)
		}
	}
}

// Stop ends every worker.
func (m *Manager) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, w := range m.workers {
		close(w.stop)
		delete(m.workers, k)
	}
}

func (m *Manager) startedOK(uid types.UID, container, id string) bool {
	s, known, ok, _ := m.Result(uid, container, Startup, id)
	return !ok || (known && s)
}

// run is one probe's loop.
func (m *Manager) run(pod *v1.Pod, c *v1.Container, kind Kind, p *v1.Probe, w *worker, podIP string) {
	period := time.Duration(max(p.PeriodSeconds, 1)) * time.Second
	timeout := time.Duration(max(p.TimeoutSeconds, 1)) * time.Second
	succT, failT := int(max(p.SuccessThreshold, 1)), int(max(p.FailureThreshold, 1))
	if kind != Readiness {
		succT = 1
	}
	// Results before the first probe, as upstream: not ready, alive, not
	// started.
	w.mu.Lock()
	switch kind {
	case Liveness:
		w.result, w.known = true, true
	case Readiness:
		w.result, w.known = false, true
	}
	w.mu.Unlock()
	select {
	case <-w.stop:
		return
	case <-time.After(time.Duration(p.InitialDelaySeconds) * time.Second):
	}
	var succ, fail int
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		// Liveness and readiness wait for the startup probe to pass.
		if kind == Startup || m.startedOK(pod.UID, c.Name, w.containerID) {
			ok, msg := m.probe(pod, c, p, w.containerID, podIP, timeout)
			if ok {
				succ, fail = succ+1, 0
			} else {
				succ, fail = 0, fail+1
				if m.cfg.Recorder != nil {
					m.cfg.Recorder.Eventf(pod, v1.EventTypeWarning, "Unhealthy", "%s probe failed: %s", kind, msg)
				}
			}
			w.mu.Lock()
			prev, prevKnown := w.result, w.known
			if succ >= succT {
				w.result, w.known, w.message = true, true, ""
			} else if fail >= failT {
				w.result, w.known, w.message = false, true, msg
			}
			changed := prev != w.result || prevKnown != w.known
			done := kind == Startup && w.known && w.result
			w.mu.Unlock()
			if changed && m.cfg.OnChange != nil {
				m.cfg.OnChange(pod.UID, kind)
			}
			if done {
				// A startup probe stops once it succeeds.
				<-w.stop
				return
			}
		}
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
	}
}

// runtimeRequestTimeout is what an exec probe's call may take beyond the
// probe's own timeout: upstream's kubelet gives the call its runtime
// request timeout (2 minutes) on top, because the runtime starts the
// command's clock only once the process runs. Setting up the process
// (runc exec) takes more than a second on a busy node; counting it
// failed every `true` probe with a 1 s timeout there.
const runtimeRequestTimeout = 2 * time.Minute

// probe runs one check and returns its result and, on failure, why.
func (m *Manager) probe(pod *v1.Pod, c *v1.Container, p *v1.Probe, id, podIP string, timeout time.Duration) (bool, string) {
	if p.Exec != nil {
		return m.execProbe(p.Exec.Command, id, timeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	switch {
	case p.HTTPGet != nil:
		host := p.HTTPGet.Host
		if host == "" {
			host = podIP
		}
		return HTTPGet(ctx, p.HTTPGet, c, host)
	case p.TCPSocket != nil:
		host := p.TCPSocket.Host
		if host == "" {
			host = podIP
		}
		port, err := ResolvePort(p.TCPSocket.Port, c)
		if err != nil {
			return false, err.Error()
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return false, err.Error()
		}
		conn.Close()
		return true, ""
	case p.GRPC != nil:
		service := ""
		if p.GRPC.Service != nil {
			service = *p.GRPC.Service
		}
		return GRPC(ctx, podIP, service, int(p.GRPC.Port), timeout)
	}
	return true, ""
}

// execProbe runs an exec probe; the runtime enforces timeout on the
// command itself.
func (m *Manager) execProbe(cmd []string, id string, timeout time.Duration) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+runtimeRequestTimeout)
	defer cancel()
	out, code, err := m.cfg.Exec.ExecSync(ctx, id, cmd, timeout)
	if err != nil {
		if ctx.Err() != nil || isExecTimeout(err) {
			return false, fmt.Sprintf("command %q timed out", strings.Join(cmd, " "))
		}
		return false, err.Error()
	}
	if code != 0 {
		return false, string(out)
	}
	return true, ""
}

// isExecTimeout recognises the runtime's answer to a command that outran
// its timeout: a deadline code, or containerd's "timeout 1s exceeded".
func isExecTimeout(err error) bool {
	if status.Code(err) == codes.DeadlineExceeded {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "timeout") && strings.Contains(msg, "exceeded")
}

// HTTPGet performs an httpGet probe or hook against host; success is a
// status from 200 to 399.
func HTTPGet(ctx context.Context, g *v1.HTTPGetAction, c *v1.Container, host string) (bool, string) {
	port, err := ResolvePort(g.Port, c)
	if err != nil {
		return false, err.Error()
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := g.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port))}
	if pu, err := url.Parse(path); err == nil {
		u.Path, u.RawQuery = pu.Path, pu.RawQuery
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return false, err.Error()
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "*/*")
	for _, h := range g.HTTPHeaders {
		if strings.EqualFold(h.Name, "host") {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	client := &http.Client{
		// Upstream probes do not verify certificates and follow
		// redirects only to the same host.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true},
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if len(via) >= 10 || r.URL.Hostname() != via[0].URL.Hostname() {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		return true, ""
	}
	return false, fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode)
}

// ResolvePort turns a probe's or hook's port (a number or the name of a
// container port) into a number.
func ResolvePort(p intstr.IntOrString, c *v1.Container) (int, error) {
	if p.Type == intstr.Int {
		if p.IntVal <= 0 || p.IntVal > 65535 {
			return 0, fmt.Errorf("invalid port number: %d", p.IntVal)
		}
		return int(p.IntVal), nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	return 0, fmt.Errorf("couldn't find port: %v in %v", p.StrVal, c.Name)
}
