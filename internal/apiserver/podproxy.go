package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apimachinery/pkg/util/validation/field"
	translator "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/wsstream"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/nodekind"
)

// The pod subresources that reach the kubelet: pods/log streams a
// container's log; pods/exec, pods/attach and pods/portforward proxy an
// upgraded connection. As upstream's API server does, a WebSocket client
// (kubectl's default) is translated to SPDY for the kubelet: exec and
// attach through the v5.channel.k8s.io stream translator, port-forward by
// unwrapping SPDY tunnelled in WebSocket frames. SPDY clients pass through.

// defaultKubeletPort is used when a Node does not publish its kubelet's.
const defaultKubeletPort = 10250

// newKubeletTransport is the API server's client of every kubelet. The
// kubelet's serving certificate is not verified unless tlsConfig names
// the roots to verify it against, as upstream's default.
func newKubeletTransport(tlsConfig *tls.Config) *http.Transport {
	cfg := &tls.Config{}
	if tlsConfig != nil {
		cfg = tlsConfig.Clone()
	}
	if cfg.RootCAs == nil {
		cfg.InsecureSkipVerify = true
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		DialContext:         d.DialContext,
		TLSClientConfig:     cfg,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 10,
		IdleConnTimeout:     90 * time.Second,
	}
}

// servePodConnect dispatches pods/log, pods/exec, pods/attach and
// pods/portforward.
func (s *Server) servePodConnect(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	if ri.Verb != "get" && (ri.Subresource == "log" || ri.Verb != "create") {
		s.writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "pods/" + ri.Subresource}, ri.Verb))
		return
	}
	ctx := r.Context()
	obj, err := s.get(ctx, res, ri.Namespace, ri.Name, "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		s.writeError(w, r, fmt.Errorf("stored pod is a %T", obj))
		return
	}
	q := r.URL.Query()
	// Admission comes first, as upstream's connect handler admits before
	// it looks for the pod's node.
	if err := s.admitConnect(ctx, res, ri, q); err != nil {
		s.writeError(w, r, err)
		return
	}
	var target kubeletRequest
	switch ri.Subresource {
	case "log":
		target, err = logRequest(pod, q)
	case "exec", "attach":
		target, err = streamRequest(pod, ri.Subresource, q)
	case "portforward":
		target, err = portForwardRequest(pod, q)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if target.empty {
		// A pod not yet on a node has no logs, as upstream answers.
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		return
	}
	loc, err := s.kubeletLocation(ctx, pod.Spec.NodeName, target)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if ri.Subresource == "log" {
		s.proxyLogs(w, r, loc)
		return
	}
	s.proxyUpgrade(w, r, loc, target)
}

// kubeletRequest is what a pod subresource asks of the pod's kubelet.
type kubeletRequest struct {
	path  string
	query url.Values
	// streams are the standard streams of exec and attach.
	streams translator.Options
	// empty answers without asking any kubelet.
	empty bool
}

func badRequest(format string, args ...any) error {
	return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
}

// queryBool reads a boolean parameter as the API's query conversion does.
func queryBool(q url.Values, name string) (bool, error) {
	v := q.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badRequest("invalid value %q for parameter %s: must be a boolean", v, name)
	}
	return b, nil
}

func queryInt(q url.Values, name string) (*int64, error) {
	v := q.Get(name)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, badRequest("invalid value %q for parameter %s: must be an integer", v, name)
	}
	return &n, nil
}

