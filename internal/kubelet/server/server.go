// Package server is the kubelet's HTTPS streaming server: the API server
// reaches it for `kubectl logs`, `exec`, `attach`, `port-forward` and `cp`.
// Logs are read from the container's log file; exec, attach and
// port-forward ask the container runtime (CRI) for a streaming URL and
// proxy the upgraded connection to it, as upstream's kubelet does when it
// does not redirect. New serves the paths; WithAuth puts upstream's
// authentication and authorization of every path in front of them.
package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/proxy"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/kubelet/logs"
)

// Runtime is what the streaming server needs from the kubelet.
type Runtime interface {
	// Container resolves a pod's container to its runtime instance. previous
	// selects the last terminated instance instead of the current one.
	// Errors wrap ErrNotFound when the pod or container is unknown on this node.
	Container(ctx context.Context, namespace, pod, container string, previous bool) (ContainerRef, error)
	// Sandbox returns the runtime ID of the pod's sandbox (for port-forward).
	Sandbox(ctx context.Context, namespace, pod string) (string, error)
	// Running reports whether a container instance is still running (logs -f stops when it is not).
	Running(ctx context.Context, containerID string) (bool, error)
	Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error)
	Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error)
	PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error)
}

// ContainerRef is one runtime instance of a pod's container.
type ContainerRef struct {
	ID, LogPath string
	TTY, Stdin  bool
}

// ErrNotFound marks a pod or container this node does not know.
var ErrNotFound = errors.New("not found")

// TLSConfig serves cert and verifies client certificates against
// clientCA. A client without a certificate still completes the handshake,
// since it may bring a bearer token instead, and otherwise gets a 401
// response, as upstream's kubelet answers, rather than a TLS alert.
func TLSConfig(clientCA *x509.CertPool, cert tls.Certificate) *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    clientCA,
		MinVersion:   tls.VersionTLS12,
		// Upgraded streams are HTTP/1.1 only.
		NextProtos: []string{"http/1.1"},
	}
}

type handler struct {
	rt  Runtime
	log *slog.Logger
	now func() time.Time
}

// New returns the kubelet's HTTPS handler over rt. It checks no
// credentials: serve it behind WithAuth.
func New(rt Runtime, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return &handler{rt: rt, log: log, now: time.Now}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if parts[0] == "healthz" && len(parts) == 1 {
		_, _ = io.WriteString(w, "ok")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch {
	case parts[0] == "containerLogs" && len(parts) == 4:
		h.serveLogs(w, r, parts[1], parts[2], parts[3])
	// exec and attach also accept upstream's form with the pod UID.
	case (parts[0] == "exec" || parts[0] == "attach") && (len(parts) == 4 || len(parts) == 5):
		h.serveStream(w, r, parts[0], parts[1], parts[2], parts[len(parts)-1])
	case parts[0] == "portForward" && (len(parts) == 3 || len(parts) == 4):
		h.servePortForward(w, r, parts[1], parts[2])
	default:
		http.NotFound(w, r)
	}
}

// writeError answers with a plain-text error as upstream's kubelet does;
// the API server passes the text on to kubectl.
func (h *handler) writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var se apierrors.APIStatus
	switch {
	case errors.As(err, &se):
		code = int(se.Status().Code)
	case errors.Is(err, ErrNotFound):
		code = http.StatusNotFound
	}
	if code == http.StatusInternalServerError {
		h.log.Error("kubelet streaming request failed", "err", err)
	}
	http.Error(w, err.Error(), code)
}

func badRequest(format string, args ...any) error {
	return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
}

// logOptions reads the query of /containerLogs as upstream's kubelet
// does: the v1.PodLogOptions parameters.
func logOptions(q url.Values) (*corev1.PodLogOptions, error) {
	o := &corev1.PodLogOptions{}
	var err error
	boolean := func(name string) bool {
		v := q.Get(name)
		if v == "" || err != nil {
			return false
		}
		b, perr := strconv.ParseBool(v)
		if perr != nil {
			err = badRequest("invalid %s %q", name, v)
		}
		return b
	}
	integer := func(name string) *int64 {
		v := q.Get(name)
		if v == "" || err != nil {
			return nil
		}
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil {
			err = badRequest("invalid %s %q", name, v)
			return nil
		}
		return &n
	}
	o.Follow, o.Previous, o.Timestamps = boolean("follow"), boolean("previous"), boolean("timestamps")
	o.TailLines, o.LimitBytes, o.SinceSeconds = integer("tailLines"), integer("limitBytes"), integer("sinceSeconds")
	if v := q.Get("sinceTime"); v != "" && err == nil {
		t, perr := time.Parse(time.RFC3339, v)
		if perr != nil {
			return nil, badRequest("invalid sinceTime %q", v)
		}
		o.SinceTime = &metav1.Time{Time: t}
	}
	if err != nil {
		return nil, err
	}
	switch {
	case o.SinceSeconds != nil && o.SinceTime != nil:
		return nil, badRequest("at most one of sinceTime or sinceSeconds may be specified")
	case o.SinceSeconds != nil && *o.SinceSeconds < 1:
		return nil, badRequest("sinceSeconds must be greater than 0")
	case o.TailLines != nil && *o.TailLines < 0:
		return nil, badRequest("tailLines must be greater than or equal to 0")
	case o.LimitBytes != nil && *o.LimitBytes < 1:
		return nil, badRequest("limitBytes must be greater than 0")
	}
	return o, nil
}

