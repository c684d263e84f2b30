package kubelet

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/kubelet/credentials"
	"github.com/orca-project/orca/internal/kubelet/fieldpath"
	"github.com/orca-project/orca/internal/kubelet/prober"
)

// startError says why a container did not start and when to try again.
type startError struct {
	retry time.Duration
}

// startSpec is one container to start: from the pod's containers, init
// containers or (with its fields as a container) ephemeral containers.
type startSpec struct {
	c    *v1.Container
	init bool
	// target is the runtime ID of the container whose process namespace
	// an ephemeral container joins, if any.
	target string
}

// startContainer pulls the image if needed, creates and starts one run of
// a container, and runs its postStart hook.
func (k *Kubelet) startContainer(ctx context.Context, pod *v1.Pod, s startSpec, sb *sandbox, attempt uint32) *startError {
	c := s.c
	imageRef, err := k.ensureImage(ctx, pod, c)
	if err != nil {
		return err
	}
	cfg, msg := k.containerConfig(ctx, pod, c, s.init, sb, attempt)
	if msg != "" {
		k.setWaiting(pod.UID, c.Name, "CreateContainerConfigError", msg)
		k.event(pod, v1.EventTypeWarning, "Failed", "Error: "+msg)
		return &startError{retry: 2 * time.Second}
	}
	targetPIDNamespace(cfg.Linux.SecurityContext.NamespaceOptions, s.target)
	cfg.Image = &runtimeapi.ImageSpec{Image: imageRef, UserSpecifiedImage: c.Image}
	// The runtime takes the container's HOSTNAME and more from the
	// sandbox's configuration, so it gets the whole of it again.
	podCfg, err3 := k.sandboxConfig(pod, sb.Attempt)
	if err3 != nil {
		k.setWaiting(pod.UID, c.Name, "CreateContainerConfigError", err3.Error())
		return &startError{retry: 2 * time.Second}
	}
	created, err2 := k.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.ID, Config: cfg, SandboxConfig: podCfg})
	if err2 != nil {
		k.setWaiting(pod.UID, c.Name, "CreateContainerError", err2.Error())
		k.event(pod, v1.EventTypeWarning, "Failed", "Error: "+err2.Error())
		return &startError{retry: 2 * time.Second}
	}
	if findEphemeral(pod, c.Name) == nil {
		k.res.setActuated(pod.UID, c.Name, c.Resources)
	}
	k.event(pod, v1.EventTypeNormal, "Created", "Created container: "+c.Name)
	if _, err := k.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: created.ContainerId}); err != nil {
		k.setWaiting(pod.UID, c.Name, "RunContainerError", err.Error())
		k.event(pod, v1.EventTypeWarning, "Failed", "Error: "+err.Error())
		return &startError{retry: 2 * time.Second}
	}
	k.event(pod, v1.EventTypeNormal, "Started", "Started container "+c.Name)
	if c.Lifecycle != nil && c.Lifecycle.PostStart != nil {
		hctx, cancel := context.WithTimeout(ctx, time.Duration(gracePeriod(pod)+2)*time.Second)
		msg, err := k.runHook(hctx, pod, c, created.ContainerId, c.Lifecycle.PostStart)
		cancel()
		if err != nil {
			k.event(pod, v1.EventTypeWarning, "FailedPostStartHook", msg)
			k.stopContainer(ctx, pod, c, created.ContainerId, gracePeriod(pod))
		}
	}
	return nil
}