// chooseContainer validates the container a request names, or picks the
// pod's only container, with upstream's messages.
func chooseContainer(pod *corev1.Pod, name string) (string, error) {
	var all []string
	for _, c := range pod.Spec.InitContainers {
		all = append(all, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		all = append(all, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		all = append(all, c.Name)
	}
	if name == "" {
		switch len(pod.Spec.Containers) {
		case 1:
			return pod.Spec.Containers[0].Name, nil
		case 0:
			return "", badRequest("a container name must be specified for pod %s", pod.Name)
		default:
			return "", badRequest("a container name must be specified for pod %s, choose one of: %s", pod.Name, all)
		}
	}
	for _, c := range all {
		if c == name {
			return name, nil
		}
	}
	return "", badRequest("container %s is not valid for pod %s", name, pod.Name)
}

// containerStatus finds a container's status in any of the pod's lists.
func containerStatus(pod *corev1.Pod, name string) (corev1.ContainerStatus, bool) {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for _, cs := range list {
			if cs.Name == name {
				return cs, true
			}
		}
	}
	return corev1.ContainerStatus{}, false
}

// logStateError answers a logs request whose container has nothing to
// show yet, with the kubelet's messages.
func logStateError(pod *corev1.Pod, container string, previous bool) error {
	cs, ok := containerStatus(pod, container)
	if !ok {
		return nil
	}
	if previous {
		if cs.LastTerminationState.Terminated == nil {
			return badRequest("previous terminated container %q in pod %q not found", container, pod.Name)
		}
		return nil
	}
	if w := cs.State.Waiting; w != nil && cs.LastTerminationState.Terminated == nil {
		return badRequest("container %q in pod %q is waiting to start: %s", container, pod.Name, w.Reason)
	}
	return nil
}

// podLogOptions reads and validates the query of pods/log.
func podLogOptions(q url.Values) (*corev1.PodLogOptions, error) {
	o := &corev1.PodLogOptions{Container: q.Get("container")}
	var err error
	for name, dst := range map[string]*bool{"follow": &o.Follow, "previous": &o.Previous, "timestamps": &o.Timestamps} {
		if *dst, err = queryBool(q, name); err != nil {
			return nil, err
		}
	}
	for name, dst := range map[string]**int64{"sinceSeconds": &o.SinceSeconds, "tailLines": &o.TailLines, "limitBytes": &o.LimitBytes} {
		if *dst, err = queryInt(q, name); err != nil {
			return nil, err
		}
	}
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, badRequest("invalid value %q for parameter sinceTime: must be an RFC3339 time", v)
		}
		o.SinceTime = &metav1.Time{Time: t}
	}
	var errs field.ErrorList
	if o.TailLines != nil && *o.TailLines < 0 {
		errs = append(errs, field.Invalid(field.NewPath("tailLines"), *o.TailLines, "must be greater than or equal to 0"))
	}
	if o.LimitBytes != nil && *o.LimitBytes < 1 {
		errs = append(errs, field.Invalid(field.NewPath("limitBytes"), *o.LimitBytes, "must be greater than 0"))
	}
	switch {
	case o.SinceSeconds != nil && o.SinceTime != nil:
		errs = append(errs, field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
	case o.SinceSeconds != nil && *o.SinceSeconds < 1:
		errs = append(errs, field.Invalid(field.NewPath("sinceSeconds"), *o.SinceSeconds, "must be greater than 0"))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "PodLogOptions"}, "", errs)
	}
	return o, nil
}

func logRequest(pod *corev1.Pod, q url.Values) (kubeletRequest, error) {
	o, err := podLogOptions(q)
	if err != nil {
		return kubeletRequest{}, err
	}
	container, err := chooseContainer(pod, o.Container)
	if err != nil {
		return kubeletRequest{}, err
	}
	if pod.Spec.NodeName == "" {
		return kubeletRequest{empty: true}, nil
	}
	if err := logStateError(pod, container, o.Previous); err != nil {
		return kubeletRequest{}, err
	}
	params := url.Values{}
	for name, on := range map[string]bool{"follow": o.Follow, "previous": o.Previous, "timestamps": o.Timestamps} {
		if on {
			params.Set(name, "true")
		}
	}
	for name, v := range map[string]*int64{"sinceSeconds": o.SinceSeconds, "tailLines": o.TailLines, "limitBytes": o.LimitBytes} {
		if v != nil {
			params.Set(name, strconv.FormatInt(*v, 10))
		}
	}
	if o.SinceTime != nil {
		params.Set("sinceTime", o.SinceTime.UTC().Format(time.RFC3339))
	}
	return kubeletRequest{path: fmt.Sprintf("/containerLogs/%s/%s/%s", pod.Namespace, pod.Name, container), query: params}, nil
}

// streamRequest builds exec and attach: the kubelet's query names the
// streams with `input`, `output`, `error`, `tty` set to 1.
func streamRequest(pod *corev1.Pod, kind string, q url.Values) (kubeletRequest, error) {
	var o translator.Options
	var err error
	for name, dst := range map[string]*bool{"stdin": &o.Stdin, "stdout": &o.Stdout, "stderr": &o.Stderr, "tty": &o.Tty} {
		if *dst, err = queryBool(q, name); err != nil {
			return kubeletRequest{}, err
		}
	}
	command := q["command"]
	if kind == "exec" && len(command) == 0 {
		return kubeletRequest{}, badRequest("you must specify at least 1 command")
	}
	if !o.Stdin && !o.Stdout && !o.Stderr {
		return kubeletRequest{}, badRequest("you must specify at least one of stdin, stdout, stderr")
	}
	container, err := chooseContainer(pod, q.Get("container"))
	if err != nil {
		return kubeletRequest{}, err
	}
	if pod.Spec.NodeName == "" {
		return kubeletRequest{}, badRequest("pod %s does not have a host assigned", pod.Name)
	}
	params := url.Values{}
	for name, on := range map[string]bool{corev1.ExecStdinParam: o.Stdin, corev1.ExecStdoutParam: o.Stdout, corev1.ExecStderrParam: o.Stderr, corev1.ExecTTYParam: o.Tty} {
		if on {
			params.Set(name, "1")
		}
	}
	if kind == "exec" {
		params["command"] = command
	}
	return kubeletRequest{path: fmt.Sprintf("/%s/%s/%s/%s", kind, pod.Namespace, pod.Name, container), query: params, streams: o}, nil
}

