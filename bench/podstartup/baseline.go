package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/imagebuild"
)

// criTimes is one pod's start through CRI alone.
type criTimes struct {
	sandbox, create, start, exec time.Duration
}

func (t criTimes) total() time.Duration { return t.sandbox + t.create + t.start }

// criBaseline does the kubelet's work for n pods straight through CRI, all
// at once, against the node's containerd: RunPodSandbox, CreateContainer,
// StartContainer, then one ExecSync of `true` (the readiness probe). The
// sandboxes carry no pod UID, which makes the running kubelet leave them
// alone; they are removed before it returns.
func criBaseline(ctx context.Context, c *cluster, n int) ([]criTimes, error) {
	out := make([]criTimes, n)
	ids := make([]string, n)
	errs := make([]error, n)
	dns := hostDNS()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("cri-%02d", i)
			logDir := filepath.Join(c.dir, "cri-logs", name)
			if err := os.MkdirAll(logDir, 0o755); err != nil {
				errs[i] = err
				return
			}
			ns := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
			cfg := &runtimeapi.PodSandboxConfig{
				Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "bench-cri"},
				Hostname:     name,
				LogDirectory: logDir,
				DnsConfig:    dns,
				Linux: &runtimeapi.LinuxPodSandboxConfig{
					SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: ns},
				},
			}
			<-start
			t0 := time.Now()
			sb, err := c.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
			if err != nil {
				errs[i] = fmt.Errorf("run sandbox %s: %w", name, err)
				return
			}
			ids[i] = sb.PodSandboxId
			t1 := time.Now()
			ctr, err := c.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
				PodSandboxId: sb.PodSandboxId, SandboxConfig: cfg,
				Config: &runtimeapi.ContainerConfig{
					Metadata: &runtimeapi.ContainerMetadata{Name: "main"},
					Image:    &runtimeapi.ImageSpec{Image: imagebuild.BusyboxRef},
					Command:  []string{"sleep", "3600"},
					LogPath:  "main/0.log",
					Linux: &runtimeapi.LinuxContainerConfig{
						SecurityContext: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: ns},
					},
				},
			})
			if err != nil {
				errs[i] = fmt.Errorf("create container in %s: %w", name, err)
				return
			}
			t2 := time.Now()
			if _, err := c.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: ctr.ContainerId}); err != nil {
				errs[i] = fmt.Errorf("start container in %s: %w", name, err)
				return
			}
			t3 := time.Now()
			if _, err := c.rt.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: ctr.ContainerId, Cmd: []string{"true"}, Timeout: 10}); err != nil {
				errs[i] = fmt.Errorf("exec in %s: %w", name, err)
				return
			}
			out[i] = criTimes{sandbox: t1.Sub(t0), create: t2.Sub(t1), start: t3.Sub(t2), exec: time.Since(t3)}
		}()
	}
	close(start)
	wg.Wait()
	cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, id := range ids {
		if id == "" {
			continue
		}
		_, _ = c.rt.StopPodSandbox(cctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id})
		_, _ = c.rt.RemovePodSandbox(cctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// hostDNS is the host's resolver, which the kubelet also gives pods when
// no cluster DNS is configured: containerd writes a resolv.conf either way.
func hostDNS() *runtimeapi.DNSConfig {
	b, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		return nil
	}
	dns := &runtimeapi.DNSConfig{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "nameserver" {
			dns.Servers = append(dns.Servers, f[1])
		}
		if len(f) >= 2 && f[0] == "search" {
			dns.Searches = f[1:]
		}
	}
	return dns
}