// ensureImage makes the image present according to imagePullPolicy and
// returns the reference to create the container from.
func (k *Kubelet) ensureImage(ctx context.Context, pod *v1.Pod, c *v1.Container) (string, *startError) {
	spec := &runtimeapi.ImageSpec{Image: c.Image}
	st, err := k.rt.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
	present := err == nil && st.Image != nil
	policy := c.ImagePullPolicy
	if policy == "" {
		policy = v1.PullIfNotPresent
	}
	if present && policy != v1.PullAlways {
		k.event(pod, v1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine", c.Image))
		return st.Image.Id, nil
	}
	if policy == v1.PullNever {
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
		k.setWaiting(pod.UID, c.Name, "ErrImageNeverPull", msg)
		k.event(pod, v1.EventTypeWarning, "ErrImageNeverPull", msg)
		return "", &startError{retry: 10 * time.Second}
	}
	key := pullKey(pod, c)
	if h := pullHeld(k.pullBackoff, key, time.Now()); h.held {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		k.setWaiting(pod.UID, c.Name, "ImagePullBackOff", msg)
		k.event(pod, v1.EventTypeNormal, "BackOff", msg)
		return "", &startError{retry: h.wait}
	}
	keyring, missing := credentials.ForPod(ctx, k.secret, pod)
	if len(missing) > 0 {
		k.event(pod, v1.EventTypeWarning, "FailedToRetrieveImagePullSecret",
			fmt.Sprintf("Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", strings.Join(missing, ", ")))
	}
	k.event(pod, v1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", c.Image))
	start := time.Now()
	ref, err := credentials.Pull(ctx, k.rt, c.Image, keyring.Lookup(c.Image))
	if err != nil {
		k.pullBackoff.Next(key, time.Now())
		msg := fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)
		k.setWaiting(pod.UID, c.Name, "ErrImagePull", msg)
		k.event(pod, v1.EventTypeWarning, "Failed", msg)
		k.event(pod, v1.EventTypeWarning, "Failed", "Error: ErrImagePull")
		return "", &startError{retry: k.pullBackoff.Get(key)}
	}
	k.pullBackoff.Reset(key)
	d := time.Since(start).Round(time.Millisecond)
	k.event(pod, v1.EventTypeNormal, "Pulled", fmt.Sprintf("Successfully pulled image %q in %s (%s including waiting)", c.Image, d, d))
	return ref, nil
}

// secret reads a secret for the image pull of a pod.
func (k *Kubelet) secret(ctx context.Context, namespace, name string) (*v1.Secret, error) {
	return k.cfg.Client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}

// containerConfig builds the CRI container configuration. A non-empty
// message is a configuration error (missing ConfigMap key, privileged not
// allowed) reported as CreateContainerConfigError.
func (k *Kubelet) containerConfig(ctx context.Context, pod *v1.Pod, c *v1.Container, init bool, sb *sandbox, attempt uint32) (*runtimeapi.ContainerConfig, string) {
	env, msg := k.envFor(ctx, pod, c, sb)
	if msg != "" {
		return nil, msg
	}
	envMap := map[string]string{}
	var envs []*runtimeapi.KeyValue
	for _, e := range env {
		envMap[e.name] = e.value
		envs = append(envs, &runtimeapi.KeyValue{Key: e.name, Value: []byte(e.value)})
	}
	mounts, err := k.cfg.Volumes.ContainerMounts(pod, c, envMap)
	if err != nil {
		return nil, err.Error()
	}
	extra, err := k.kubeletMounts(pod, c, sb, attempt)
	if err != nil {
		return nil, err.Error()
	}
	mounts = append(mounts, extra...)
	sc, msg := k.securityContext(pod, c)
	if msg != "" {
		return nil, msg
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata:   &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: attempt},
		Command:    expandAll(c.Command, envMap),
		Args:       expandAll(c.Args, envMap),
		WorkingDir: c.WorkingDir,
		Envs:       envs,
		Mounts:     mounts,
		LogPath:    filepath.Join(c.Name, strconv.Itoa(int(attempt))+".log"),
		Stdin:      c.Stdin,
		StdinOnce:  c.StdinOnce,
		Tty:        c.TTY,
		Labels: map[string]string{
			labelPodName: pod.Name, labelPodNamespace: pod.Namespace, labelPodUID: string(pod.UID), labelContainerName: c.Name,
		},
		Annotations: map[string]string{
			annRestartCount:    strconv.Itoa(int(attempt)),
			annTerminationPath: c.TerminationMessagePath,
			annTerminationPol:  string(c.TerminationMessagePolicy),
			annTerminationFile: k.terminationFile(pod, c, attempt),
			annInit:            strconv.FormatBool(init),
		},
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       k.resources(pod, c),
			SecurityContext: sc,
		},
	}
	return cfg, ""
}