func portForwardRequest(pod *corev1.Pod, q url.Values) (kubeletRequest, error) {
	var ports []string
	for _, v := range q["ports"] {
		for _, p := range strings.Split(v, ",") {
			n, err := strconv.ParseUint(p, 10, 16)
			if err != nil || n == 0 {
				return kubeletRequest{}, badRequest("invalid port %q: must be between 1 and 65535, inclusive", p)
			}
			ports = append(ports, p)
		}
	}
	if pod.Spec.NodeName == "" {
		return kubeletRequest{}, badRequest("pod %s does not have a host assigned", pod.Name)
	}
	params := url.Values{}
	if len(ports) > 0 {
		params.Set(corev1.PortHeader, strings.Join(ports, ","))
	}
	return kubeletRequest{path: fmt.Sprintf("/portForward/%s/%s", pod.Namespace, pod.Name), query: params}, nil
}

// kubeletAddress picks where a node's kubelet listens: its InternalIP,
// else its Hostname, on the port it publishes.
func kubeletAddress(node *corev1.Node) (string, error) {
	var host string
	for _, want := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeHostName} {
		for _, a := range node.Status.Addresses {
			if a.Type == want && a.Address != "" {
				host = a.Address
				break
			}
		}
		if host != "" {
			break
		}
	}
	if host == "" {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf("node %s has no address to reach its kubelet", node.Name))
	}
	port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	if port == 0 {
		port = defaultKubeletPort
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port))), nil
}

var nodesGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

func (s *Server) kubeletLocation(ctx context.Context, nodeName string, target kubeletRequest) (*url.URL, error) {
	nodes, ok := s.resources[nodesGVR]
	if !ok {
		return nil, apierrors.NewServiceUnavailable("nodes are not served")
	}
	obj, err := s.get(ctx, nodes, "", nodeName, "0")
	if err != nil {
		return nil, err
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil, fmt.Errorf("stored node is a %T", obj)
	}
	if nodekind.Simulated(node) {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("node %s is simulated: no kubelet serves its pods' logs, exec or port-forward", node.Name))
	}
	host, err := kubeletAddress(node)
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: "https", Host: host, Path: target.path, RawQuery: target.query.Encode()}, nil
}

// proxyLogs streams the kubelet's answer, flushing every chunk so that
// `kubectl logs -f` prints a line as soon as the container writes it.
func (s *Server) proxyLogs(w http.ResponseWriter, r *http.Request, loc *url.URL) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, loc.String(), nil)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	resp, err := s.kubelet.RoundTrip(req)
	if err != nil {
		s.writeError(w, r, apierrors.NewInternalError(fmt.Errorf("get logs from the kubelet: %w", err)))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		s.writeError(w, r, kubeletError(resp))
		return
	}
	if wsstream.IsWebSocketRequest(r) {
		s.logsOverWebSocket(w, r, resp.Body)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32*1024)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && r.Context().Err() == nil {
				s.log.Warn("container log stream from the kubelet ended early", "url", loc.Path, "err", err)
			}
			return
		}
	}
}

// logsOverWebSocket answers a WebSocket client of pods/log as upstream's
// API server does: the log's bytes as binary messages (binary.k8s.io, or
// no subprotocol) or base64 text messages (base64.binary.k8s.io), after
// an empty first message, and a close once the log ends.
func (s *Server) logsOverWebSocket(w http.ResponseWriter, r *http.Request, body io.Reader) {
	protocols := wsstream.NewDefaultReaderProtocols()
	// The stream's handshake answers an unknown subprotocol on the
	// hijacked connection but never returns; refuse it here instead.
	if asked := websocketProtocols(r); len(asked) > 0 && !slices.ContainsFunc(asked, func(p string) bool { _, ok := protocols[p]; return ok }) {
		s.writeError(w, r, badRequest("requested protocol(s) are not supported: %v", asked))
		return
	}
	if err := wsstream.NewReader(body, true, protocols).Copy(hijackable(w), r); err != nil && r.Context().Err() == nil {
		s.log.Debug("container log over a WebSocket ended early", "err", err)
	}
}