func (h *handler) serveLogs(w http.ResponseWriter, r *http.Request, ns, pod, container string) {
	opts, err := logOptions(r.URL.Query())
	if err != nil {
		h.writeError(w, err)
		return
	}
	ctx := r.Context()
	ref, err := h.rt.Container(ctx, ns, pod, container, opts.Previous)
	if err != nil {
		h.writeError(w, fmt.Errorf("container %s/%s/%s: %w", ns, pod, container, err))
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	out := &flushWriter{w: w}
	if f, ok := w.(http.Flusher); ok {
		out.f = f
	}
	running := func(ctx context.Context) (bool, error) { return h.rt.Running(ctx, ref.ID) }
	if err := logs.Read(ctx, ref.LogPath, logs.FromPodLogOptions(opts, h.now()), out, running); err != nil {
		if out.wrote {
			// The status line is gone; all that is left is to stop.
			h.log.Warn("container log stream ended early", "pod", ns+"/"+pod, "container", container, "err", err)
			return
		}
		h.writeError(w, err)
	}
}

// flushWriter sends each write at once, so that `kubectl logs -f` shows a
// line as soon as the container writes it.
type flushWriter struct {
	w     io.Writer
	f     http.Flusher
	wrote bool
}

func (f *flushWriter) Write(p []byte) (int, error) {
	f.wrote = true
	n, err := f.w.Write(p)
	if f.f != nil {
		f.f.Flush()
	}
	return n, err
}

// streamOptions reads the stream flags of /exec and /attach (upstream's
// `input`, `output`, `error`, `tty` set to 1).
type streamOptions struct {
	stdin, stdout, stderr, tty bool
}

func parseStreamOptions(q url.Values) (streamOptions, error) {
	on := func(name string) bool { v := q.Get(name); return v == "1" || v == "true" }
	o := streamOptions{stdin: on(corev1.ExecStdinParam), stdout: on(corev1.ExecStdoutParam), stderr: on(corev1.ExecStderrParam), tty: on(corev1.ExecTTYParam)}
	if o.tty && o.stderr {
		// A terminal carries stderr on stdout.
		o.stderr = false
	}
	if !o.stdin && !o.stdout && !o.stderr {
		return o, badRequest("you must specify at least one of stdin, stdout, stderr")
	}
	return o, nil
}

func (h *handler) serveStream(w http.ResponseWriter, r *http.Request, kind, ns, pod, container string) {
	q := r.URL.Query()
	o, err := parseStreamOptions(q)
	if err != nil {
		h.writeError(w, err)
		return
	}
	ctx := r.Context()
	ref, err := h.rt.Container(ctx, ns, pod, container, false)
	if err != nil {
		h.writeError(w, fmt.Errorf("container %s/%s/%s: %w", ns, pod, container, err))
		return
	}
	var rawURL string
	if kind == "exec" {
		cmd := q["command"]
		if len(cmd) == 0 {
			h.writeError(w, badRequest("you must specify at least 1 command"))
			return
		}
		resp, err := h.rt.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: ref.ID, Cmd: cmd, Tty: o.tty, Stdin: o.stdin, Stdout: o.stdout, Stderr: o.stderr})
		if err != nil {
			h.writeError(w, fmt.Errorf("exec in %s/%s/%s: %w", ns, pod, container, err))
			return
		}
		rawURL = resp.GetUrl()
	} else {
		resp, err := h.rt.Attach(ctx, &runtimeapi.AttachRequest{ContainerId: ref.ID, Tty: o.tty, Stdin: o.stdin, Stdout: o.stdout, Stderr: o.stderr})
		if err != nil {
			h.writeError(w, fmt.Errorf("attach to %s/%s/%s: %w", ns, pod, container, err))
			return
		}
		rawURL = resp.GetUrl()
	}
	h.proxyStream(w, r, rawURL)
}

func (h *handler) servePortForward(w http.ResponseWriter, r *http.Request, ns, pod string) {
	ctx := r.Context()
	ports, err := parsePorts(r.URL.Query()[corev1.PortHeader])
	if err != nil {
		h.writeError(w, err)
		return
	}
	id, err := h.rt.Sandbox(ctx, ns, pod)
	if err != nil {
		h.writeError(w, fmt.Errorf("pod %s/%s: %w", ns, pod, err))
		return
	}
	resp, err := h.rt.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: id, Port: ports})
	if err != nil {
		h.writeError(w, fmt.Errorf("port-forward to %s/%s: %w", ns, pod, err))
		return
	}
	h.proxyStream(w, r, resp.GetUrl())
}

// parsePorts reads the optional `port` parameters (each may be a comma
// separated list); SPDY clients name ports per stream instead.
func parsePorts(values []string) ([]int32, error) {
	var out []int32
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			if s == "" {
				continue
			}
			p, err := strconv.ParseUint(s, 10, 16)
			if err != nil || p == 0 {
				return nil, badRequest("invalid port %q", s)
			}
			out = append(out, int32(p))
		}
	}
	return out, nil
}

// proxyStream hands the upgraded connection to the runtime's streaming
// server, as upstream's kubelet does without redirects.
func (h *handler) proxyStream(w http.ResponseWriter, r *http.Request, rawURL string) {
	loc, err := url.Parse(rawURL)
	if err != nil || loc.Host == "" {
		h.writeError(w, fmt.Errorf("runtime returned streaming URL %q: %v", rawURL, err))
		return
	}
	p := proxy.NewUpgradeAwareHandler(loc, nil, false, true, responder{h})
	p.ServeHTTP(w, r)
}

type responder struct{ h *handler }

func (r responder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	r.h.writeError(w, err)
}