// kubeletMounts are the files the kubelet itself provides: /etc/hosts and
// the termination message file.
func (k *Kubelet) kubeletMounts(pod *v1.Pod, c *v1.Container, sb *sandbox, attempt uint32) ([]*runtimeapi.Mount, error) {
	var out []*runtimeapi.Mount
	if c.TerminationMessagePath != "" {
		f := k.terminationFile(pod, c, attempt)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return nil, fmt.Errorf("termination message file: %w", err)
		}
		if err := os.WriteFile(f, nil, 0o666); err != nil {
			return nil, fmt.Errorf("termination message file: %w", err)
		}
		_ = os.Chmod(f, 0o666)
		out = append(out, &runtimeapi.Mount{ContainerPath: c.TerminationMessagePath, HostPath: f})
	}
	if !hasMountAt(c, "/etc/hosts") {
		var content string
		if pod.Spec.HostNetwork {
			// Upstream's kubelet manages the file of a pod on the node's
			// network too: the node's own entries and the pod's aliases.
			node, err := os.ReadFile(k.cfg.NodeHostsFile)
			if err != nil {
				return nil, fmt.Errorf("hosts file: %w", err)
			}
			content = hostNetworkHostsFile(node, pod.Spec.HostAliases)
		} else {
			content = hostsFile(pod, sb.IPs, k.cfg.ClusterDomain)
		}
		hosts := filepath.Join(k.cfg.PodDir, string(pod.UID), "etc-hosts")
		if err := os.MkdirAll(filepath.Dir(hosts), 0o755); err != nil {
			return nil, fmt.Errorf("hosts file: %w", err)
		}
		if err := os.WriteFile(hosts, []byte(content), 0o644); err != nil {
			return nil, fmt.Errorf("hosts file: %w", err)
		}
		out = append(out, &runtimeapi.Mount{ContainerPath: "/etc/hosts", HostPath: hosts})
	}
	return out, nil
}

func hasMountAt(c *v1.Container, path string) bool {
	for _, m := range c.VolumeMounts {
		if filepath.Clean(m.MountPath) == path {
			return true
		}
	}
	return false
}

func (k *Kubelet) terminationFile(pod *v1.Pod, c *v1.Container, attempt uint32) string {
	return filepath.Join(k.cfg.PodDir, string(pod.UID), "containers", c.Name, strconv.Itoa(int(attempt))+"-termination-log")
}

// hostsFile is the pod's /etc/hosts, as upstream's kubelet writes it.
func hostsFile(pod *v1.Pod, ips []string, clusterDomain string) string {
	var b strings.Builder
	b.WriteString("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")
	hostname, _ := podHostname(pod)
	for _, ip := range ips {
		if pod.Spec.Subdomain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s.%s.svc.%s\t%s\n", ip, hostname, pod.Spec.Subdomain, pod.Namespace, clusterDomain, hostname)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
		}
	}
	b.WriteString(hostAliasEntries(pod.Spec.HostAliases))
	return b.String()
}

// hostNetworkHostsFile is the /etc/hosts of a pod on the node's network:
// the node's file under upstream's header for that case, which differs
// from the other header so that tools can tell the two apart.
func hostNetworkHostsFile(node []byte, aliases []v1.HostAlias) string {
	return "# Kubernetes-managed hosts file (host network).\n" + string(node) + hostAliasEntries(aliases)
}

func hostAliasEntries(aliases []v1.HostAlias) string {
	if len(aliases) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
	return b.String()
}

