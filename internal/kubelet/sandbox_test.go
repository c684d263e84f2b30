package kubelet

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func testKubelet(t *testing.T, cfg Config) *Kubelet {
	t.Helper()
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver 192.0.2.53\nsearch example.org\noptions edns0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.ResolvConf, cfg.LogDir, cfg.PodDir = resolv, filepath.Join(dir, "logs"), filepath.Join(dir, "pods")
	if cfg.ClusterDomain == "" {
		cfg.ClusterDomain = "cluster.local"
	}
	return &Kubelet{cfg: cfg}
}

func sandboxPod(mutate func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u1"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "busybox"}}},
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

// A pod on the node's network shares the node's network and UTS
// namespaces: the sandbox asks for no hostname (the runtime refuses one
// without a UTS namespace of its own), and the pod resolves names as the
// node does unless it asks for the cluster's DNS.
func TestSandboxConfigHostNetwork(t *testing.T) {
	k := testKubelet(t, Config{ClusterDNS: []string{"10.43.0.10"}})
	for _, tc := range []struct {
		name         string
		pod          *v1.Pod
		wantHostname string
		wantNetwork  runtimeapi.NamespaceMode
		wantServers  []string
	}{
		{"pod network", sandboxPod(nil), "web", runtimeapi.NamespaceMode_POD, []string{"10.43.0.10"}},
		{"host network", sandboxPod(func(p *v1.Pod) { p.Spec.HostNetwork = true }), "", runtimeapi.NamespaceMode_NODE, []string{"192.0.2.53"}},
		{"host network with cluster DNS", sandboxPod(func(p *v1.Pod) {
			p.Spec.HostNetwork, p.Spec.DNSPolicy = true, v1.DNSClusterFirstWithHostNet
		}), "", runtimeapi.NamespaceMode_NODE, []string{"10.43.0.10"}},
		{"host network, hostname asked", sandboxPod(func(p *v1.Pod) { p.Spec.HostNetwork, p.Spec.Hostname = true, "other" }), "", runtimeapi.NamespaceMode_NODE, []string{"192.0.2.53"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := k.sandboxConfig(tc.pod, 0)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Hostname != tc.wantHostname {
				t.Errorf("hostname %q, want %q", cfg.Hostname, tc.wantHostname)
			}
			if got := cfg.Linux.SecurityContext.NamespaceOptions.Network; got != tc.wantNetwork {
				t.Errorf("network namespace %v, want %v", got, tc.wantNetwork)
			}
			if cfg.DnsConfig == nil || !slices.Equal(cfg.DnsConfig.Servers, tc.wantServers) {
				t.Errorf("DNS %+v, want servers %v", cfg.DnsConfig, tc.wantServers)
			}
		})
	}
}

// The runtime refuses a privileged container in a sandbox that is not
// privileged, so the sandbox is privileged when any container asks to be,
// and only when the node allows it (otherwise the container is refused
// with upstream's message before it reaches the runtime).
func TestSandboxPrivileged(t *testing.T) {
	yes, no := true, false
	priv := func(c *v1.Container, b *bool) { c.SecurityContext = &v1.SecurityContext{Privileged: b} }
	for _, tc := range []struct {
		name  string
		allow bool
		pod   *v1.Pod
		want  bool
	}{
		{"none", true, sandboxPod(nil), false},
		{"explicitly not", true, sandboxPod(func(p *v1.Pod) { priv(&p.Spec.Containers[0], &no) }), false},
		{"container", true, sandboxPod(func(p *v1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "priv"})
			priv(&p.Spec.Containers[1], &yes)
		}), true},
		{"init container", true, sandboxPod(func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "setup"}}
			priv(&p.Spec.InitContainers[0], &yes)
		}), true},
		{"not allowed", false, sandboxPod(func(p *v1.Pod) { priv(&p.Spec.Containers[0], &yes) }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := testKubelet(t, Config{AllowPrivileged: tc.allow})
			cfg, err := k.sandboxConfig(tc.pod, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Linux.SecurityContext.Privileged; got != tc.want {
				t.Errorf("sandbox privileged %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPrivilegedRefusedWhenNotAllowed(t *testing.T) {
	yes := true
	pod := sandboxPod(func(p *v1.Pod) { p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Privileged: &yes} })
	_, msg := testKubelet(t, Config{}).securityContext(pod, &pod.Spec.Containers[0])
	if want := `pod with UID "u1" specified privileged container, but is disallowed`; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
	sc, msg := testKubelet(t, Config{AllowPrivileged: true}).securityContext(pod, &pod.Spec.Containers[0])
	if msg != "" || !sc.Privileged || sc.MaskedPaths != nil {
		t.Errorf("allowed: %+v %q", sc, msg)
	}
}

func TestHostsFiles(t *testing.T) {
	aliases := []v1.HostAlias{{IP: "192.0.2.7", Hostnames: []string{"a.example", "b.example"}}}
	pod := sandboxPod(func(p *v1.Pod) {
		p.Spec.Hostname, p.Spec.Subdomain, p.Spec.HostAliases = "web-0", "web", aliases
	})
	got := hostsFile(pod, []string{"10.42.0.5"}, "cluster.local")
	want := "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n" +
		"10.42.0.5\tweb-0.web.shop.svc.cluster.local\tweb-0\n" +
		"\n# Entries added by HostAliases.\n192.0.2.7\ta.example\tb.example\n"
	if got != want {
		t.Errorf("pod network:\n%s\nwant:\n%s", got, want)
	}
	// Upstream's conformance spec tells a pod-network file from a
	// host-network one by the first header.
	got = hostNetworkHostsFile([]byte("127.0.0.1 localhost\n192.0.2.1 node-1\n"), aliases)
	want = "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n192.0.2.1 node-1\n" +
		"\n# Entries added by HostAliases.\n192.0.2.7\ta.example\tb.example\n"
	if got != want {
		t.Errorf("host network:\n%s\nwant:\n%s", got, want)
	}
}