// websocketProtocols lists the subprotocols a WebSocket client offers.
func websocketProtocols(r *http.Request) []string {
	var out []string
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// kubeletError turns the kubelet's error answer into a Status with its
// code and text, as upstream's generic response checker does.
func kubeletError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	msg := strings.TrimSpace(string(body))
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	reason := metav1.StatusReasonUnknown
	switch resp.StatusCode {
	case http.StatusBadRequest:
		reason = metav1.StatusReasonBadRequest
	case http.StatusNotFound:
		reason = metav1.StatusReasonNotFound
	case http.StatusUnauthorized:
		reason = metav1.StatusReasonUnauthorized
	case http.StatusForbidden:
		reason = metav1.StatusReasonForbidden
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: int32(resp.StatusCode), Reason: reason, Message: msg}}
}

// proxyUpgrade hands exec, attach and port-forward to the kubelet.
func (s *Server) proxyUpgrade(w http.ResponseWriter, r *http.Request, loc *url.URL, target kubeletRequest) {
	upgrade := proxy.NewUpgradeAwareHandler(loc, s.kubelet, false, true, errorResponder{s})
	var h http.Handler = upgrade
	if strings.HasPrefix(target.path, "/portForward/") {
		h = translator.NewTranslatingHandler(upgrade, translator.NewTunnelingHandler(upgrade), wsstream.IsWebSocketRequestWithTunnelingProtocol)
	} else {
		h = translator.NewTranslatingHandler(upgrade, translator.NewStreamTranslatorHandler(loc, s.kubelet, 0, target.streams), wsstream.IsWebSocketRequestWithStreamCloseProtocol)
	}
	if httpstream.IsUpgradeRequest(r) {
		w = hijackable(w)
	}
	h.ServeHTTP(w, r)
}

// hijackable returns the connection's own writer from under the metrics
// recorder, which does not pass http.Hijacker through; the recorder
// counts the request as switching protocols.
func hijackable(w http.ResponseWriter) http.ResponseWriter {
	if rec, ok := w.(*statusRecorder); ok {
		if rec.code == 0 {
			rec.code = http.StatusSwitchingProtocols
		}
		return rec.ResponseWriter
	}
	return w
}

// errorResponder answers a failure to reach the backend as a Status, as
// upstream answers: a 500 with the dial error for the kubelet's streams,
// a 503 "error trying to reach service" through the proxy subresources.
type errorResponder struct{ s *Server }

func (e errorResponder) Error(w http.ResponseWriter, r *http.Request, err error) {
	e.s.writeError(w, r, err)
}

// admitConnect runs admission on an exec, attach or port-forward, as
// upstream's connect handler does: operation CONNECT, the request's
// options as the object, so that webhooks and policies may refuse it.
func (s *Server) admitConnect(ctx context.Context, res *resource, ri requestInfo, q url.Values) error {
	flag := func(name string) bool { return isTrue(q.Get(name)) }
	var opts runtime.Object
	var kind string
	switch ri.Subresource {
	case "exec":
		opts, kind = &corev1.PodExecOptions{
			Stdin: flag("stdin"), Stdout: flag("stdout"), Stderr: flag("stderr"), TTY: flag("tty"),
			Container: q.Get("container"), Command: q["command"],
		}, "PodExecOptions"
	case "attach":
		opts, kind = &corev1.PodAttachOptions{
			Stdin: flag("stdin"), Stdout: flag("stdout"), Stderr: flag("stderr"), TTY: flag("tty"),
			Container: q.Get("container"),
		}, "PodAttachOptions"
	case "portforward":
		pf := &corev1.PodPortForwardOptions{}
		for _, p := range q["ports"] {
			for _, f := range strings.Split(p, ",") {
				if n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32); err == nil {
					pf.Ports = append(pf.Ports, int32(n))
				}
			}
		}
		opts, kind = pf, "PodPortForwardOptions"
	default:
		return nil
	}
	gvk := corev1.SchemeGroupVersion.WithKind(kind)
	opts.GetObjectKind().SetGroupVersionKind(gvk)
	attrs := s.attributes(ctx, admission.Connect, res, ri.Subresource, ri.Namespace, ri.Name, opts, nil, false)
	attrs.Kind, attrs.Default = gvk, nil
	if err := s.admission.Admit(ctx, attrs); err != nil {
		return err
	}
	return s.admission.Validate(ctx, attrs)
}