// resources maps requests and limits to cgroup settings, as upstream.
func (k *Kubelet) resources(pod *v1.Pod, c *v1.Container) *runtimeapi.LinuxContainerResources {
	r := &runtimeapi.LinuxContainerResources{CpuPeriod: 100000}
	cpuReq := c.Resources.Requests.Cpu().MilliValue()
	cpuLim := c.Resources.Limits.Cpu().MilliValue()
	if cpuReq == 0 && cpuLim > 0 {
		cpuReq = cpuLim
	}
	r.CpuShares = max(cpuReq*1024/1000, 2)
	if cpuLim > 0 {
		r.CpuQuota = max(cpuLim*100000/1000, 1000)
	}
	if m := c.Resources.Limits.Memory().Value(); m > 0 {
		r.MemoryLimitInBytes = m
	}
	switch qos := qosOf(pod); qos {
	case v1.PodQOSGuaranteed:
		r.OomScoreAdj = -997
	case v1.PodQOSBestEffort:
		r.OomScoreAdj = 1000
	default:
		adj := int64(1000)
		if k.cfg.NodeMemory > 0 {
			adj = 1000 - (1000*c.Resources.Requests.Memory().Value())/k.cfg.NodeMemory
		}
		r.OomScoreAdj = min(max(adj, 2), 999)
	}
	return r
}

// Paths upstream's kubelet masks or makes read-only in unprivileged
// containers.
var (
	maskedPaths   = []string{"/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap"}
	readonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

func (k *Kubelet) securityContext(pod *v1.Pod, c *v1.Container) (*runtimeapi.LinuxContainerSecurityContext, string) {
	out := &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: namespaceOptions(pod)}
	psc := pod.Spec.SecurityContext
	if psc != nil {
		if psc.RunAsUser != nil {
			out.RunAsUser = &runtimeapi.Int64Value{Value: *psc.RunAsUser}
		}
		if psc.RunAsGroup != nil {
			out.RunAsGroup = &runtimeapi.Int64Value{Value: *psc.RunAsGroup}
		}
		out.SupplementalGroups = append(out.SupplementalGroups, psc.SupplementalGroups...)
		if psc.FSGroup != nil {
			out.SupplementalGroups = append(out.SupplementalGroups, *psc.FSGroup)
		}
	}
	sc := c.SecurityContext
	privileged := sc != nil && sc.Privileged != nil && *sc.Privileged
	if privileged && !k.cfg.AllowPrivileged {
		return nil, fmt.Sprintf("pod with UID %q specified privileged container, but is disallowed", pod.UID)
	}
	out.Privileged = privileged
	if sc != nil {
		if sc.RunAsUser != nil {
			out.RunAsUser = &runtimeapi.Int64Value{Value: *sc.RunAsUser}
		}
		if sc.RunAsGroup != nil {
			out.RunAsGroup = &runtimeapi.Int64Value{Value: *sc.RunAsGroup}
		}
		if sc.ReadOnlyRootFilesystem != nil {
			out.ReadonlyRootfs = *sc.ReadOnlyRootFilesystem
		}
		if sc.AllowPrivilegeEscalation != nil {
			out.NoNewPrivs = !*sc.AllowPrivilegeEscalation
		}
		if sc.Capabilities != nil {
			out.Capabilities = &runtimeapi.Capability{}
			for _, c := range sc.Capabilities.Add {
				out.Capabilities.AddCapabilities = append(out.Capabilities.AddCapabilities, string(c))
			}
			for _, c := range sc.Capabilities.Drop {
				out.Capabilities.DropCapabilities = append(out.Capabilities.DropCapabilities, string(c))
			}
		}
	}
	nonRoot := (psc != nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot) || (sc != nil && sc.RunAsNonRoot != nil && *sc.RunAsNonRoot)
	if nonRoot && out.RunAsUser != nil && out.RunAsUser.Value == 0 {
		return nil, "container's runAsUser breaks non-root policy (pod: \"" + pod.Name + "_" + pod.Namespace + "(" + string(pod.UID) + ")\", container: " + c.Name + ")"
	}
	if nonRoot && out.RunAsUser == nil {
		// Without an explicit user the image decides; the busybox and
		// pause images run as root, so refuse as upstream does for a
		// root image.
		return nil, "container has runAsNonRoot and image will run as root (pod: \"" + pod.Name + "_" + pod.Namespace + "(" + string(pod.UID) + ")\", container: " + c.Name + ")"
	}
	if !privileged {
		out.MaskedPaths, out.ReadonlyPaths = maskedPaths, readonlyPaths
	}
	return out, ""
}

