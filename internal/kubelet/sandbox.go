package kubelet

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/kubelet/cgroups"
)

// createSandbox runs the pod's sandbox: its namespaces, network and
// resolver, as upstream's kubelet configures them.
func (k *Kubelet) createSandbox(ctx context.Context, pod *v1.Pod, attempt uint32) (string, error) {
	if err := os.MkdirAll(k.podLogDir(pod), 0o755); err != nil {
		return "", fmt.Errorf("create log directory: %w", err)
	}
	cfg, err := k.sandboxConfig(pod, attempt)
	if err != nil {
		return "", err
	}
	if k.cfg.Cgroups != nil {
		if _, err := k.cfg.Cgroups.EnsurePod(pod, k.activePods()); err != nil {
			return "", fmt.Errorf("create pod cgroup: %w", err)
		}
	}
	handler, err := k.handlers.lookup(ctx, pod.Spec.RuntimeClassName)
	if err != nil {
		return "", err
	}
	resp, err := k.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg, RuntimeHandler: handler})
	if err != nil {
		return "", err
	}
	return resp.PodSandboxId, nil
}

// networkReady tells Config.PodNetworkReady of a new sandbox's address,
// before any of its containers starts. A hook that fails, or takes
// longer than networkReadyTimeout, is logged and the pod goes on: a
// node's network policies missing a pod for a moment must not stop it.
func (k *Kubelet) networkReady(ctx context.Context, pod *v1.Pod, sb *sandbox) {
	if k.cfg.PodNetworkReady == nil || pod.Spec.HostNetwork || len(sb.IPs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, networkReadyTimeout)
	defer cancel()
	if err := k.cfg.PodNetworkReady(ctx, pod, sb.IPs[0]); err != nil {
		k.log.Warn("pod network ready hook", "pod", podKey(pod), "ip", sb.IPs[0], "err", err)
	}
}

const networkReadyTimeout = 10 * time.Second

// sandboxConfig is the pod's sandbox configuration.
func (k *Kubelet) sandboxConfig(pod *v1.Pod, attempt uint32) (*runtimeapi.PodSandboxConfig, error) {
	logDir := k.podLogDir(pod)
	// A pod on the node's network shares the node's UTS namespace too, so
	// it gets no hostname of its own (the runtime refuses one).
	hostname := ""
	if !pod.Spec.HostNetwork {
		h, err := podHostname(pod)
		if err != nil {
			return nil, err
		}
		hostname = h
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt},
		Hostname:     hostname,
		LogDirectory: logDir,
		Labels:       map[string]string{labelPodName: pod.Name, labelPodNamespace: pod.Namespace, labelPodUID: string(pod.UID)},
		Annotations:  map[string]string{annGracePeriod: strconv.FormatInt(gracePeriod(pod), 10)},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: cgroups.Path(pod),
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: namespaceOptions(pod),
				// The runtime lets a container be privileged only in a
				// privileged sandbox.
				Privileged: k.cfg.AllowPrivileged && hasPrivilegedContainer(pod),
			},
			Sysctls: map[string]string{},
		},
	}
	for k, v := range pod.Labels {
		if _, reserved := cfg.Labels[k]; !reserved {
			cfg.Labels[k] = v
		}
	}
	for k, v := range pod.Annotations {
		cfg.Annotations[k] = v
	}
	if sc := pod.Spec.SecurityContext; sc != nil {
		for _, s := range sc.Sysctls {
			cfg.Linux.Sysctls[s.Name] = s.Value
		}
		if sc.RunAsUser != nil {
			cfg.Linux.SecurityContext.RunAsUser = &runtimeapi.Int64Value{Value: *sc.RunAsUser}
		}
		if sc.RunAsGroup != nil {
			cfg.Linux.SecurityContext.RunAsGroup = &runtimeapi.Int64Value{Value: *sc.RunAsGroup}
		}
		cfg.Linux.SecurityContext.SupplementalGroups = sc.SupplementalGroups
	}
	dns, err := k.dnsConfig(pod)
	if err != nil {
		return nil, err
	}
	cfg.DnsConfig = dns
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort == 0 {
				continue
			}
			cfg.PortMappings = append(cfg.PortMappings, &runtimeapi.PortMapping{
				Protocol: protocol(p.Protocol), ContainerPort: p.ContainerPort, HostPort: p.HostPort, HostIp: p.HostIP,
			})
		}
	}
	return cfg, nil
}