func qosOf(pod *v1.Pod) v1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return qosClass(pod)
}

type envVar struct{ name, value string }

// envFor resolves a container's environment: envFrom first, then env in
// order, each value able to refer to earlier ones with $(NAME).
func (k *Kubelet) envFor(ctx context.Context, pod *v1.Pod, c *v1.Container, sb *sandbox) ([]envVar, string) {
	vals := map[string]string{}
	var order []string
	// $(NAME) may also name a service variable, as upstream.
	svcEnv := k.serviceEnvOf(pod)
	scope := maps.Clone(svcEnv)
	set := func(n, v string) {
		if _, ok := vals[n]; !ok {
			order = append(order, n)
		}
		vals[n] = v
		scope[n] = v
	}
	for _, from := range c.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			cm, err := k.cfg.Client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) && from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional {
					continue
				}
				return nil, fmt.Sprintf("configmap %q not found", from.ConfigMapRef.Name)
			}
			keys := sortedKeys(cm.Data)
			for _, key := range keys {
				set(from.Prefix+key, cm.Data[key])
			}
		case from.SecretRef != nil:
			s, err := k.cfg.Client.CoreV1().Secrets(pod.Namespace).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) && from.SecretRef.Optional != nil && *from.SecretRef.Optional {
					continue
				}
				return nil, fmt.Sprintf("secret %q not found", from.SecretRef.Name)
			}
			keys := make([]string, 0, len(s.Data))
			for key := range s.Data {
				keys = append(keys, key)
			}
			sort.Strings(keys)
			for _, key := range keys {
				set(from.Prefix+key, string(s.Data[key]))
			}
		}
	}
	podWithIPs := pod.DeepCopy()
	if len(k.cfg.HostIPs) > 0 {
		podWithIPs.Status.HostIP = k.cfg.HostIPs[0]
		podWithIPs.Status.HostIPs = nil
		for _, ip := range k.cfg.HostIPs {
			podWithIPs.Status.HostIPs = append(podWithIPs.Status.HostIPs, v1.HostIP{IP: ip})
		}
	}
	ips := sb.IPs
	if pod.Spec.HostNetwork {
		ips = k.cfg.HostIPs
	}
	podWithIPs.Status.PodIPs = nil
	for _, ip := range ips {
		podWithIPs.Status.PodIPs = append(podWithIPs.Status.PodIPs, v1.PodIP{IP: ip})
	}
	if len(ips) > 0 {
		podWithIPs.Status.PodIP = ips[0]
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, scope))
			continue
		}
		vf := e.ValueFrom
		switch {
		case vf.FieldRef != nil:
			v, err := fieldpath.ExtractFieldPath(podWithIPs, vf.FieldRef.FieldPath)
			if err != nil {
				return nil, err.Error()
			}
			set(e.Name, v)
		case vf.ResourceFieldRef != nil:
			target := c
			if vf.ResourceFieldRef.ContainerName != "" {
				if t := findContainer(pod, vf.ResourceFieldRef.ContainerName); t != nil {
					target = t
				}
			}
			v, err := fieldpath.ExtractResourceValue(vf.ResourceFieldRef, target, k.cfg.Allocatable)
			if err != nil {
				return nil, err.Error()
			}
			set(e.Name, v)
		case vf.ConfigMapKeyRef != nil:
			ref := vf.ConfigMapKeyRef
			optional := ref.Optional != nil && *ref.Optional
			cm, err := k.cfg.Client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				if optional && apierrors.IsNotFound(err) {
					continue
				}
				return nil, fmt.Sprintf("configmap %q not found", ref.Name)
			}
			v, ok := cm.Data[ref.Key]
			if !ok {
				if b, ok2 := cm.BinaryData[ref.Key]; ok2 {
					v, ok = string(b), true
				}
			}
			if !ok {
				if optional {
					continue
				}
				return nil, fmt.Sprintf("couldn't find key %s in ConfigMap %s/%s", ref.Key, pod.Namespace, ref.Name)
			}
			set(e.Name, v)
		case vf.SecretKeyRef != nil:
			ref := vf.SecretKeyRef
			optional := ref.Optional != nil && *ref.Optional
			s, err := k.cfg.Client.CoreV1().Secrets(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				if optional && apierrors.IsNotFound(err) {
					continue
				}
				return nil, fmt.Sprintf("secret %q not found", ref.Name)
			}
			v, ok := s.Data[ref.Key]
			if !ok {
				if optional {
					continue
				}
				return nil, fmt.Sprintf("couldn't find key %s in Secret %s/%s", ref.Key, pod.Namespace, ref.Name)
			}
			set(e.Name, string(v))
		}
	}
	out := make([]envVar, 0, len(order)+len(svcEnv))
	for _, n := range order {
		out = append(out, envVar{n, vals[n]})
	}
	return withServiceEnv(out, svcEnv), ""
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// runHook runs a lifecycle handler (exec, httpGet, tcpSocket or sleep) and
// returns upstream's message on failure.
func (k *Kubelet) runHook(ctx context.Context, pod *v1.Pod, c *v1.Container, id string, h *v1.LifecycleHandler) (string, error) {
	switch {
	case h.Exec != nil:
		out, code, err := (prober.CRIExec{Runtime: k.rt}).ExecSync(ctx, id, h.Exec.Command, 0)
		if err != nil {
			return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q", h.Exec.Command, c.Name, pod.Name+"_"+pod.Namespace+"("+string(pod.UID)+")", err, string(out)), err
		}
		if code != 0 {
			err := fmt.Errorf("command '%s' exited with %d: %s", strings.Join(h.Exec.Command, " "), code, out)
			return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q", h.Exec.Command, c.Name, pod.Name+"_"+pod.Namespace+"("+string(pod.UID)+")", err, string(out)), err
		}
		return "", nil
	case h.HTTPGet != nil:
		host := h.HTTPGet.Host
		if host == "" {
			host = k.podIP(pod)
		}
		ok, msg := prober.HTTPGet(ctx, h.HTTPGet, c, host)
		if !ok {
			return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %s", h.HTTPGet.Path, c.Name, pod.Name+"_"+pod.Namespace+"("+string(pod.UID)+")", msg), fmt.Errorf("%s", msg)
		}
		return "", nil
	case h.TCPSocket != nil:
		port, err := prober.ResolvePort(h.TCPSocket.Port, c)
		if err != nil {
			return err.Error(), err
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(k.podIP(pod), strconv.Itoa(port)))
		if err != nil {
			return err.Error(), err
		}
		conn.Close()
		return "", nil
	case h.Sleep != nil:
		select {
		case <-time.After(time.Duration(h.Sleep.Seconds) * time.Second):
		case <-ctx.Done():
		}
		return "", nil
	}
	return "", nil
}

func (k *Kubelet) podIP(pod *v1.Pod) string {
	if pod.Spec.HostNetwork && len(k.cfg.HostIPs) > 0 {
		return k.cfg.HostIPs[0]
	}
	if sb := readySandbox(k.state.get(pod.UID)); sb != nil && len(sb.IPs) > 0 {
		return sb.IPs[0]
	}
	return pod.Status.PodIP
}