func (k *Kubelet) podLogDir(pod *v1.Pod) string {
	return filepath.Join(k.cfg.LogDir, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}

func protocol(p v1.Protocol) runtimeapi.Protocol {
	switch p {
	case v1.ProtocolUDP:
		return runtimeapi.Protocol_UDP
	case v1.ProtocolSCTP:
		return runtimeapi.Protocol_SCTP
	}
	return runtimeapi.Protocol_TCP
}

func namespaceOptions(pod *v1.Pod) *runtimeapi.NamespaceOption {
	o := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
	if pod.Spec.HostNetwork {
		o.Network = runtimeapi.NamespaceMode_NODE
	}
	if pod.Spec.HostPID {
		o.Pid = runtimeapi.NamespaceMode_NODE
	} else if pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace {
		o.Pid = runtimeapi.NamespaceMode_POD
	}
	if pod.Spec.HostIPC {
		o.Ipc = runtimeapi.NamespaceMode_NODE
	}
	return o
}

// hasPrivilegedContainer reports whether any container of the pod asks to
// be privileged.
func hasPrivilegedContainer(pod *v1.Pod) bool {
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
				return true
			}
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
			return true
		}
	}
	return false
}

// podHostname is spec.hostname or the pod's name, cut to 63 characters as
// upstream does.
func podHostname(pod *v1.Pod) (string, error) {
	h := pod.Name
	if pod.Spec.Hostname != "" {
		h = pod.Spec.Hostname
	}
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h, nil
}

// dnsConfig is the pod's resolver configuration for its dnsPolicy.
func (k *Kubelet) dnsConfig(pod *v1.Pod) (*runtimeapi.DNSConfig, error) {
	host := parseResolvConf(k.cfg.ResolvConf)
	var out *runtimeapi.DNSConfig
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = v1.DNSClusterFirst
	}
	// A pod on the node's network resolves as the node does unless it
	// asks for the cluster's DNS with ClusterFirstWithHostNet.
	if policy == v1.DNSClusterFirst && pod.Spec.HostNetwork {
		policy = v1.DNSDefault
	}
	switch {
	case policy == v1.DNSNone:
		out = &runtimeapi.DNSConfig{}
	case (policy == v1.DNSClusterFirst || policy == v1.DNSClusterFirstWithHostNet) && len(k.cfg.ClusterDNS) > 0:
		d := k.cfg.ClusterDomain
		out = &runtimeapi.DNSConfig{
			Servers:  k.cfg.ClusterDNS,
			Searches: append([]string{pod.Namespace + ".svc." + d, "svc." + d, d}, host.Searches...),
			Options:  []string{"ndots:5"},
		}
	default:
		// Default, or ClusterFirst without a cluster DNS: the node's own
		// resolver, as upstream falls back to.
		out = host
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		out.Servers = append(out.Servers, dc.Nameservers...)
		out.Searches = append(out.Searches, dc.Searches...)
		for _, o := range dc.Options {
			s := o.Name
			if o.Value != nil {
				s += ":" + *o.Value
			}
			out.Options = append(out.Options, s)
		}
	}
	if len(out.Searches) > 32 {
		out.Searches = out.Searches[:32]
	}
	return out, nil
}

func parseResolvConf(path string) *runtimeapi.DNSConfig {
	out := &runtimeapi.DNSConfig{}
	if path == "" {
		return out
	}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch fields[0] {
		case "nameserver":
			out.Servers = append(out.Servers, fields[1])
		case "search":
			out.Searches = fields[1:]
		case "options":
			out.Options = fields[1:]
		}
	}
	return out
}
